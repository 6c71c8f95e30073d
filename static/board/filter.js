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

form.addEventListener("input", apply);
form.addEventListener("submit", (event) => event.preventDefault());
// Live messages and writes re-render the cards: filter whatever the board shows now (only
// the `hidden` attribute changes here, which this observer does not watch; a card's
// assignee and class are attributes of its own, so they are watched).
new MutationObserver(apply).observe(board, {
  childList: true, subtree: true, characterData: true,
  attributeFilter: ["data-assignee-id", "data-class-of-service"],
});
