// Moving cards: drag and drop with SortableJS (vendored, loaded before the modules as the
// global Sortable), and the keyboard: arrows move the focus, Shift and an arrow the card.
// A click on a card, or Enter, opens it.

const LISTS = '[data-role="cards"], [data-role="queued-cards"]';

export class BoardInput {
  #sortables = [];

  /** move(taskId, stepId, index) is called for every move the user asks for, open(taskId)
      for every card they open. */
  constructor(root, { canWrite, move, open }) {
    Object.assign(this, { root, canWrite, move, open });
    root.addEventListener("keydown", (event) => this.#key(event));
    root.addEventListener("click", (event) => {
      const card = event.target.closest(".card");
      if (card) this.open(card.dataset.taskId);
    });
  }

  /** (Re)attach drag and drop to the columns shown now. */
  enableDragging() {
    for (const sortable of this.#sortables) sortable.destroy();
    this.#sortables = [];
    if (!this.canWrite) return;
    for (const list of this.root.querySelectorAll(LISTS)) {
      const queued = list.dataset.role === "queued-cards"; // a queue is left only by the pull
      this.#sortables.push(Sortable.create(list, {
        group: { name: "board", put: !queued },
        sort: !queued,
        animation: 150,
        ghostClass: "card-ghost",
        chosenClass: "card-chosen",
        dragClass: "card-drag",
        onEnd: ({ item, from, to, oldIndex, newIndex }) => {
          if (to.dataset.role !== "cards") return;
          if (from === to && oldIndex === newIndex) return;
          this.move(item.dataset.taskId, to.dataset.stepId, newIndex);
        },
      }));
    }
  }

  #neighbourColumn(section, delta) {
    const columns = [...this.root.querySelectorAll(".column")];
    return columns[columns.indexOf(section) + delta] ?? null;
  }

  #key(event) {
    const card = event.target.closest?.(".card");
    if (!card) return;
    const section = card.closest(".column");
    const sideways = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    const upDown = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      this.open(card.dataset.taskId);
      return;
    }
    if (event.shiftKey && this.canWrite && !card.closest('[data-role="queued-cards"]')) {
      const taskId = card.dataset.taskId;
      if (sideways) {
        const target = this.#neighbourColumn(section, sideways);
        if (target) {
          event.preventDefault();
          this.move(taskId, target.dataset.stepId, target.querySelector('[data-role="cards"]').children.length);
        }
      } else if (upDown) {
        const siblings = [...card.parentElement.children];
        const index = siblings.indexOf(card) + upDown;
        if (index >= 0 && index < siblings.length) {
          event.preventDefault();
          this.move(taskId, section.dataset.stepId, index);
        }
      }
      return;
    }
    let next = null;
    if (upDown) next = upDown > 0 ? card.nextElementSibling : card.previousElementSibling;
    else if (sideways) next = this.#neighbourColumn(section, sideways)?.querySelector(".card") ?? null;
    if (next) {
      event.preventDefault();
      next.focus();
    }
  }
}
