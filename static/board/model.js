// The board as this page knows it: its steps and tasks at one version. Loading a snapshot and
// applying a live message are idempotent, so the page's own optimistic move, confirmed later
// by its broadcast, is never applied twice.

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// What the columns' markup is made of: a change here rebuilds them (a group's steps share its band).
const columnsOf = (steps) =>
  JSON.stringify(steps.map((s) => [s.id, s.name, s.color, s.wip_limit, s.on_full, s.position, s.group_id ?? null]));

export class BoardModel {
  version = 0;
  agents = null; // the agent figures of the board and its workspace
  steps = []; // in position order, without their tasks
  groups = new Map(); // id -> step group (its steps are the steps with its group_id)
  labels = new Map(); // id -> the workspace's label, in name order
  tasks = new Map(); // id -> task, with its step_id
  pending = new Map(); // task id -> {stepId, index}: optimistic moves awaiting the server

  /** priorityRanks: {name: pull rank}, as the server's Priority enum has them. */
  constructor(priorityRanks) {
    this.priorityRanks = priorityRanks;
  }

  /** Take a whole board (the page's, a refetch or a snapshot); true when its columns changed. */
  load(board) {
    const columnsChanged = columnsOf(board.steps) !== columnsOf(this.steps);
    this.version = board.workflow.version;
    this.agents = board.agents;
    this.steps = board.steps.map(({ tasks, ...step }) => step);
    this.groups = new Map((board.groups ?? []).map((group) => [group.id, group]));
    this.labels = new Map((board.labels ?? []).map((label) => [label.id, label]));
    this.tasks = new Map(
      board.steps.flatMap((step) => step.tasks.map((task) => [task.id, { ...task, step_id: step.id }])),
    );
    for (const [taskId, { stepId, index }] of this.pending) this.place(taskId, stepId, index);
    return columnsChanged;
  }

  /** Apply the next version's message: the ids of the steps it touched, or null when the
      columns themselves changed (the message does not carry them: take the whole board).
      A group's change carries its steps whole: `layout()` then tells whether they moved bands. */
  apply(message) {
    this.version = message.version;
    // A label's change names the label only (every board of the workspace gets it): the
    // whole board is read again, its labels with it.
    if (/^(step|workflow|label)\./.test(message.type)) return null;
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
    return columnsOf(this.steps);
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

  /** What a step's limit counts: its admitted tasks that are not ephemeral. */
  occupied(stepId) {
    return this.tasksOf(stepId).filter((t) => t.admitted && !t.is_ephemeral).length;
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
      step is numbered 0..n-1 meanwhile. */
  place(taskId, stepId, index) {
    const task = this.tasks.get(taskId);
    if (!task) return;
    const order = this.tasksOf(stepId).filter((t) => t.id !== taskId);
    const at = Math.max(0, Math.min(index, order.length));
    const [below, above] = [order[at - 1], order[at]];
    if (task.step_id !== stepId) {
      Object.assign(task, { step_id: stepId, admitted: true, queued_at: null, entered_step_at: new Date().toISOString() });
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
