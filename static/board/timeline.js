// The task detail's timeline: the task's comments and its history as one list, oldest first,
// the comment box under the newest. A comment's Markdown goes through the pages' one
// sanitizer (markdown.js); its author may edit it, its author or an owner delete it (the
// server decides; the buttons only show where it would agree).

import { refusalText, send } from "./api.js";
import { focusPlace, restoreFocus } from "./focus.js";
import { markdownFragment } from "./markdown.js";
import { MentionBox } from "./mentions.js";

export const CLASS_NAMES = { standard: "Standard", expedite: "Expedite" };
const BADGES = { forced: "Forced admission", expedited: "Expedited" };

/** What a history event did, in words, with the steps and people by name. */
export function eventText(event, stepName, personName) {
  const from = stepName(event.from_step_id);
  const to = stepName(event.to_step_id);
  switch (event.kind) {
    case "created": return `Created in ${to}`;
    case "moved": return from === to ? `Reordered in ${to}` : `Moved from ${from} to ${to}`;
    case "pulled": return `Pulled from ${from} into ${to}`;
    case "promoted": return `Promoted from the queue into ${to}`;
    case "queued": return `Queued for ${to}: the step was full`;
    case "archived": return `Archived from ${from}`;
    case "restored": return `Restored to ${to}`;
    case "deleted": return "Deleted";
    case "forced": return `Forced into ${to} over its WIP limit`;
    case "expedited": return `Expedited into ${to}`;
    case "assigned": return event.detail?.assignee_id ? `Assigned to ${personName(event.detail.assignee_id)}` : "Unassigned";
    case "classified": return `Class of service: ${CLASS_NAMES[event.detail?.class_of_service] ?? "changed"}`;
    case "labeled": return "Labels changed";
    case "due": return event.detail?.due_at ? "Due date set" : "Due date removed";
    case "blocked": return "Blocked";
    case "unblocked": return "Unblocked";
    case "linked": return "A blocker was linked";
    case "unlinked": return "A blocker's link was removed";
    case "imported": return `Imported into ${to}; its earlier history was not in the backup`;
    default: return event.kind;
  }
}

/** A history event as a timeline item (the `history-item-template`). */
export function eventItem(event, what) {
  const item = document.getElementById("history-item-template").content.cloneNode(true).firstElementChild;
  const part = (role) => item.querySelector(`[data-role="${role}"]`);
  item.dataset.kind = event.kind;
  const badge = BADGES[event.kind];
  if (badge) {
    item.classList.add(`is-${event.kind}`);
    part("badge").textContent = badge;
    part("badge").hidden = false;
  }
  part("what").textContent = what;
  part("who").textContent = event.actor ? `by ${event.actor}` : "by automation";
  showTime(part("when"), event.at);
  if (event.reason) {
    part("why").textContent = `Why: ${event.reason}`;
    part("why").hidden = false;
  }
  return item;
}

/** A comment as a timeline item (the `comment-item-template`): its author, when, and its
    Markdown, sanitized. */
export function commentItem(comment) {
  const item = document.getElementById("comment-item-template").content.cloneNode(true).firstElementChild;
  const part = (role) => item.querySelector(`[data-role="${role}"]`);
  item.dataset.commentId = comment.id;
  part("author").textContent = comment.author ?? "someone who left";
  showTime(part("when"), comment.created_at);
  part("edited").hidden = !comment.edited_at;
  part("body").replaceChildren(markdownFragment(comment.body));
  return item;
}

function showTime(element, iso) {
  element.dateTime = iso;
  element.textContent = new Date(iso).toLocaleString();
}

export class Timeline {
  #comments = new Map(); // id -> the comment as last read

  /** `current()` is the open task's id; `showAlert` and `status` speak for the dialog. */
  constructor({ dialog, model, people, current, showAlert, status }) {
    Object.assign(this, { model, people, current, showAlert, status });
    this.list = dialog.querySelector('[data-role="history"]');
    this.form = dialog.querySelector('[data-role="comment-form"]'); // none for viewers
    this.me = dialog.dataset.username;
    this.isOwner = dialog.dataset.owner === "true";
    if (this.form) {
      const box = this.form.elements.body;
      this.mentions = new MentionBox(box, document.getElementById(box.getAttribute("aria-controls")), () => people.everyone());
      this.form.addEventListener("submit", (event) => {
        event.preventDefault();
        this.#post();
      });
    }
    this.list.addEventListener("click", (event) => this.#click(event));
  }

  /** Read the task's history and comments and show them, oldest first. An edit in progress
      keeps its item (and the text being written). */
  async load(taskId) {
    let events, comments;
    try {
      [events, comments] = await Promise.all([
        send("GET", `/api/v1/tasks/${taskId}/events/?page_size=1000`),
        send("GET", `/api/v1/tasks/${taskId}/comments/?page_size=1000`),
      ]);
    } catch {
      return; // the next change loads it again
    }
    if (!events.ok || !comments.ok || this.current() !== taskId) return;
    const stepName = (stepId) => (stepId ? this.model.step(stepId)?.name ?? "a removed step" : "");
    const personName = (userId) => this.people.get(userId)?.name ?? "someone who left";
    const editing = new Map([...this.list.querySelectorAll(".comment.is-editing")].map((li) => [li.dataset.commentId, li]));
    this.#comments = new Map(comments.data.results.map((c) => [c.id, c]));
    const entries = [
      ...events.data.results.map((event) => [event.at, 0, () => eventItem(event, eventText(event, stepName, personName))]),
      ...comments.data.results.map((comment) => [comment.created_at, 1, () => editing.get(comment.id) ?? this.#commentItem(comment)]),
    ];
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    const place = focusPlace(this.list, "data-comment-id");
    this.list.replaceChildren(...entries.map(([, , make]) => make()));
    restoreFocus(this.list, "data-comment-id", place);
  }

  #commentItem(comment) {
    const item = commentItem(comment);
    const mine = comment.author === this.me;
    const edit = item.querySelector('[data-action="edit-comment"]');
    const remove = item.querySelector('[data-action="delete-comment"]');
    if (edit) edit.hidden = !mine;
    if (remove) remove.hidden = !(mine || this.isOwner);
    return item;
  }

  async #post() {
    const box = this.form.elements.body;
    const taskId = this.current();
    const result = await this.#write("POST", `/api/v1/tasks/${taskId}/comments/`, { body: box.value }, this.form);
    if (!result) return;
    box.value = "";
    this.status("Comment added.");
    await this.load(taskId);
    box.focus();
  }

  async #click(event) {
    const button = event.target.closest("button[data-action]");
    const item = button?.closest(".comment");
    if (!item) return;
    const id = item.dataset.commentId;
    const part = (role) => item.querySelector(`[data-role="${role}"]`);
    const action = button.dataset.action;
    if (action === "edit-comment") {
      item.classList.add("is-editing");
      const form = part("edit-form");
      form.querySelector("textarea").value = this.#comments.get(id)?.body ?? "";
      form.hidden = false;
      part("body").hidden = true;
      form.querySelector("textarea").focus();
    } else if (action === "cancel-edit") {
      this.#endEdit(item);
      item.querySelector('[data-action="edit-comment"]').focus();
    } else if (action === "save-comment") {
      const form = part("edit-form");
      const result = await this.#write("PATCH", `/api/v1/comments/${id}/`, { body: form.querySelector("textarea").value }, form);
      if (!result) return;
      this.#comments.set(id, result.data);
      const fresh = this.#commentItem(result.data);
      item.replaceWith(fresh);
      this.status("Comment saved.");
      fresh.querySelector('[data-action="edit-comment"]').focus();
    } else if (action === "delete-comment") {
      part("confirm").hidden = false;
      item.querySelector('[data-action="confirm-delete-comment"]').focus();
    } else if (action === "keep-comment") {
      part("confirm").hidden = true;
      item.querySelector('[data-action="delete-comment"]').focus();
    } else if (action === "confirm-delete-comment") {
      const result = await this.#write("DELETE", `/api/v1/comments/${id}/`);
      if (!result) return;
      item.remove();
      this.status("Comment deleted.");
      this.form?.elements.body.focus();
    }
  }

  #endEdit(item) {
    item.classList.remove("is-editing");
    item.querySelector('[data-role="edit-form"]').hidden = true;
    item.querySelector('[data-role="body"]').hidden = false;
  }

  /** A write: its result when the server took it; else the refusal, shown on `form`'s field
      when it names one, and null. */
  async #write(method, url, body, form) {
    for (const error of form?.querySelectorAll("[data-error-for]") ?? []) error.textContent = "";
    let result;
    try {
      result = await send(method, url, body);
    } catch {
      this.showAlert("Network error: nothing was saved. Check your connection and try again.");
      return null;
    }
    if (result.ok) return result;
    const fieldError = form?.querySelector('[data-error-for="body"]');
    if (fieldError && result.data.errors?.body) fieldError.textContent = [].concat(result.data.errors.body).join(" ");
    this.showAlert(refusalText(result));
    return null;
  }
}
