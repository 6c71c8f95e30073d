// The header's bell: the person's unread count, live over /ws/inbox/ (the server sends it
// on connect and whenever the inbox changes). The link's name carries the count, and a
// polite live region says when news arrives, so a screen reader hears it too.

import { keepOpen } from "./socket.js";

const bell = document.querySelector("a.bell");
const count = bell?.querySelector(".bell-count");
const status = document.getElementById("bell-status");
let shown = null;

function show(unread) {
  bell.setAttribute("aria-label", unread ? `Notifications, ${unread} unread` : "Notifications, none unread");
  bell.dataset.unread = String(unread);
  count.textContent = String(unread);
  count.hidden = unread === 0;
  if (shown !== null && unread > shown && status) {
    status.textContent = unread === 1 ? "1 unread notification" : `${unread} unread notifications`;
  }
  shown = unread;
}

if (bell) {
  keepOpen(bell.dataset.socket, {
    onMessage: (message) => message.type === "inbox.unread" && show(message.unread),
  });
}
