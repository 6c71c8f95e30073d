// The header's bell: the person's unread count, live over /ws/inbox/ (the server sends it
// on connect and whenever the inbox changes). The link's name carries the count, and a
// polite live region says when news arrives, so a screen reader hears it too.
(function () {
  "use strict";
  var bell = document.querySelector("a.bell");
  if (!bell || !("WebSocket" in window)) return;
  var count = bell.querySelector(".bell-count");
  var status = document.getElementById("bell-status");
  var shown = null;
  var wait = 1000;

  function show(unread) {
    var name = unread ? "Notifications, " + unread + " unread" : "Notifications, none unread";
    bell.setAttribute("aria-label", name);
    bell.dataset.unread = String(unread);
    count.textContent = String(unread);
    count.hidden = unread === 0;
    if (shown !== null && unread > shown && status) {
      status.textContent = unread === 1 ? "1 unread notification" : unread + " unread notifications";
    }
    shown = unread;
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + bell.dataset.socket);
    socket.onopen = function () { wait = 1000; };
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type === "inbox.unread") show(message.unread);
    };
    socket.onclose = function (event) {
      if (event.code === 4403) return; // signed out: nothing to count
      setTimeout(connect, wait);
      wait = Math.min(wait * 2, 30000);
    };
  }
  connect();
})();
