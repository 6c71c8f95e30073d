// Why each card waits, worked out from the board's own model: live messages carry whole
// tasks but not their `waiting`, so the board applies the server's rule itself. This is
// boards/waiting.py `board_waiting()` (and `board_consumers()`, placement.limited_for()),
// derived from it and held to the same table of cases (tests/boards/waiting_cases.json) as
// the server's rule, in the browser; a test also compares the cards with the API board's.

const HOLDING_SLOT = new Set(["starting", "running"]); // agents.models.HOLDING_SLOT

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const byKeys = (keys) => (a, b) => {
  const [left, right] = [keys(a), keys(b)];
  for (let i = 0; i < left.length; i += 1) {
    const order = compare(left[i], right[i]);
    if (order) return order;
  }
  return 0;
};

/** Does `step` pull from `feeder` under a limit: its own, or its group's for a feeder outside the group? */
function limitedFor(step, feeder) {
  const group = step.group_id ?? null;
  return Boolean(step.wip_limit) || (group !== null && group !== (feeder.group_id ?? null));
}

/** The first step (in board order) that pulls from `feeder` and is limited for it, or null. */
export function consumerOf(steps, feeder) {
  return steps.find((step) => step.pull_from_step_id === feeder.id && limitedFor(step, feeder)) ?? null;
}

// boards/pullable.py BARS: blocked, a blocker unfinished (a dependency), an agent at work.
const pullable = (task) => !task.blocked_reason && !task.blocked_by?.length && !HOLDING_SLOT.has(task.session?.status);

// A board of one lane: every task in the same lane, which is never full on its own.
const ONE_LANE = { rank: () => 0, full: () => null };

/** Map task id -> {state: "queued" | "waiting_for_pull", position, step, full} for every card
    that waits: `step` is where it waits to go (its own step for a queue, the consumer for a
    pull), `full` what of the task's lane is full there ({scope: "cell" | "lane", name}) or null.
    `steps` in board order, `tasks` with their step_id, `ranks` {priority name: pull rank},
    `lanes` {rank(task): its lane's place in the pull order, full(task, step)}. */
export function boardWaiting(steps, tasks, ranks, lanes = ONE_LANE) {
  const waiting = new Map();
  const byStep = new Map(steps.map((step) => [step.id, []]));
  for (const task of tasks) byStep.get(task.step_id)?.push(task);
  for (const step of steps) {
    const queue = byStep.get(step.id).filter((t) => !t.admitted)
      .sort(byKeys((t) => [t.queued_at, t.position, t.id]));
    queue.forEach((task, i) => waiting.set(task.id, { state: "queued", position: i + 1, step, full: lanes.full(task, step) }));
  }
  for (const feeder of steps) {
    const consumer = consumerOf(steps, feeder);
    if (!consumer) continue;
    const candidates = byStep.get(feeder.id).filter((t) => t.admitted && !t.is_ephemeral && pullable(t))
      // "expedite" sorts before "standard": expedite first, then lane order, as in the pull
      .sort(byKeys((t) => [t.class_of_service, lanes.rank(t), t.position, ranks[t.priority], t.created_at, t.id]));
    candidates.forEach((task, i) => waiting.set(task.id, {
      state: "waiting_for_pull", position: i + 1, step: consumer, full: lanes.full(task, consumer),
    }));
  }
  return waiting;
}
