// The board's DOM from the model: the page's columns, bands, lanes and cards are clones of
// the <template> partials board.html renders (the server renders no card), and every word
// they show (a card's age, why it waits, a column's count...) is written here only.
//
// A board with one lane is its columns, each with its cards. With more lanes, the columns
// (their headers, queues and forms) make the top row and each lane is a row below them
// with a cell per step, as wide as its column, holding that lane's cards of the step.

import { paintStepColors } from "./colors.js";
import { dueOf } from "./due.js";
import { LIVE_TEXT } from "../site/socket.js";
import { boardWaiting } from "./waiting.js";

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

/** Replace the "{key}" placeholders of a template's clone in attributes and text. */
export function fillPlaceholders(node, values) {
  const fill = (text) => text.replace(/\{(\w+)\}/g, (placeholder, key) => values[key] ?? placeholder);
  for (const element of [node, ...node.querySelectorAll("*")]) {
    for (const attribute of element.attributes) attribute.value = fill(attribute.value);
  }
  const texts = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  while (texts.nextNode()) texts.currentNode.data = fill(texts.currentNode.data);
}

function newColumn(step, { lanes }) {
  const section = clone("column-template");
  const { id, name, on_full } = step;
  fillPlaceholders(section, { id, name, on_full, color: step.color ?? "" });
  if (step.color) paintStepColors([section]);
  else delete section.dataset.stepColor; // as the server renders a step without a colour
  if (lanes) section.querySelector('[data-role="cards"]').remove(); // its cards are in the lanes' cells
  return section;
}

/** A lane's row: its header, then a cell per step, in the columns' order and widths. */
function newLane(lane, runs) {
  const row = clone("lane-template");
  fillPlaceholders(row, { id: lane.id, name: lane.name });
  row.querySelector('[data-role="lane-cells"]').replaceChildren(...runs.map(({ group, steps }) => {
    const cells = steps.map((step) => {
      const cell = clone("cell-template");
      fillPlaceholders(cell, { step: step.id, step_name: step.name, lane: lane.id, lane_name: lane.name });
      return cell;
    });
    if (!group) return cells[0];
    const span = document.createElement("div"); // under a group's band, as its columns are
    span.className = "group-cells";
    span.replaceChildren(...cells);
    return span;
  }));
  row.querySelector('[data-role="lane-expedite"]').hidden = !lane.is_expedite;
  row.classList.toggle("is-expedite-lane", Boolean(lane.is_expedite));
  return row;
}

/** A lane's or a cell's count: "2/3", or "2" without a limit, and what it reads as. */
function fillCount(scope, { count, warning, label }, occupied, limit) {
  const over = limit > 0 && occupied > limit;
  const counter = scope.querySelector(`[data-role="${count}"]`);
  counter.textContent = limit ? `${occupied}/${limit}` : String(occupied);
  counter.setAttribute("aria-label", label(over));
  counter.title = label(over);
  counter.parentElement.classList.toggle("is-over", over);
  scope.querySelector(`[data-role="${warning}"]`).hidden = !over;
  scope.dataset.overLimit = String(over);
}

/** What a lane's or a cell's count reads as: "Lane Bugs: 2 of 3 (WIP limit)". */
function limitLabel(what, occupied, limit, over) {
  if (!limit) return `${what}: ${occupied} tasks`;
  return over ? `${what}: ${occupied} of ${limit}, over its WIP limit` : `${what}: ${occupied} of ${limit} (WIP limit)`;
}

/** Why a task waits, in the words of the card and of the task detail (tests/boards/waiting_cases.json
    holds them): "2nd in queue", "next for In Progress", "3rd for In Progress", and what
    holds it where its lane or its cell there is full: "next for In Progress (Bugs lane full)". */
export function waitingText(waiting) {
  if (!waiting) return "";
  const place = ordinal(waiting.position);
  if (waiting.state === "queued") return `${place} in queue`;
  const words = waiting.position === 1 ? `next for ${waiting.step.name}` : `${place} for ${waiting.step.name}`;
  return waiting.full ? `${words} (${waiting.full.name} ${waiting.full.scope} full)` : words;
}

/** What a move would meet, as a column or a cell shows it while a card is dragged over it
    (limits.js `judgeMove`; tests/boards/admission_cases.json holds the words): "Full: In
    Progress", "Full: lane Bugs", "Full: alice's limit", "Will queue", or "" (admitted). */
export function previewText({ verdict, scope, name }) {
  if (verdict === "queue") return "Will queue";
  if (verdict !== "full") return "";
  const named = { lane: `lane ${name}`, person: `${name}'s limit`, expedite: "expedite allowance" }[scope] ?? name;
  return `Full: ${named}`;
}

/** What the "Move preview" status says of a move to `stepName`; `confirm`: a keyboard move,
    which a second press makes. */
function previewSpoken(verdict, stepName, confirm) {
  const text = previewText(verdict);
  if (verdict.verdict === "full") {
    return `${text}. ${confirm ? "Press again to try the move anyway; the server will refuse it." : "A drop here will be refused."}`;
  }
  if (verdict.verdict === "queue") return `Will queue in ${stepName}.${confirm ? " Press again to move it there." : ""}`;
  return "";
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

function newGroup(group, steps, options) {
  const band = clone("group-template");
  fillPlaceholders(band, { id: group.id, key: steps[0].id, name: group.name });
  band.querySelector('[data-role="group-columns"]').replaceChildren(...steps.map((step) => newColumn(step, options)));
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

function fillCard(card, task, { person, waiting, blockers, labels, timeZone, sleDays }) {
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
  const attachments = card.querySelector('[data-role="attachments"]');
  attachments.hidden = !task.attachment_count;
  attachments.querySelector('[data-role="attachments-text"]').textContent = attachmentsText(task.attachment_count);
  fillAssignee(card.querySelector('[data-role="assignee"]'), person);
  const comments = card.querySelector('[data-role="comments"]');
  comments.hidden = !task.comment_count;
  comments.textContent = !task.comment_count ? "" : task.comment_count === 1 ? "1 comment" : `${task.comment_count} comments`;
  fillAgent(card.querySelector('[data-role="agent"]'), task.session);
  fillLabels(card, task.label_ids ?? [], labels);
  fillDue(card, task, timeZone);
  fillSle(card, task, sleDays);
  fillChecklist(card.querySelector('[data-role="checklist"]'), task.checklist);
  const age = card.querySelector('[data-role="age"]');
  age.dateTime = task.entered_step_at ?? "";
  age.textContent = ageText(task.entered_step_at);
  return card;
}

/** The card's labels by name, each in its colour (the name is what it says; the colour only
    helps the eye), in the workspace's order; an id the board does not know yet is left out. */
function fillLabels(card, labelIds, labels) {
  const carried = [...labels.values()].filter((label) => labelIds.includes(label.id));
  const list = card.querySelector('[data-role="labels"]');
  list.hidden = carried.length === 0;
  list.replaceChildren(...carried.map((label) => {
    const chip = clone("label-template");
    chip.dataset.color = label.color;
    chip.textContent = label.name;
    return chip;
  }));
  card.dataset.labelIds = carried.map((label) => label.id).join(" ");
}

/** "due in 3 days", "due today", "overdue by 2 days": overdue cards say so in words and
    stand out by their border and icon too. */
function fillDue(card, task, timeZone) {
  const { text, state } = dueOf(task, timeZone);
  const due = card.querySelector('[data-role="due"]');
  due.hidden = state === "none";
  due.dataset.state = state;
  due.querySelector('[data-role="due-text"]').textContent = text;
  card.dataset.dueState = state;
  card.classList.toggle("is-overdue", state === "overdue");
}

/** A card's age against its class's service level, counted from its cycle's start
    (`started_at`) as the task detail counts it: "Day 6 of 9", and past it "Day 11 of 9: past
    its service level". */
export function sleText(startedAt, days, now = Date.now()) {
  const age = (now - Date.parse(startedAt)) / (86400 * 1000);
  const past = age > days;
  const text = `Day ${Math.floor(age) + 1} of ${days}`;
  return { text: past ? `${text}: past its service level` : text, past };
}

/** `days`: the service level of the card's class where it counts (an admitted card in an
    active step), else null: nothing shown. A card past it is marked by its border and icon too. */
function fillSle(card, task, days) {
  const shown = days != null && task.started_at != null;
  const { text, past } = shown ? sleText(task.started_at, days) : { text: "", past: false };
  const sle = card.querySelector('[data-role="sle"]');
  sle.hidden = !shown;
  sle.dataset.state = past ? "past" : shown ? "within" : "";
  sle.querySelector('[data-role="sle-text"]').textContent = text;
  card.dataset.sleDays = shown ? String(days) : "";
  card.classList.toggle("is-past-sle", past);
}

/** The checklist's "3/5", read out as "3/5 checklist items done". */
function fillChecklist(checklist, figures) {
  const total = figures?.total ?? 0;
  checklist.hidden = total === 0;
  checklist.querySelector('[data-role="checklist-count"]').textContent = total ? `${figures.done}/${total}` : "";
  checklist.querySelector('[data-role="checklist-words"]').textContent = total ? " checklist items done" : "";
  checklist.classList.toggle("is-complete", total > 0 && figures.done === total);
}

/** "1 attachment", "3 attachments". */
export function attachmentsText(count) {
  return count ? `${count} attachment${count === 1 ? "" : "s"}` : "";
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
  serviceLevels = {}; // {class of service: days or null}, read with the page
  #held = null; // while a card is dragged, what to draw at its drop: {steps, rebuild}

  constructor(root, model, people, collapsed) {
    this.root = root;
    this.model = model;
    this.people = people;
    this.timeZone = root.dataset.timeZone || undefined; // the viewer's, from their profile
    this.collapsed = collapsed; // the lanes this browser keeps collapsed (lanes.js)
    this.laneHelp = document.querySelector('[data-role="lane-help"]');
    this.alertBox = document.getElementById("board-alert");
    this.movePreview = document.querySelector('[data-role="move-preview"]');
    this.liveBadge = document.querySelector('[data-role="live"]');
    this.agents = document.querySelector('[data-role="agents"]');
    this.alertBox.addEventListener("click", (event) => {
      if (event.target.closest(".alert-close")) this.hideAlert();
    });
    root.addEventListener("click", (event) => {
      const toggle = event.target.closest('[data-role="lane-toggle"]');
      if (toggle) this.#collapse(toggle.closest(".lane"), toggle.getAttribute("aria-expanded") === "true");
    });
  }

  card(taskId) {
    return this.root.querySelector(`.card[data-task-id="${taskId}"]`);
  }

  /** Every card on the board by task id: one pass, where a lookup per card would be one each. */
  #cards() {
    return new Map([...this.root.querySelectorAll(".card")].map((card) => [card.dataset.taskId, card]));
  }

  /** A card is being dragged: the board is drawn again only at its drop. Drawing a list now
      would take the dragged card back to its place, and the drop would be lost. */
  hold() {
    this.#held = { steps: new Set(), rebuild: false };
  }

  /** The card was dropped (its move, if any, is in the model): draw what changed meanwhile. */
  release() {
    const held = this.#held;
    this.#held = null;
    if (held?.rebuild) this.rebuild();
    else if (held?.steps.size) this.render([...held.steps]);
  }

  /** Re-render these steps' columns; a focused card keeps the focus wherever it went. */
  render(stepIds) {
    if (this.#held) {
      for (const id of stepIds) this.#held.steps.add(id);
      this.root.dataset.version = String(this.model.version); // the page has it; the cards follow at the drop
      return;
    }
    const active = document.activeElement;
    const focusedId = active?.classList.contains("card") ? active.dataset.taskId : null;
    const { steps, tasks, priorityRanks } = this.model;
    const counts = this.model.occupancy();
    const waiting = boardWaiting(steps, [...tasks.values()], priorityRanks, this.model.pullLanes(counts));
    this.waiting = waiting;
    const cards = this.#cards();
    for (const id of stepIds) this.#renderColumn(id, waiting, cards, counts);
    this.#renderGroups(counts);
    this.#renderLanes(counts);
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
    if (this.#held) {
      this.#held.rebuild = true;
      this.root.dataset.version = String(this.model.version);
      return;
    }
    const runs = layoutOf(this.model.steps, this.model.groups);
    const lanes = this.model.hasLanes;
    const columns = runs.map(({ group, steps }) => (group ? newGroup(group, steps, { lanes }) : newColumn(steps[0], { lanes })));
    this.root.classList.toggle("has-lanes", lanes);
    if (this.laneHelp) this.laneHelp.hidden = !lanes; // the move help is there for those who may move
    if (lanes) {
      const head = document.createElement("div");
      head.className = "board-head";
      head.replaceChildren(...columns);
      const rows = this.model.lanes.map((lane) => newLane(lane, runs));
      for (const row of rows) this.#collapse(row, this.collapsed.has(row.dataset.laneId));
      this.root.replaceChildren(head, ...rows);
    } else {
      this.root.replaceChildren(...columns);
    }
    this.renderAll();
    this.onRebuilt();
  }

  showLive(state) {
    this.liveBadge.dataset.state = state;
    this.liveBadge.textContent = LIVE_TEXT[state];
  }

  /** Show what a move into `list` (a column's or a cell's cards) would meet: the words in its
      drop preview and in the "Move preview" status; returns it. `confirm`: a keyboard move. */
  showPreview(list, verdict, { confirm = false } = {}) {
    this.clearPreview();
    const holder = list.closest(".cell, .column");
    const box = holder?.querySelector(':scope > [data-role="drop-preview"]');
    const text = previewText(verdict);
    if (box && text) {
      box.textContent = text;
      box.hidden = false;
      holder.dataset.drop = verdict.verdict;
    }
    this.movePreview.textContent = previewSpoken(verdict, this.model.step(list.dataset.stepId)?.name ?? "", confirm);
    return verdict;
  }

  clearPreview() {
    for (const holder of this.root.querySelectorAll("[data-drop]")) {
      delete holder.dataset.drop;
      const box = holder.querySelector(':scope > [data-role="drop-preview"]');
      box.hidden = true;
      box.textContent = "";
    }
    this.movePreview.textContent = "";
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

  /** Ages and due dates move with the clock: a minute's tick, and a due date passes midnight. */
  tickAges() {
    for (const age of this.root.querySelectorAll('[data-role="age"]')) {
      age.textContent = ageText(age.getAttribute("datetime"));
    }
    for (const card of this.root.querySelectorAll(".card")) {
      const task = this.model.tasks.get(card.dataset.taskId);
      if (task?.due_at) fillDue(card, task, this.timeZone);
      if (task && card.dataset.sleDays) fillSle(card, task, Number(card.dataset.sleDays));
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
  #renderGroups(counts) {
    for (const band of this.root.querySelectorAll(".step-group")) {
      const group = this.model.groups.get(band.dataset.groupId);
      if (!group) continue;
      const occupied = this.model.steps.filter((s) => s.group_id === group.id)
        .reduce((sum, s) => sum + counts.step(s.id), 0);
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

  /** Show or hide a lane's cells; the browser remembers it. */
  #collapse(row, collapsed) {
    row.querySelector('[data-role="lane-cells"]').hidden = collapsed;
    row.querySelector('[data-role="lane-toggle"]').setAttribute("aria-expanded", String(!collapsed));
    row.classList.toggle("is-collapsed", collapsed);
    this.collapsed.set(row.dataset.laneId, collapsed);
  }

  /** Each lane's count: its tasks in active steps, as its limit counts them. */
  #renderLanes(counts) {
    for (const row of this.root.querySelectorAll(".lane")) {
      const lane = this.model.lane(row.dataset.laneId);
      if (!lane) continue;
      const occupied = counts.lane(lane.id);
      const label = (over) => limitLabel(`Lane ${lane.name}`, occupied, lane.wip_limit, over);
      fillCount(row, { count: "lane-count", warning: "lane-warning", label }, occupied, lane.wip_limit);
    }
  }

  #renderColumn(stepId, waiting, cards, counts) {
    const section = this.root.querySelector(`.column[data-step-id="${stepId}"]`);
    const step = this.model.step(stepId);
    if (!section || !step) return;
    const { admitted, queued } = this.model.columnOf(stepId);
    if (this.model.hasLanes) {
      for (const cell of this.root.querySelectorAll(`.cell[data-step-id="${stepId}"]`)) this.#renderCell(cell, step, waiting, cards, counts);
    } else {
      this.#fillList(section.querySelector('[data-role="cards"]'), admitted, waiting, cards);
    }
    this.#fillList(section.querySelector('[data-role="queued-cards"]'), queued, waiting, cards);
    const occupied = counts.step(stepId);
    const queuedCount = queued.filter((t) => !t.is_ephemeral).length;
    this.#renderHeader(section, step, occupied, queuedCount);
  }

  /** A cell's cards, and its count where the cell has a limit. */
  #renderCell(cell, step, waiting, cards, counts) {
    const lane = this.model.lane(cell.dataset.laneId);
    this.#fillList(cell.querySelector('[data-role="cards"]'), this.model.cellOf(lane.id, step.id), waiting, cards);
    const limit = this.model.cellLimit(lane.id, step.id);
    cell.querySelector('[data-role="cell-head"]').hidden = !limit;
    const occupied = counts.cell(lane.id, step.id);
    const label = (over) => limitLabel(`Cell ${lane.name} in ${step.name}`, occupied, limit, over);
    fillCount(cell, { count: "cell-count", warning: "cell-warning", label }, occupied, limit);
  }

  #fillList(list, tasks, waiting, cards) {
    // A card may sit in another list (dragged there, or moved by someone else); one that was
    // here and is not in `tasks` belongs elsewhere now (and is rendered there) or is gone.
    const unknown = [];
    const active = new Set(this.model.steps.filter((s) => s.kind === "active").map((s) => s.id));
    list.replaceChildren(...tasks.map((task) => {
      const person = task.assignee_id == null ? null : this.people.get(task.assignee_id);
      if (task.assignee_id != null && !person) unknown.push(task.assignee_id);
      const blockers = (task.blocked_by ?? []).map((id) => taskName(this.model.tasks.get(id), id));
      const counts = task.admitted && active.has(task.step_id);
      const sleDays = counts ? (this.serviceLevels[task.class_of_service] ?? null) : null;
      const values = { person, waiting: waiting.get(task.id), blockers, labels: this.model.labels, timeZone: this.timeZone,
        sleDays };
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
