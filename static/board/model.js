// The board as this page knows it: its steps and tasks at one version. Loading a snapshot and
// applying a live message are idempotent, so the page's own optimistic move, confirmed later
// by its broadcast, is never applied twice. What its limits count, and what a move would
// meet, is limits.js's.

import { judgeMove, laneOf, Occupancy } from "./limits.js";

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// What the columns' markup is made of: a change here rebuilds them (a group's steps share its
// band, and each lane is a row of cells, one per step).
const columnsOf = (steps, lanes) =>
  JSON.stringify([
    steps.map((s) => [s.id, s.name, s.color, s.wip_limit, s.on_full, s.position, s.group_id ?? null]),
    lanes.map((l) => [l.id, l.name, l.is_expedite]),
  ]);

/** The lanes as the board shows them: the expedite lane on top, then lane order. */
const laneOrder = (lanes) =>
  [...lanes].sort((a, b) => Number(b.is_expedite) - Number(a.is_expedite) || a.position - b.position);

const cellKey = (laneId, stepId) => `${laneId}/${stepId}`;

export class BoardModel {
  version = 0;
  agents = null; // the agent figures of the board and its workspace
  steps = []; // in position order, without their tasks
  groups = new Map(); // id -> step group (its steps are the steps with its group_id)
  labels = new Map(); // id -> the workspace's label, in name order
  lanes = []; // the board's lanes, expedite lane first, then in lane order
  firstLaneId = null; // where a task that names no lane is
  cells = []; // the cells with a WIP limit: {lane_id, step_id, wip_limit}
  cellLimits = new Map(); // "laneId/stepId" -> the cell's WIP limit, where one is set
  expediteLimit = 0; // the board's allowance of expedite work in active steps
  tasks = new Map(); // id -> task, with its step_id
  pending = new Map(); // task id -> {stepId, index, laneId, queued}: optimistic moves awaiting the server
  // Counts the workspace's blocker type changes seen (a board read may have skipped some):
  // an open task dialog reads the types again when it moves.
  blockerTypeChanges = 0;

  /** priorityRanks: {name: pull rank}, as the server's Priority enum has them; people: the
      workspace's members with their WIP limit and their counted tasks on other boards
      (`elsewhere`), as the page was rendered. */
  constructor(priorityRanks, people = []) {
    this.priorityRanks = priorityRanks;
    this.people = people;
  }

  /** Take a whole board (the page's, a refetch or a snapshot); true when its columns changed. */
  load(board) {
    const lanes = laneOrder(board.lanes ?? []);
    const columnsChanged = columnsOf(board.steps, lanes) !== this.layout();
    this.version = board.workflow.version;
    this.blockerTypeChanges += 1;
    this.agents = board.agents;
    this.steps = board.steps.map(({ tasks, ...step }) => step);
    this.groups = new Map((board.groups ?? []).map((group) => [group.id, group]));
    this.labels = new Map((board.labels ?? []).map((label) => [label.id, label]));
    this.lanes = lanes;
    this.firstLaneId = [...lanes].sort((a, b) => a.position - b.position)[0]?.id ?? null;
    this.cells = board.cells ?? [];
    this.cellLimits = new Map(this.cells.map((cell) => [cellKey(cell.lane_id, cell.step_id), cell.wip_limit]));
    this.expediteLimit = board.workflow.expedite_limit ?? 0;
    this.tasks = new Map(
      board.steps.flatMap((step) => step.tasks.map((task) => [task.id, { ...task, step_id: step.id }])),
    );
    for (const [taskId, { stepId, index, laneId, queued }] of this.pending) this.place(taskId, stepId, index, laneId, { queued });
    return columnsChanged;
  }

  /** Apply the next version's message: the ids of the steps it touched, or null when the
      columns themselves changed (the message does not carry them: take the whole board).
      A group's change carries its steps whole: `layout()` then tells whether they moved bands.
      A lane's change (its name, order, limits, cells) is rare: the whole board is taken then. */
  apply(message) {
    this.version = message.version;
    // A label's change names the label only (every board of the workspace gets it): the
    // whole board is read again, its labels with it; so for a lane's.
    if (/^(step|workflow|label|lane)\./.test(message.type)) return null;
    if (message.type.startsWith("blocker_type.")) this.blockerTypeChanges += 1;
    if (message.agents) this.agents = message.agents;
    for (const group of message.groups ?? []) this.groups.set(group.id, group);
    for (const id of message.deleted_group_ids ?? []) this.groups.delete(id);
    const touched = new Set();
    for (const task of message.tasks ?? []) {
      const old = this.tasks.get(task.id);
      if (old) touched.add(old.step_id);
      if (task.archived_at) {
        this.tasks.delete(task.id);
      } else {
        this.tasks.set(task.id, { ...old, ...task });
        touched.add(task.step_id);
      }
      this.pending.delete(task.id); // the server has decided this task's place
    }
    for (const id of message.deleted_task_ids ?? []) {
      const old = this.tasks.get(id);
      if (old) touched.add(old.step_id);
      this.tasks.delete(id);
      this.pending.delete(id);
    }
    for (const [stepId, order] of Object.entries(message.orders ?? {})) { // a rebalanced step's new keys
      for (const { id, position } of order) {
        const task = this.tasks.get(id);
        if (task?.step_id === stepId) task.position = position;
      }
      touched.add(stepId);
    }
    for (const entry of message.steps ?? []) { // whole steps: their limits and feeders decide who waits
      const step = this.step(entry.id);
      if (step) Object.assign(step, entry);
      touched.add(entry.id);
    }
    return [...touched];
  }

  /** The columns' layout as a key: equal keys, same markup. */
  layout() {
    return columnsOf(this.steps, this.lanes);
  }

  /** More than one lane: the board shows them as rows (with one, it looks as it always did). */
  get hasLanes() {
    return this.lanes.length > 1;
  }

  /** A task's lane: the one it names, or the first lane (the server's default). */
  laneOf(task) {
    return laneOf(this, task);
  }

  lane(id) {
    return this.lanes.find((l) => l.id === id) ?? null;
  }

  /** A cell's WIP limit, or 0 where none is set. */
  cellLimit(laneId, stepId) {
    return this.cellLimits.get(cellKey(laneId, stepId)) ?? 0;
  }

  step(id) {
    return this.steps.find((s) => s.id === id) ?? null;
  }

  /** A step's tasks in board order: position, then priority, then age. */
  tasksOf(stepId) {
    const rank = this.priorityRanks;
    return [...this.tasks.values()]
      .filter((t) => t.step_id === stepId)
      .sort((a, b) =>
        a.position - b.position ||
        rank[a.priority] - rank[b.priority] ||
        compare(a.created_at, b.created_at) ||
        compare(a.id, b.id));
  }

  /** A step's admitted tasks in board order and its queue in arrival order. */
  columnOf(stepId) {
    const tasks = this.tasksOf(stepId);
    const queued = tasks
      .filter((t) => !t.admitted)
      .sort((a, b) => compare(a.queued_at ?? "", b.queued_at ?? "") || compare(a.id, b.id));
    return { admitted: tasks.filter((t) => t.admitted), queued };
  }

  /** The board as limits.js reads it. */
  limitsBoard() {
    const { steps, lanes, cells, people, firstLaneId } = this;
    const groups = [...this.groups.values()];
    return { expedite_limit: this.expediteLimit, steps, groups, lanes, cells, people, firstLaneId, tasks: [...this.tasks.values()] };
  }

  /** What every limit counts now (limits.js `Occupancy`): one pass over the tasks. */
  occupancy() {
    return new Occupancy(this.limitsBoard());
  }

  /** What the server will say to moving a task to a step (and a lane: null, its own):
      {verdict: "admit" | "full" | "queue", scope, name} (limits.js `judgeMove`). */
  judge(taskId, stepId, laneId = null) {
    const task = this.tasks.get(taskId);
    if (!task) return { verdict: "admit", scope: null, name: null };
    return judgeMove(this.limitsBoard(), task, { step_id: stepId, lane_id: laneId });
  }

  /** The lanes as the pull rule reads them (waiting.js): a task's lane's place in the pull
      order, and what of its lane is full in a step ({scope, name: the lane's}, or null): its
      cell there, else the lane itself where the step is one its limit counts. `counts`: the
      board's `occupancy()`. */
  pullLanes(counts) {
    if (!this.hasLanes) return undefined;
    const full = (task, step) => {
      const lane = this.lane(this.laneOf(task));
      if (!lane) return null;
      const cellLimit = this.cellLimit(lane.id, step.id);
      if (cellLimit && counts.cell(lane.id, step.id) >= cellLimit) return { scope: "cell", name: lane.name };
      if (step.kind === "active" && lane.wip_limit && counts.lane(lane.id) >= lane.wip_limit) {
        return { scope: "lane", name: lane.name };
      }
      return null;
    };
    return { rank: (task) => this.lane(this.laneOf(task))?.position ?? 0, full };
  }

  /** A lane's cell in board order: its step's admitted tasks in that lane. */
  cellOf(laneId, stepId) {
    return this.columnOf(stepId).admitted.filter((t) => this.laneOf(t) === laneId);
  }

  /** Where in its step's order a task dropped at `index` of a cell goes: the index, among the
      step's other tasks, of the cell's task it went before (after the cell's last one, or
      at the step's end into an empty cell). The server orders a step as a whole. */
  stepIndex(taskId, stepId, laneId, index) {
    const order = this.tasksOf(stepId).filter((t) => t.id !== taskId);
    const cell = order.filter((t) => t.admitted && this.laneOf(t) === laneId);
    if (index < cell.length) return order.indexOf(cell[index]);
    return cell.length ? order.indexOf(cell.at(-1)) + 1 : order.length;
  }
  /** Copies of the tasks in these steps, to put back with restore() if a write is refused. */
  save(stepIds) {
    return [...this.tasks.values()].filter((t) => stepIds.includes(t.step_id)).map((t) => ({ ...t }));
  }

  restore(saved) {
    for (const task of saved) this.tasks.set(task.id, task);
  }

  /** The server's move with a position, done here first: the task goes to `index` of the
      target step's order with a key between its neighbours' (any number will do: the
      server's answer brings its key). Neighbours with one key leave no room between them:
      the server then rebalances the step and its message brings every key, so here the
      step is numbered 0..n-1 meanwhile. `queued`: it goes into the step's queue (the preview
      says the step is full and queues). */
  place(taskId, stepId, index, laneId = null, { queued = false } = {}) {
    const task = this.tasks.get(taskId);
    if (!task) return;
    if (laneId) task.lane_id = laneId;
    const order = this.tasksOf(stepId).filter((t) => t.id !== taskId);
    const at = Math.max(0, Math.min(index, order.length));
    const [below, above] = [order[at - 1], order[at]];
    if (task.step_id !== stepId) {
      const now = new Date().toISOString();
      Object.assign(task, { step_id: stepId, admitted: !queued, queued_at: queued ? now : null, entered_step_at: now });
    }
    if (!above) task.position = (below?.position ?? 0) + 1;
    else if (!below) task.position = above.position - 1;
    else if (below.position < above.position) task.position = (below.position + above.position) / 2;
    else {
      order.splice(at, 0, task);
      order.forEach((t, position) => { t.position = position; });
    }
  }
}
