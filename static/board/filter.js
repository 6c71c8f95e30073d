// The board's filter bar: it hides the cards that do not match and nothing else — the model,
// and so every header count, stays whole. Each field of the bar is matched by the function
// of its name.

const MATCHERS = {
  text: (card, value) => card.querySelector(".card-title").textContent.toLowerCase().includes(value.toLowerCase()),
  priority: (card, value) => card.querySelector('[data-role="priority"]').textContent === value,
  assignee: (card, value) => card.dataset.assigneeId === (value === "none" ? "" : value),
  // Blocked with a reason, or by an unfinished blocker (a dependency), as GET /tasks/?blocked= reads it.
  blocked: (card, value) => {
    const blocked = ["blocked", "blocked-by"].some((role) => !card.querySelector(`[data-role="${role}"]`).hidden);
    return blocked === (value === "blocked");
  },
  class_of_service: (card, value) => card.dataset.classOfService === value,
  label: (card, value) => card.dataset.labelIds.split(" ").includes(value),
  // "overdue", "week" (due within the next 7 days, today included) or "none" (no due date).
  due: (card, value) => (value === "week" ? ["today", "week"].includes(card.dataset.dueState) : card.dataset.dueState === value),
};

const form = document.querySelector('[data-role="filter"]');
const board = document.getElementById("board");
const status = form.querySelector('[data-role="filter-status"]');

function apply() {
  const active = Object.entries(MATCHERS)
    .map(([name, matches]) => [matches, form.elements[name].value.trim()])
    .filter(([, value]) => value);
  const cards = [...board.querySelectorAll(".card")];
  let shown = 0;
  for (const card of cards) {
    card.hidden = !active.every(([matches, value]) => matches(card, value));
    if (!card.hidden) shown += 1;
  }
  status.textContent = active.length ? `${shown} of ${cards.length} cards shown` : "";
}

/** The Label select's options: the workspace's labels as the board has them now (a label
    made, renamed or deleted elsewhere arrives live); the choice stays while its label does. */
export function showLabels(labels) {
  const select = form.elements.label;
  const key = JSON.stringify([...labels.values()].map((label) => [label.id, label.name]));
  if (select.dataset.labels === key) return;
  select.dataset.labels = key;
  const chosen = select.value;
  select.replaceChildren(new Option("Any", ""), ...[...labels.values()].map((label) => new Option(label.name, label.id)));
  select.value = labels.has(chosen) ? chosen : "";
  apply();
}

form.addEventListener("input", apply);
form.addEventListener("submit", (event) => event.preventDefault());
// Live messages and writes re-render the cards: filter whatever the board shows now (only
// the `hidden` attribute changes here, which this observer does not watch; a card's
// assignee, class, labels and due state are attributes of its own, so they are watched).
new MutationObserver(apply).observe(board, {
  childList: true, subtree: true, characterData: true,
  attributeFilter: ["data-assignee-id", "data-class-of-service", "data-label-ids", "data-due-state"],
});
