// The activity feed page: a board's or a workspace's history and comments, newest first,
// read a page at a time from the API (GET .../activity/, a cursor per page), filtered by what
// happened, who did it and whom it mentions. It follows each of its boards' live messages:
// any change reads the newest page again and puts what is new on top.

import { get } from "./api.js";
import { markdownFragment } from "./markdown.js";
import { keepOpen, LIVE_TEXT } from "../site/socket.js";
import { eventText } from "./timeline.js";

const REFRESH_MS = 300; // live messages in a burst read the feed once

const root = document.querySelector('[data-role="activity"]');
const part = (role) => root.querySelector(`[data-role="${role}"]`);
const data = JSON.parse(document.getElementById("feed-data").textContent);
const people = new Map(JSON.parse(document.getElementById("people").textContent).map((p) => [p.id, p]));
const boardIds = Object.keys(data.boards);
const list = part("feed");
const more = root.querySelector('[data-action="more"]');
let next = null; // the next (older) page's URL
let reading = null; // the read under way, so a newer one replaces it
let refreshTimer = null;

function query() {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(part("feed-filter"))) if (value) params.set(name, value);
  return params;
}

function itemOf(entry) {
  const item = document.getElementById("feed-item-template").content.cloneNode(true).firstElementChild;
  const role = (name) => item.querySelector(`[data-role="${name}"]`);
  item.dataset.id = entry.id;
  item.dataset.kind = entry.kind;
  role("who").textContent = entry.actor ?? "Automation";
  if (entry.comment) {
    role("what").textContent = "commented on";
    role("body").replaceChildren(markdownFragment(entry.comment.body));
    role("body").hidden = false;
  } else {
    const names = { [entry.event.from_step_id]: entry.event.from_step_name, [entry.event.to_step_id]: entry.event.to_step_name };
    const stepName = (id) => (id ? names[id] ?? "a removed step" : "");
    const personName = (id) => people.get(id)?.name ?? "someone who left";
    const what = eventText({ ...entry.event, kind: entry.kind }, stepName, personName);
    role("what").textContent = `${what.charAt(0).toLowerCase()}${what.slice(1)}:`;
  }
  const task = role("task");
  task.textContent = entry.task_title ?? "a deleted task";
  if (entry.kind !== "deleted") task.href = `/workflows/${entry.workflow_id}/tasks/${entry.task_id}/`;
  if (boardIds.length > 1) role("board").textContent = ` on ${data.boards[entry.workflow_id] ?? "a board"}`;
  const when = role("when");
  when.dateTime = entry.at;
  when.textContent = new Date(entry.at).toLocaleString();
  return item;
}

/** Read a page; the list is replaced (`fresh`), or extended with older items. */
async function read(url, { fresh }) {
  const mine = (reading = Symbol("read"));
  let page;
  try {
    page = await get(url);
  } catch {
    if (mine === reading) showAlert("The activity could not be loaded. It is tried again on the next change.");
    return;
  }
  if (mine !== reading) return; // a newer read (another filter) took over
  part("alert").hidden = true;
  if (fresh) {
    list.replaceChildren(...page.results.map(itemOf));
  } else { // an older page: what arrived live meanwhile may have pushed some of it down already
    const known = new Set([...list.children].map((li) => li.dataset.id));
    list.append(...page.results.filter((entry) => !known.has(entry.id)).map(itemOf));
  }
  next = page.next;
  more.hidden = !next;
  part("empty").hidden = list.children.length > 0;
}

/** A change happened: read the newest page and put what is new on top (or start over when
    more happened than one page holds). */
async function refresh() {
  const url = `${data.url}?${query()}`;
  let page;
  try {
    page = await get(url);
  } catch {
    return; // the next change tries again
  }
  if (url !== `${data.url}?${query()}`) return; // the filter changed meanwhile: its own read shows it
  const known = new Set([...list.children].map((li) => li.dataset.id));
  const unseen = [];
  for (const entry of page.results) {
    if (known.has(entry.id)) break;
    unseen.push(entry);
  }
  if (unseen.length === page.results.length && page.results.length && list.children.length) {
    list.replaceChildren(...page.results.map(itemOf));
    next = page.next;
    more.hidden = !next;
  } else {
    list.prepend(...unseen.map(itemOf));
  }
  part("empty").hidden = list.children.length > 0;
  if (unseen.length) part("status").textContent = unseen.length === 1 ? "1 new item." : `${unseen.length} new items.`;
}

function showAlert(text) {
  part("alert").textContent = text;
  part("alert").hidden = false;
}

/** Each board's live socket; the badge says live when all are. */
const states = new Map();
function showLive() {
  const values = [...states.values()].filter((s) => s !== "refused"); // a board this person lost
  const state = !values.length ? "refused"
    : values.every((s) => s === "live") ? "live" : values.includes("offline") ? "offline" : "connecting";
  part("live").dataset.state = state;
  part("live").textContent = LIVE_TEXT[state];
}

function follow(boardId) {
  keepOpen(`/ws/workflows/${boardId}/`, {
    onMessage: () => { // the snapshot on (re)connect too: what was missed
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(refresh, REFRESH_MS);
    },
    onState: (state) => {
      states.set(boardId, state);
      showLive();
    },
  });
}

part("feed-filter").addEventListener("change", () => read(`${data.url}?${query()}`, { fresh: true }));
part("feed-filter").addEventListener("submit", (event) => event.preventDefault());
more.addEventListener("click", () => next && read(next, { fresh: false }));

read(`${data.url}?${query()}`, { fresh: true });
for (const id of boardIds) follow(id);
if (!boardIds.length) {
  part("live").hidden = true;
}
