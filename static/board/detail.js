// The task detail: a dialog with its own URL, /workflows/<id>/tasks/<task_id>/,
// that fills the markup _task_dialog.html renders once. A description's Markdown becomes DOM
// through the pages' one sanitizer (markdown.js); every other value is set as text. Its
// comments and history are one timeline (timeline.js).
// Writes go through the REST API; a refusal shows the server's message.

import { get, refusalText, send } from "./api.js";
import { Checklist } from "./checklist.js";
import { dueInputs, dueLabel, dueOf, dueValue } from "./due.js";
import { focusPlace, restoreFocus } from "./focus.js";
import { markdownFragment } from "./markdown.js";
import { TaskAttachments } from "./attachments.js";
import { waitingText } from "./render.js";
import { CLASS_NAMES, Timeline } from "./timeline.js";

const FIELDS = ["title", "description", "priority", "assignee_id", "class_of_service"];
const LIVE_SESSION = new Set(["queued", "starting", "running"]); // agents.models.LIVE
const SKIPPED = {
  blocked: "blocked",
  dependency: "waiting for a blocker",
  agent_running: "its agent is at work",
  assignee_full: "assignee full",
  cell_full: "its lane is full in that step",
  lane_full: "its lane is full",
};
const FOCUSABLE = "a[href], button, input, select, textarea, [tabindex]:not([tabindex='-1'])";

/** A limit that holds a waiting task: "group Development (4 of 4)", "step In Progress (2 of 2)". */
function limitText({ scope, name, limit, occupied }) {
  const figures = `(${occupied} of ${limit})`;
  return scope === "person" ? `${name}'s personal limit ${figures}` : `${scope} ${name} ${figures}`;
}

/** The task detail's `waiting` in words, the card's and then what holds it: "Waiting: 2nd for
    In Progress — held by group Development (4 of 4); skipped: assignee full". */
export function detailWaitingText(waiting) {
  const { held_by: heldBy, skipped_because: skipped } = waiting;
  let text = `Waiting: ${waitingText(waiting)}`;
  if (heldBy.length) text += ` — held by ${heldBy.map(limitText).join(", ")}`;
  if (skipped === "dependency" && waiting.blocked_by?.length) {
    text += `; skipped: waiting for ${waiting.blocked_by.map((task) => task.title).join(", ")} to be done`;
  } else if (skipped) text += `; skipped: ${SKIPPED[skipped] ?? skipped}`;
  return text;
}

/** The task detail's `forecast` and `sle` in words: "Forecast: 85% likely to start by 2026-12-04
    and be done by 2026-12-09 (even odds: ...)", "Day 6 of its 9-day service level — past it". */
export function outlookText({ forecast, sle }) {
  const parts = [];
  const date = (d) => d ?? "later than five years from now";
  if (forecast) {
    const { starts_by: starts, done_by: done } = forecast;
    parts.push(`Forecast: 85% likely to start by ${date(starts["85"])} and be done by ${date(done["85"])}` +
      ` (even odds: start by ${date(starts["50"])}, done by ${date(done["50"])}).`);
  }
  if (sle) {
    parts.push(`Day ${Math.floor(sle.age_days) + 1} of its ${sle.days}-day service level` +
      (sle.past ? " — past it." : "."));
  }
  return parts.join(" ");
}

/** A session's runner and times, and how it ended. */
function sessionAbout(session) {
  const when = (iso) => new Date(iso).toLocaleString();
  const parts = [];
  if (session.runner) parts.push(`runner ${session.runner}`);
  if (session.finished_at) parts.push(`ended ${when(session.finished_at)}`);
  else if (session.started_at) parts.push(`started ${when(session.started_at)}`);
  else if (session.queued_at) parts.push(`queued ${when(session.queued_at)}`);
  if (session.detail) parts.push(session.detail);
  return parts.join(" · ");
}

export class TaskDetail {
  #task = null; // the task as last shown (the server's values)
  #modelKey = null; // the board model's copy of it then, to notice a live change
  #pushed = false; // opening pushed a history entry, so closing goes back
  #returnTo = null; // the card that gets the focus back
  #blockerTypes = new Map(); // the workspace's blocker types: id -> name
  #blockerTypesAt = -1; // the model's count of blocker type changes when they were read

  constructor({ root, model, view, people }) {
    Object.assign(this, { root, model, view, people });
    this.boardUrl = `/workflows/${root.dataset.workflowId}/`;
    const dialog = (this.dialog = document.getElementById("task-dialog"));
    this.form = dialog.querySelector('[data-role="task-form"]'); // none for viewers
    this.blockForm = dialog.querySelector('[data-role="block-form"]'); // none for viewers
    this.linkForm = dialog.querySelector('[data-role="link-form"]'); // none for viewers
    this.part = (role) => dialog.querySelector(`[data-role="${role}"]`);
    this.timeZone = root.dataset.timeZone || undefined; // the viewer's: due dates are read in it
    this.checklist = new Checklist(dialog, { write: (method, url, body) => this.#write(method, url, body) });
    this.attachments = new TaskAttachments(dialog);
    dialog.addEventListener("close", () => this.#closed());
    dialog.addEventListener("keydown", (event) => this.#trapFocus(event));
    dialog.addEventListener("click", (event) => this.#click(event));
    this.form?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#save();
    });
    this.blockForm?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#block();
    });
    this.linkForm?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#addLink();
    });
    this.linkForm?.elements.title.addEventListener("input", () => this.#offerTasks());
    this.form?.elements.description.addEventListener("input", (event) => {
      this.#showDescription(event.target.value);
    });
    window.addEventListener("popstate", () => this.followUrl());
    this.timeline = new Timeline({
      dialog,
      model,
      people,
      current: () => this.#task?.id,
      showAlert: (text) => this.#showAlert(text),
      status: (text) => this.#status(text),
    });
  }

  taskUrl(taskId) {
    return `${this.boardUrl}tasks/${taskId}/`;
  }

  /** Open the task of the current URL, or close the dialog on the board's URL. */
  followUrl() {
    const match = location.pathname.match(/\/tasks\/([0-9a-f-]+)\/$/);
    if (match) {
      this.open(match[1], { push: false });
    } else if (this.dialog.open) {
      this.#pushed = false;
      this.dialog.close();
    }
  }

  async open(taskId, { push = true } = {}) {
    this.#returnTo = taskId;
    this.#modelKey = this.#modelCopy(taskId);
    const result = await this.#fetchTask(taskId);
    if (!result.ok) {
      this.view.showAlert(result.status === 404 ? "This task no longer exists." : refusalText(result), "refused");
      if (!this.dialog.open && location.pathname !== this.boardUrl) history.replaceState(null, "", this.boardUrl);
      return;
    }
    if (push && location.pathname !== this.taskUrl(taskId)) {
      history.pushState({ taskId }, "", this.taskUrl(taskId));
      this.#pushed = true;
    } else if (!push) {
      this.#pushed = history.state?.taskId === taskId;
    }
    this.#task = null;
    this.#hideMessages();
    this.#show(result.data, { force: true });
    if (!this.dialog.open) this.dialog.showModal();
    (this.form?.elements.title ?? this.dialog.querySelector('[data-action="close"]')).focus();
    this.timeline.load(this.#task.id);
    this.#loadSessions();
    this.checklist.load(taskId);
    this.attachments.load(taskId);
    this.#loadLinks();
    this.#loadBlockerTypes();
  }

  /** The workspace's blocker types as they are now (an owner keeps the list on the settings
      page): the note names the task's, and the block form offers them, the task's chosen
      when the dialog opens; read again when an owner changes them, the person's choice kept
      while it still exists. */
  async #loadBlockerTypes({ keepChoice = false } = {}) {
    this.#blockerTypesAt = this.model.blockerTypeChanges;
    try {
      const types = (await get(`/api/v1/blocker-types/?workspace=${this.root.dataset.workspaceId}`)).results;
      this.#blockerTypes = new Map(types.map((type) => [type.id, type.name]));
    } catch {
      return; // the names stay as they were; blocking without a type still works
    }
    const select = this.blockForm?.elements.blocked_type_id;
    const chosen = select?.value;
    if (select) {
      const options = [...this.#blockerTypes].map(([id, name]) => new Option(name, id));
      select.replaceChildren(select.options[0], ...options);
    }
    if (this.#task) this.#showBlockerType(this.#task, true);
    if (keepChoice && select && (chosen === "" || this.#blockerTypes.has(chosen))) select.value = chosen;
  }

  /** The task's block type: in the note by name, and chosen in the form unless the person
      has chosen another meanwhile (`force`: theirs is overwritten). */
  #showBlockerType(task, force, previous) {
    const select = this.blockForm?.elements.blocked_type_id;
    const name = this.#blockerTypes.get(task.blocked_type_id);
    this.part("blocked-type").textContent = name ? ` (${name})` : "";
    if (select && (force || !previous || select.value === (previous.blocked_type_id ?? ""))) {
      select.value = task.blocked_type_id ?? "";
    }
  }

  /** The board changed (a live message or a refetch): show the open task's new values. */
  modelChanged() {
    if (!this.dialog.open || !this.#task) return;
    if (this.#blockerTypesAt !== this.model.blockerTypeChanges) this.#loadBlockerTypes({ keepChoice: true });
    const key = this.#modelCopy(this.#task.id);
    if (key === this.#modelKey) return;
    this.#modelKey = key;
    this.#refresh();
  }

  /** The board's copy of the task and why it waits there: when either changes, the dialog
      reads the task again (its `waiting` may have changed with others' moves). */
  #modelCopy(taskId) {
    const waiting = this.view.waiting.get(taskId);
    return JSON.stringify([this.model.tasks.get(taskId) ?? null, waiting?.state, waiting?.position, waiting?.step.id]);
  }

  #fetchTask(taskId) {
    return send("GET", `/api/v1/tasks/${taskId}/`).catch(() => ({ ok: false, status: 0, data: {
      detail: "Network error: the task could not be loaded. Check your connection and try again.",
    } }));
  }

  async #refresh() {
    const id = this.#task.id;
    const result = await this.#fetchTask(id);
    if (this.#task?.id !== id) return; // closed or another task opened meanwhile
    if (result.status === 404) {
      this.#showAlert("This task was deleted by someone else.");
      for (const button of this.dialog.querySelectorAll("form button, .task-actions button")) button.disabled = true;
      return;
    }
    if (!result.ok) return; // the next change tries again
    this.#show(result.data);
    this.timeline.load(this.#task.id);
    this.#loadSessions();
    this.checklist.load(id);
    this.attachments.load(id);
    this.#loadLinks();
  }

  /** The description as the card reads it, and its section only when there is one. */
  #showDescription(text) {
    this.part("description").hidden = !text?.trim();
    this.part("description-html").replaceChildren(markdownFragment(text ?? ""));
  }

  #dirty(field) {
    return this.form.elements[field].value !== String(this.#task[field] ?? "");
  }

  /** Fill the dialog with `task`. A field the user has changed keeps their text (unless
      `force`); when the server's value moved under it, the dialog says so. */
  #show(task, { force = false } = {}) {
    const previous = this.#task;
    let overtaken = false;
    if (this.form) {
      this.#fillAssignees(task.assignee_id);
      for (const field of FIELDS) {
        const input = this.form.elements[field];
        if (force || !previous || !this.#dirty(field)) input.value = task[field] ?? "";
        else if (task[field] !== previous[field]) overtaken = true;
      }
      this.#fillLabels(task, force || !previous || this.#sameLabels(previous));
      this.#fillDue(task, force || !previous || this.#sameDue(previous));
      for (const button of this.dialog.querySelectorAll("form button, .task-actions button")) button.disabled = false;
    } else {
      const names = [...this.model.labels.values()].filter((l) => task.label_ids?.includes(l.id)).map((l) => l.name);
      this.part("labels-text").textContent = names.length ? names.join(", ") : "none";
      this.part("priority-text").textContent = task.priority;
      this.part("assignee-text").textContent = task.assignee_id == null ? "nobody" : this.#personName(task.assignee_id);
      this.part("class-text").textContent = CLASS_NAMES[task.class_of_service];
    }
    this.#task = task;
    if (force) this.part("changed-note").hidden = true;
    else if (overtaken) this.part("changed-note").hidden = false;
    this.part("heading").textContent = task.title;
    const step = this.model.step(task.step_id)?.name ?? "";
    const place = task.archived_at ? `Archived from ${step}` : task.admitted ? `Step: ${step}` : `Queued for ${step}`;
    this.part("meta").textContent = `${place} · priority ${task.priority}`;
    this.part("archived-note").hidden = !task.archived_at;
    const due = dueOf(task, this.timeZone);
    this.part("due-note").hidden = due.state === "none";
    this.part("due-note").textContent = due.state === "none" ? "" : `Due ${dueLabel(task, this.timeZone)}: ${due.text}`;
    this.part("due-note").dataset.state = due.state;
    if ("waiting" in task) { // the detail's read has it; a write's answer does not, and its broadcast brings a read
      this.part("waiting-note").hidden = !task.waiting;
      this.part("waiting-note").textContent = task.waiting ? detailWaitingText(task.waiting) : "";
      const outlook = outlookText(task);
      this.part("outlook-note").hidden = !outlook;
      this.part("outlook-note").textContent = outlook;
    }
    this.part("blocked-note").hidden = !task.blocked_reason;
    this.part("blocked-reason").textContent = task.blocked_reason;
    if (this.blockForm) {
      const reason = this.blockForm.elements.reason;
      if (force || !previous || reason.value === (previous.blocked_reason ?? "")) reason.value = task.blocked_reason;
      this.blockForm.querySelector('[data-action="unblock"]').hidden = !task.blocked_reason;
    }
    this.#showBlockerType(task, force, previous);
    const shownText = this.form && !force && this.#dirty("description") ? this.form.elements.description.value : task.description;
    this.#showDescription(shownText);
    const archive = this.dialog.querySelector('[data-action="archive"]');
    if (archive) {
      archive.hidden = Boolean(task.archived_at);
      this.dialog.querySelector('[data-action="restore"]').hidden = !task.archived_at;
    }
  }

  /** The label checkboxes: one per label of the workspace, ticked for the task's (`tick`:
      else the person's choice stays as they left it). */
  #fillLabels(task, tick) {
    const box = this.part("label-choices");
    const chosen = tick ? new Set(task.label_ids ?? []) : new Set(this.#checkedLabels());
    box.replaceChildren(...[...this.model.labels.values()].map((label) => {
      const choice = document.createElement("label");
      choice.className = "label-choice";
      const input = Object.assign(document.createElement("input"), { type: "checkbox", value: label.id, checked: chosen.has(label.id) });
      input.name = "label_ids";
      const chip = Object.assign(document.createElement("span"), { className: "label", textContent: label.name });
      chip.dataset.color = label.color;
      choice.append(input, " ", chip);
      return choice;
    }));
    this.part("no-labels").hidden = this.model.labels.size > 0;
  }

  #checkedLabels() {
    return [...this.part("label-choices").querySelectorAll("input:checked")].map((input) => input.value);
  }

  #sameLabels(previous) {
    return JSON.stringify([...this.#checkedLabels()].sort()) === JSON.stringify([...(previous.label_ids ?? [])].sort());
  }

  #fillDue(task, fill) {
    if (!fill) return;
    const { date, time } = dueInputs(task, this.timeZone);
    this.form.elements.due_date.value = date;
    this.form.elements.due_time.value = time;
  }

  #sameDue(previous) {
    const { date, time } = dueInputs(previous, this.timeZone);
    return this.form.elements.due_date.value === date && this.form.elements.due_time.value === time;
  }

  #personName(id) {
    return this.people.get(id)?.name ?? "someone who left";
  }

  /** The Assignee select: "Unassigned" and whoever may be assigned, and the task's assignee
      whoever they are (one who can no longer be assigned is still shown as theirs). */
  #fillAssignees(assigneeId) {
    const select = this.form.elements.assignee_id;
    const chosen = select.value;
    const people = this.people.assignable();
    if (assigneeId != null && !people.some((p) => p.id === assigneeId)) {
      people.push({ id: assigneeId, name: this.#personName(assigneeId) });
    }
    select.replaceChildren(new Option("Unassigned", ""), ...people.map((p) => new Option(p.name, String(p.id))));
    select.value = chosen;
  }

  /** The task's agent sessions, oldest first, with Cancel on a live one and Start agent when none is. */
  async #loadSessions() {
    const id = this.#task.id;
    let page;
    try {
      const result = await send("GET", `/api/v1/sessions/?task=${id}&page_size=100`);
      if (!result.ok) return;
      page = result.data;
    } catch {
      return; // the next change loads them again
    }
    if (this.#task?.id !== id) return;
    const template = document.getElementById("session-item-template");
    const live = page.results.some((session) => LIVE_SESSION.has(session.status));
    const list = this.part("sessions");
    const place = focusPlace(list, "data-session-id");
    list.replaceChildren(...page.results.map((session) => {
      const item = template.content.cloneNode(true).firstElementChild;
      item.dataset.sessionId = session.id;
      const status = item.querySelector('[data-role="session-status"]');
      status.dataset.status = session.status;
      item.querySelector('[data-role="status-text"]').textContent = `Agent ${session.status}`;
      item.querySelector('[data-role="session-about"]').textContent = sessionAbout(session);
      const cancel = item.querySelector('[data-action="cancel-session"]');
      if (cancel) cancel.hidden = !LIVE_SESSION.has(session.status);
      return item;
    }));
    this.part("no-sessions").hidden = page.results.length > 0;
    const start = this.dialog.querySelector('[data-action="start-agent"]');
    if (start) start.hidden = live || Boolean(this.#task.archived_at);
    // A session's Cancel keeps the focus; once the session has ended, Start takes it.
    if (place && !restoreFocus(list, "data-session-id", place)) start?.focus();
  }

  /** The tasks that block this one and the tasks it blocks, each with Remove for writers. */
  async #loadLinks() {
    const id = this.#task.id;
    let page;
    try {
      const result = await send("GET", `/api/v1/tasks/${id}/links/?page_size=100`);
      if (!result.ok) return;
      page = result.data;
    } catch {
      return; // the next change loads them again
    }
    if (this.#task?.id !== id) return;
    const template = document.getElementById("link-item-template");
    const item = (link, other) => {
      const entry = template.content.cloneNode(true).firstElementChild;
      entry.querySelector('[data-role="link-text"]').textContent = other.finished ? `${other.title} (done)` : other.title;
      const remove = entry.querySelector('[data-action="remove-link"]');
      if (remove) {
        remove.dataset.linkId = link.id;
        remove.setAttribute("aria-label", `Remove the dependency on ${other.title}`);
      }
      return entry;
    };
    const blockers = page.results.filter((link) => link.dependent_id === id);
    const dependents = page.results.filter((link) => link.blocker_id === id);
    this.part("blockers").replaceChildren(...blockers.map((link) => item(link, link.blocker)));
    this.part("dependents").replaceChildren(...dependents.map((link) => item(link, link.dependent)));
    this.part("no-blockers").hidden = blockers.length > 0;
    this.part("no-dependents").hidden = dependents.length > 0;
  }

  /** The tasks whose title holds what was typed, offered as the field's suggestions. */
  async #offerTasks() {
    const text = this.linkForm.elements.title.value.trim();
    if (text.length < 2) return;
    const found = await this.#findTasks(text);
    this.part("link-options").replaceChildren(...found.map((task) => new Option(task.title)));
  }

  async #findTasks(text) {
    try {
      const result = await send("GET", `/api/v1/tasks/?archived=false&page_size=20&q=${encodeURIComponent(text)}`);
      return result.ok ? result.data.results.filter((task) => task.id !== this.#task?.id) : [];
    } catch {
      return [];
    }
  }

  /** Link the task named in the form (by its title: this board's first, then any other). */
  async #addLink() {
    this.#hideMessages();
    const { relation, title } = this.linkForm.elements;
    const wanted = title.value.trim();
    const found = (await this.#findTasks(wanted)).filter((task) => task.title.toLowerCase() === wanted.toLowerCase());
    found.sort((a, b) => Number(b.workflow_id === this.#task.workflow_id) - Number(a.workflow_id === this.#task.workflow_id));
    if (!found.length) {
      this.#showAlert(`No task titled "${wanted}" was found.`);
      return;
    }
    const result = await this.#write("POST", `/api/v1/tasks/${this.#task.id}/links/`, { [relation.value]: found[0].id });
    if (!result) return;
    title.value = "";
    this.#status(relation.value === "blocks_task_id" ? `This task now blocks ${found[0].title}.` : `Blocked by ${found[0].title}.`);
    await this.#loadLinks();
    this.#loadHistory();
    title.focus();
  }

  async #loadHistory() {
    const id = this.#task.id;
    let page;
    try {
      const result = await send("GET", `/api/v1/tasks/${id}/events/?page_size=1000`);
      if (!result.ok) return;
      page = result.data;
    } catch {
      return; // the next change loads it again
    }
    if (this.#task?.id !== id) return;
    const stepName = (stepId) => (stepId ? this.model.step(stepId)?.name ?? "a removed step" : "");
    const template = document.getElementById("history-item-template");
    this.part("history").replaceChildren(...page.results.map((event) => {
      const item = template.content.cloneNode(true).firstElementChild;
      const part = (role) => item.querySelector(`[data-role="${role}"]`);
      item.dataset.kind = event.kind;
      const badge = BADGES[event.kind];
      if (badge) {
        item.classList.add(`is-${event.kind}`);
        part("badge").textContent = badge;
        part("badge").hidden = false;
      }
      part("what").textContent = eventText(event, stepName, (userId) => this.#personName(userId));
      part("who").textContent = event.actor ? `by ${event.actor}` : "by automation";
      const when = part("when");
      when.dateTime = event.at;
      when.textContent = new Date(event.at).toLocaleString();
      if (event.reason) {
        part("why").textContent = `Why: ${event.reason}`;
        part("why").hidden = false;
      }
      return item;
    }));
  }

  async #save() {
    this.#hideMessages();
    const data = Object.fromEntries(FIELDS.map((field) => [field, this.form.elements[field].value]));
    data.assignee_id = data.assignee_id === "" ? null : Number(data.assignee_id);
    data.label_ids = this.#checkedLabels();
    data.due_at = dueValue(this.form.elements.due_date.value, this.form.elements.due_time.value, this.timeZone);
    const result = await this.#write("PATCH", `/api/v1/tasks/${this.#task.id}/`, data);
    if (!result) return;
    this.#show(result.data, { force: true });
    this.#status("Saved.");
  }

  /** Block with the reason given (blocking a blocked task replaces its reason). */
  async #block() {
    this.#hideMessages();
    const result = await this.#write("POST", `/api/v1/tasks/${this.#task.id}/block/`, {
      reason: this.blockForm.elements.reason.value,
      blocked_type_id: this.blockForm.elements.blocked_type_id.value || null,
    });
    if (!result) return;
    this.#show(result.data, { force: true });
    this.#status("Blocked.");
    this.timeline.load(this.#task.id);
  }

  async #click(event) {
    const action = event.target.closest("button[data-action]")?.dataset.action;
    if (!action) return;
    const button = (name) => this.dialog.querySelector(`[data-action="${name}"]`);
    const id = this.#task?.id;
    if (action === "close") {
      this.dialog.close();
    } else if (action === "discard") {
      this.#show(this.#task, { force: true });
    } else if (action === "archive" || action === "restore") {
      this.#hideMessages();
      const result = await this.#write("POST", `/api/v1/tasks/${id}/${action}/`, {});
      if (!result) return;
      this.#show(result.data, { force: true });
      this.#status(action === "archive" ? "Archived." : result.status === 202 ? "Restored into the step's queue." : "Restored.");
      button(action === "archive" ? "restore" : "archive").focus();
      this.timeline.load(this.#task.id);
    } else if (action === "unblock") {
      this.#hideMessages();
      const result = await this.#write("POST", `/api/v1/tasks/${id}/unblock/`, {});
      if (!result) return;
      this.#show(result.data, { force: true });
      this.#status("Unblocked.");
      this.blockForm.elements.reason.focus();
      this.timeline.load(this.#task.id);
    } else if (action === "delete") {
      this.part("confirm-delete").hidden = false;
      button("confirm-delete").focus();
    } else if (action === "cancel-delete") {
      this.part("confirm-delete").hidden = true;
      button("delete").focus();
    } else if (action === "start-agent") {
      this.#hideMessages();
      const result = await this.#write("POST", `/api/v1/tasks/${id}/sessions/`, {});
      if (!result) return;
      this.#status(result.status === 202 ? "Agent queued: the agents' limit is reached." : "Agent started.");
      await this.#loadSessions();
      this.dialog.querySelector('[data-action="cancel-session"]:not([hidden])')?.focus();
    } else if (action === "cancel-session") {
      this.#hideMessages();
      const result = await this.#write("POST", `/api/v1/sessions/${event.target.closest("[data-session-id]").dataset.sessionId}/cancel/`, {});
      if (!result) return;
      this.#status("Agent session cancelled.");
      await this.#loadSessions();
      button("start-agent").focus();
    } else if (action === "remove-link") {
      this.#hideMessages();
      const result = await this.#write("DELETE", `/api/v1/links/${event.target.closest("button").dataset.linkId}/`);
      if (!result) return;
      this.#status("Dependency removed.");
      await this.#loadLinks();
      this.#loadHistory();
      (this.linkForm?.elements.title ?? this.dialog.querySelector('[data-action="close"]')).focus();
    } else if (action === "confirm-delete") {
      const result = await this.#write("DELETE", `/api/v1/tasks/${id}/`);
      if (!result) return;
      this.#returnTo = null;
      this.dialog.close();
    }
  }

  /** A write: its result when the server took it; else the refusal is shown and null. */
  async #write(method, url, body) {
    let result;
    try {
      result = await send(method, url, body);
    } catch {
      this.#showAlert("Network error: nothing was saved. Check your connection and try again.");
      return null;
    }
    if (result.ok) return result;
    for (const [field, messages] of Object.entries(result.data.errors ?? {})) {
      const target = this.dialog.querySelector(`[data-error-for="${field}"]`);
      if (!target) continue;
      target.textContent = [].concat(messages).join(" ");
      this.dialog.querySelector(`form [name="${field}"]`)?.setAttribute("aria-invalid", "true");
    }
    this.#showAlert(refusalText(result));
    return null;
  }

  #showAlert(text) {
    const box = this.part("dialog-alert");
    box.textContent = text;
    box.hidden = false;
  }

  #status(text) {
    this.part("status").textContent = text;
  }

  #hideMessages() {
    this.part("dialog-alert").hidden = true;
    this.part("status").textContent = "";
    const confirm = this.part("confirm-delete");
    if (confirm) confirm.hidden = true;
    for (const error of this.dialog.querySelectorAll("[data-error-for]")) error.textContent = "";
    for (const field of this.dialog.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
  }

  #closed() {
    this.#task = null;
    if (location.pathname !== this.boardUrl) {
      if (this.#pushed) history.back();
      else history.replaceState(null, "", this.boardUrl);
    }
    this.#pushed = false;
    const card = (this.#returnTo && this.view.card(this.#returnTo)) || this.root.querySelector(".card");
    card?.focus();
  }

  /** Tab and Shift+Tab cycle through the dialog's controls (the page behind is inert). */
  #trapFocus(event) {
    if (event.key !== "Tab") return;
    const items = [...this.dialog.querySelectorAll(FOCUSABLE)]
      .filter((element) => !element.disabled && element.getClientRects().length > 0);
    if (!items.length) return;
    const first = items[0];
    const last = items[items.length - 1];
    const inside = items.includes(document.activeElement);
    if (event.shiftKey && (document.activeElement === first || !inside)) {
      event.preventDefault();
      last.focus();
    } else if (!event.shiftKey && (document.activeElement === last || !inside)) {
      event.preventDefault();
      first.focus();
    }
  }
}
