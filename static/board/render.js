// The board's DOM from the model: the page's columns, bands and cards are clones of the
// <template> partials board.html renders (the server renders no card), and every word they
// show (a card's age, why it waits, a column's count...) is written here only.

import { paintStepColors } from "./colors.js";
import { boardWaiting } from "./waiting.js";

const LIVE_TEXT = { live: "Live", connecting: "Connecting…", offline: "Offline, reconnecting…" };

const cloneContent = (templateId) => document.getElementById(templateId).content.cloneNode(true);
const clone = (templateId) => cloneContent(templateId).firstElementChild;

/** Compact time in step: "just now", "12m", "5h", "3d". */
export function ageText(iso) {
  if (!iso) return "";
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(iso)) / 1000));
  if (seconds >= 86400) return `${Math.floor(seconds / 86400)}d`;
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)}h`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}m`;
  return "just now";
}

/** 1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st. */
export function ordinal(n) {
  const suffix = [11, 12, 13].includes(n % 100) ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th");
  return `${n}${suffix}`;
}

/** Replace the "{key}" placeholders of the column template's clone in attributes and text. */
function fillPlaceholders(node, values) {
  const fill = (text) => text.replace(/\{(\w+)\}/g, (placeholder, key) => values[key] ?? placeholder);
  for (const element of [node, ...node.querySelectorAll("*")]) {
    for (const attribute of element.attributes) attribute.value = fill(attribute.value);
  }
  const texts = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  while (texts.nextNode()) texts.currentNode.data = fill(texts.currentNode.data);
}

function newColumn(step) {
  const section = clone("column-template");
  const { id, name, on_full } = step;
  fillPlaceholders(section, { id, name, on_full, color: step.color ?? "" });
  if (step.color) paintStepColors([section]);
  else delete section.dataset.stepColor; // as the server renders a step without a colour
  return section;
}

/** Why a task waits, in the words of the card and of the task detail (tests/boards/waiting_cases.json
    holds them): "2nd in queue", "next for In Progress", "3rd for In Progress". */
export function waitingText(waiting) {
  if (!waiting) return "";
  const place = ordinal(waiting.position);
  if (waiting.state === "queued") return `${place} in queue`;
  return waiting.position === 1 ? `next for ${waiting.step.name}` : `${place} for ${waiting.step.name}`;
}

/** The steps in runs: a group's neighbouring steps share one run under its band, any other step is a run of its own. */
function layoutOf(steps, groups) {
  const runs = [];
  for (const step of steps) {
    const group = groups.get(step.group_id) ?? null;
    if (group && runs.at(-1)?.group === group) runs.at(-1).steps.push(step);
    else runs.push({ group, steps: [step] });
  }
  return runs;
}

function newGroup(group, steps) {
  const band = clone("group-template");
  fillPlaceholders(band, { id: group.id, key: steps[0].id, name: group.name });
  band.querySelector('[data-role="group-columns"]').replaceChildren(...steps.map(newColumn));
  return band;
}

/** What a group band's count reads as. */
function groupLabel(name, occupied, limit, over) {
  const label = `Group ${name}: ${occupied} of ${limit}`;
  return over ? `${label}, over its WIP limit` : `${label} (WIP limit)`;
}

/** A task as another card names it: its title when it is on this board, else its short id. */
export function taskName(task, id) {
  return task ? task.title : `#${id.slice(0, 8)}`;
}

function fillCard(card, task, { person, waiting, blockers }) {
  for (const name of [...card.classList]) if (name.startsWith("priority-")) card.classList.remove(name);
  card.classList.add(`priority-${task.priority}`);
  card.classList.toggle("is-ephemeral", Boolean(task.is_ephemeral));
  const expedite = task.class_of_service === "expedite";
  card.classList.toggle("is-expedite", expedite);
  card.dataset.taskId = task.id;
  card.dataset.assigneeId = task.assignee_id ?? "";
  card.dataset.classOfService = task.class_of_service;
  card.querySelector(".card-title").textContent = task.title;
  card.querySelector('[data-role="priority"]').textContent = task.priority;
  card.querySelector('[data-role="expedite"]').hidden = !expedite;
  const blocked = card.querySelector('[data-role="blocked"]');
  blocked.hidden = !task.blocked_reason;
  blocked.textContent = task.blocked_reason ? `Blocked: ${task.blocked_reason}` : "";
  const blockedBy = card.querySelector('[data-role="blocked-by"]');
  blockedBy.hidden = !blockers.length;
  blockedBy.textContent = blockers.length ? `Blocked by ${blockers.join(", ")}` : "";
  const waits = card.querySelector('[data-role="waiting"]');
  waits.hidden = !waiting;
  waits.dataset.state = waiting?.state ?? "";
  waits.querySelector('[data-role="waiting-text"]').textContent = waitingText(waiting);
  fillAssignee(card.querySelector('[data-role="assignee"]'), person);
  fillAgent(card.querySelector('[data-role="agent"]'), task.session);
  const age = card.querySelector('[data-role="age"]');
  age.dateTime = task.entered_step_at ?? "";
  age.textContent = ageText(task.entered_step_at);
  return card;
}

/** The card's assignee: initials to see, the full name to read (and hover). */
function fillAssignee(assignee, person) {
  assignee.hidden = !person;
  assignee.title = person?.name ?? "";
  assignee.querySelector('[data-role="assignee-initials"]').textContent = person?.initials ?? "";
  assignee.querySelector('[data-role="assignee-name"]').textContent = person ? `Assigned to ${person.name}` : "";
}

/** The card's agent session: "Agent queued (2nd)", "Agent waiting for a runner", "Agent
    running", "Agent failed: No runner claimed it within 300 seconds." */
function fillAgent(agent, session) {
  agent.hidden = !session;
  agent.dataset.status = session?.status ?? "";
  let words = session?.status ?? "";
  if (session?.waiting_for_runner) words = "waiting for a runner";
  else if (session?.detail) words = `${session.status}: ${session.detail}`;
  agent.querySelector('[data-role="agent-status"]').textContent = words;
  const position = agent.querySelector('[data-role="agent-position"]');
  position.hidden = !session?.queue_position;
  position.textContent = session?.queue_position ? ` (${ordinal(session.queue_position)})` : "";
}

/** One scope of the header's agent capacity: "2/3 running, 1 queued" ("2 running" when
    unlimited), with "1 waiting for a runner" between when a session no runner claimed holds a slot. */
function fillCapacity(scope, running, limit, queued, unclaimed) {
  scope.querySelector('[data-role="running"]').textContent = String(running);
  scope.querySelector('[data-role="unclaimed"]').textContent = unclaimed ? `${unclaimed} waiting for a runner, ` : "";
  const limitPart = scope.querySelector('[data-role="limit"]');
  limitPart.hidden = !limit;
  limitPart.textContent = limit ? `/${limit}` : "";
  scope.querySelector('[data-role="queued"]').textContent = String(queued);
}

/** What a column's count reads as. */
function wipLabel(occupied, limit, over) {
  if (over) return `${occupied} of ${limit}: over the WIP limit`;
  return limit ? `${occupied} of ${limit} (WIP limit)` : `${occupied} tasks`;
}

export class BoardView {
  onRebuilt = () => {};
  onRendered = () => {};
  waiting = new Map(); // why each card waits, as last rendered (waiting.js)

  constructor(root, model, people) {
    this.root = root;
    this.model = model;
    this.people = people;
    this.alertBox = document.getElementById("board-alert");
    this.liveBadge = document.querySelector('[data-role="live"]');
    this.agents = document.querySelector('[data-role="agents"]');
    this.alertBox.addEventListener("click", (event) => {
      if (event.target.closest(".alert-close")) this.hideAlert();
    });
  }

  card(taskId) {
    return this.root.querySelector(`.card[data-task-id="${taskId}"]`);
  }

  /** Every card on the board by task id: one pass, where a lookup per card would be one each. */
  #cards() {
    return new Map([...this.root.querySelectorAll(".card")].map((card) => [card.dataset.taskId, card]));
  }

  /** Re-render these steps' columns; a focused card keeps the focus wherever it went. */
  render(stepIds) {
    const active = document.activeElement;
    const focusedId = active?.classList.contains("card") ? active.dataset.taskId : null;
    const waiting = boardWaiting(this.model.steps, [...this.model.tasks.values()], this.model.priorityRanks);
    this.waiting = waiting;
    const cards = this.#cards();
    for (const id of stepIds) this.#renderColumn(id, waiting, cards);
    this.#renderGroups();
    this.#renderAgents();
    if (focusedId) {
      const again = this.card(focusedId);
      if (again && document.activeElement !== again) again.focus();
    }
    this.root.dataset.version = String(this.model.version);
    this.onRendered();
  }

  renderAll() {
    this.render(this.model.steps.map((s) => s.id));
  }

  /** The columns themselves changed: new ones from the template, under their groups' bands. */
  rebuild() {
    const runs = layoutOf(this.model.steps, this.model.groups);
    this.root.replaceChildren(...runs.map(({ group, steps }) => (group ? newGroup(group, steps) : newColumn(steps[0]))));
    this.renderAll();
    this.onRebuilt();
  }

  showLive(state) {
    this.liveBadge.dataset.state = state;
    this.liveBadge.textContent = LIVE_TEXT[state];
  }

  showAlert(text, kind) {
    const box = this.alertBox;
    box.replaceChildren(cloneContent("alert-template"));
    box.querySelector('[data-role="alert-text"]').textContent = text;
    box.dataset.kind = kind;
    box.hidden = false;
  }

  /** Hide the alert; with a kind, only an alert of that kind. */
  hideAlert(kind) {
    if (kind && this.alertBox.dataset.kind !== kind) return;
    this.alertBox.hidden = true;
    this.alertBox.replaceChildren();
  }

  tickAges() {
    for (const age of this.root.querySelectorAll('[data-role="age"]')) {
      age.textContent = ageText(age.getAttribute("datetime"));
    }
  }

  #renderAgents() {
    const figures = this.model.agents;
    if (!figures) return;
    const scope = (name) => this.agents.querySelector(`[data-role="agents-${name}"]`);
    fillCapacity(scope("board"), figures.running, figures.workflow_limit, figures.queued, figures.unclaimed);
    fillCapacity(
      scope("workspace"),
      figures.workspace_running,
      figures.workspace_limit,
      figures.workspace_queued,
      figures.workspace_unclaimed,
    );
  }

  /** Each band's name and count: its steps' occupancy, as their headers count it. */
  #renderGroups() {
    for (const band of this.root.querySelectorAll(".step-group")) {
      const group = this.model.groups.get(band.dataset.groupId);
      if (!group) continue;
      const occupied = this.model.steps.filter((s) => s.group_id === group.id)
        .reduce((sum, s) => sum + this.model.occupied(s.id), 0);
      const over = occupied > group.wip_limit;
      const label = groupLabel(group.name, occupied, group.wip_limit, over);
      band.querySelector('[data-role="group-name"]').textContent = group.name;
      const count = band.querySelector('[data-role="group-count"]');
      count.textContent = `${occupied}/${group.wip_limit}`;
      count.setAttribute("aria-label", label);
      count.title = label;
      count.parentElement.classList.toggle("is-over", over);
      band.querySelector('[data-role="group-warning"]').hidden = !over;
      band.classList.toggle("is-over", over);
      band.dataset.overLimit = String(over);
    }
  }

  #renderColumn(stepId, waiting, cards) {
    const section = this.root.querySelector(`.column[data-step-id="${stepId}"]`);
    const step = this.model.step(stepId);
    if (!section || !step) return;
    const { admitted, queued } = this.model.columnOf(stepId);
    this.#fillList(section.querySelector('[data-role="cards"]'), admitted, waiting, cards);
    this.#fillList(section.querySelector('[data-role="queued-cards"]'), queued, waiting, cards);
    const occupied = this.model.occupied(stepId);
    const queuedCount = queued.filter((t) => !t.is_ephemeral).length;
    this.#renderHeader(section, step, occupied, queuedCount);
  }

  #fillList(list, tasks, waiting, cards) {
    // A card may sit in another list (dragged there, or moved by someone else); one that was
    // here and is not in `tasks` belongs elsewhere now (and is rendered there) or is gone.
    const unknown = [];
    list.replaceChildren(...tasks.map((task) => {
      const person = task.assignee_id == null ? null : this.people.get(task.assignee_id);
      if (task.assignee_id != null && !person) unknown.push(task.assignee_id);
      const blockers = (task.blocked_by ?? []).map((id) => taskName(this.model.tasks.get(id), id));
      const values = { person, waiting: waiting.get(task.id), blockers };
      return fillCard(cards.get(task.id) ?? clone("card-template"), task, values);
    }));
    if (unknown.length) this.people.learn(unknown).then((learnt) => learnt && this.renderAll());
  }

  #renderHeader(section, step, occupied, queued) {
    const limit = step.wip_limit;
    const over = limit > 0 && occupied > limit;
    const count = section.querySelector('[data-role="wip-count"]');
    const label = wipLabel(occupied, limit, over);
    count.textContent = limit ? `${occupied}/${limit}` : String(occupied);
    count.setAttribute("aria-label", label);
    count.title = label;
    count.parentElement.classList.toggle("is-over", over);
    section.querySelector('[data-role="wip-warning"]').hidden = !over;
    section.dataset.overLimit = String(over);
    section.querySelector('[data-role="queue"]').hidden = step.on_full !== "queue" && queued === 0;
    section.querySelector('[data-role="queue-count"]').textContent = String(queued);
  }
}
