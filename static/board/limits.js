// What the server's admission will say to a move, worked out on the page while a card is
// dragged (or moved by keyboard): boards/limits.py's limits in its order (cell, step, lane,
// group, person, then the expedite allowance), placement.decide() and the expedite lane's
// admission.class_in_lane(). The server still decides every move; this previews it. It is
// held to the same table of cases as the server (tests/boards/admission_cases.json), in the
// browser. The counts here are the ones the board shows, too (model.js).
//
// A board as this module reads it: {expedite_limit, steps: [{id, name, kind, wip_limit,
// on_full, group_id}], groups: [{id, name, wip_limit}], lanes: [{id, name, wip_limit,
// is_expedite}], cells: [{lane_id, step_id, wip_limit}], people: [{id, username, wip_limit,
// elsewhere}] (elsewhere: their counted tasks on the workspace's other boards), tasks: [{id,
// step_id, lane_id, admitted, is_ephemeral, assignee_id, class_of_service}], firstLaneId: the
// lane of a task that names none}.

/** Does a task count toward the limits where it is (live and admitted)? */
export const occupies = (task) => task.admitted && !task.is_ephemeral;

const cellKey = (laneId, stepId) => `${laneId}/${stepId}`;
const add = (counts, key) => counts.set(key, (counts.get(key) ?? 0) + 1);

/** The lane a task is in: the one it names, or the board's first. */
export const laneOf = (board, task) => task.lane_id ?? board.firstLaneId ?? null;

/** What every limit counts, in one pass over the board's tasks: per step, per cell, per lane
    (in active steps), per person (in active steps of this board) and the board's expedite work. */
export class Occupancy {
  #steps = new Map();
  #cells = new Map();
  #lanes = new Map();
  #people = new Map();
  expedite = 0;

  constructor(board) {
    const active = new Set(board.steps.filter((s) => s.kind === "active").map((s) => s.id));
    for (const task of board.tasks) {
      if (!occupies(task)) continue;
      const laneId = laneOf(board, task);
      add(this.#steps, task.step_id);
      add(this.#cells, cellKey(laneId, task.step_id));
      if (!active.has(task.step_id)) continue;
      add(this.#lanes, laneId);
      if (task.assignee_id != null) add(this.#people, task.assignee_id);
      if (task.class_of_service === "expedite") this.expedite += 1;
    }
  }

  step(stepId) {
    return this.#steps.get(stepId) ?? 0;
  }

  cell(laneId, stepId) {
    return this.#cells.get(cellKey(laneId, stepId)) ?? 0;
  }

  lane(laneId) {
    return this.#lanes.get(laneId) ?? 0;
  }

  /** A person's counted tasks in active steps of this board. */
  person(userId) {
    return this.#people.get(userId) ?? 0;
  }
}

const find = (list, id) => list?.find((item) => item.id === id) ?? null;

/** The limits a move needs room in, in the order a refusal names them, each {scope, name,
    limit, occupied}; the expedite allowance last, as {scope: "expedite", allowance: true, ...}.
    `source`: the step it leaves (null: a queued task, which held no place). */
function limitsOf(board, counts, { task, cls, source, target, lane, fromLane }) {
  const found = [];
  const sameStep = source?.id === target.id;
  const active = target.kind === "active";
  const cellLimit = board.cells?.find((c) => c.lane_id === lane.id && c.step_id === target.id)?.wip_limit;
  if (cellLimit && !(sameStep && lane.id === fromLane)) {
    found.push({ scope: "cell", name: `${lane.name} in ${target.name}`, limit: cellLimit, occupied: counts.cell(lane.id, target.id) });
  }
  if (target.wip_limit > 0 && !sameStep) {
    found.push({ scope: "step", name: target.name, limit: target.wip_limit, occupied: counts.step(target.id) });
  }
  if (active && lane.wip_limit && !(source?.kind === "active" && lane.id === fromLane)) {
    found.push({ scope: "lane", name: lane.name, limit: lane.wip_limit, occupied: counts.lane(lane.id) });
  }
  const group = target.group_id ? find(board.groups, target.group_id) : null;
  if (group && source?.group_id !== group.id) {
    const occupied = board.steps.filter((s) => s.group_id === group.id).reduce((sum, s) => sum + counts.step(s.id), 0);
    found.push({ scope: "group", name: group.name, limit: group.wip_limit, occupied });
  }
  const person = task.assignee_id != null && active && source?.kind !== "active" ? find(board.people, task.assignee_id) : null;
  if (person?.wip_limit) {
    const occupied = (person.elsewhere ?? 0) + counts.person(person.id);
    found.push({ scope: "person", name: person.username, limit: person.wip_limit, occupied });
  }
  if (cls === "expedite" && active) {
    const already = source?.kind === "active" && occupies(task) ? 1 : 0; // counted where it is now
    found.push({ scope: "expedite", allowance: true, name: "expedite", limit: board.expedite_limit, occupied: counts.expedite - already });
  }
  return found;
}

const verdictOf = (verdict, limit) => ({ verdict, scope: limit?.scope ?? null, name: limit?.name ?? null });

/** What the server will say to moving `task` to `to` ({step_id, lane_id}: lane_id null, its
    own lane), without force (a drag never forces): {verdict: "admit" | "full" | "queue",
    scope, name}, naming the first full limit (the scope "expedite": the expedite lane admits
    no more expedite work). */
export function judgeMove(board, task, to, counts = new Occupancy(board)) {
  const target = find(board.steps, to.step_id);
  const fromLane = laneOf(board, task);
  const lane = find(board.lanes, to.lane_id ?? fromLane);
  if (!target || !lane || task.is_ephemeral) return verdictOf("admit"); // no limit holds it
  if (target.id === task.step_id && lane.id === fromLane) return verdictOf("admit"); // a reorder
  let cls = task.class_of_service;
  if (lane.id !== fromLane) { // the expedite lane makes a task expedite, leaving it standard
    if (lane.is_expedite) {
      if (cls !== "expedite" && target.kind === "active" && counts.expedite >= board.expedite_limit) {
        return verdictOf("full", { scope: "expedite", name: "expedite" });
      }
      cls = "expedite";
    } else if (find(board.lanes, fromLane)?.is_expedite) {
      cls = "standard";
    }
  }
  const source = task.admitted ? find(board.steps, task.step_id) : null;
  const found = limitsOf(board, counts, { task, cls, source, target, lane, fromLane });
  const full = found.find((limit) => !limit.allowance && limit.occupied >= limit.limit);
  if (!full) return verdictOf("admit");
  if (found.some((limit) => limit.allowance && limit.occupied < limit.limit)) return verdictOf("admit"); // expedited
  return verdictOf(target.on_full === "queue" ? "queue" : "full", full);
}
