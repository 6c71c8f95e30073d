// Moving cards: drag and drop with SortableJS (vendored, loaded before the modules as the
// global Sortable), and the keyboard: arrows move the focus, Shift and an arrow the card
// (on a board with lanes, up or down past a cell's edge goes to the lane above or below).
// A click on a card, or Enter, opens it. While a card is dragged over a column or a cell, or
// moved there by keyboard, the board previews what the move would meet (a full limit, a
// queue); a keyboard move the preview says is refused or queued takes a second press.

const LISTS = '[data-role="cards"], [data-role="queued-cards"]';

export class BoardInput {
  #sortables = [];
  #over = null; // the list a dragged card is over, as last previewed
  #armed = null; // a keyboard move previewed as refused or queued: {taskId, list}, made by a second press

  /** move(taskId, stepId, index, laneId) is called for every move the user asks for (laneId:
      a cell's lane on a board with lanes, else undefined), open(taskId) for every card they
      open; preview(taskId, list, {confirm}) shows what a move into `list` would meet and
      returns the verdict (limits.js), clearPreview() hides it; hold() when a drag starts and
      release() after its drop (and its move). */
  constructor(root, { canWrite, move, open, preview, clearPreview, hold, release }) {
    Object.assign(this, { root, canWrite, move, open, preview, clearPreview, hold, release });
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
        onStart: () => {
          this.#over = null;
          this.hold();
        },
        onMove: ({ dragged, to }) => {
          if (to === this.#over || to.dataset.role !== "cards") return;
          this.#over = to;
          this.preview(dragged.dataset.taskId, to);
        },
        onEnd: ({ item, from, to, oldIndex, newIndex }) => {
          this.#over = null;
          this.clearPreview();
          const moved = to.dataset.role === "cards" && !(from === to && oldIndex === newIndex);
          if (moved) this.move(item.dataset.taskId, to.dataset.stepId, newIndex, to.dataset.laneId);
          this.release(); // after the move, so what arrived during the drag is drawn with it
        },
      }));
    }
  }

  #neighbourColumn(section, delta) {
    const columns = [...this.root.querySelectorAll(".column")];
    return columns[columns.indexOf(section) + delta] ?? null;
  }

  /** On a board with lanes: the cell beside `cell` in its lane (delta ±1 along the steps), or
      the same step's cell in the lane above or below (`across`), skipping folded lanes. */
  #neighbourCell(cell, delta, { across = false } = {}) {
    const { laneId, stepId } = cell.dataset;
    const selector = across ? `[data-role="cards"][data-step-id="${stepId}"]` : `[data-role="cards"][data-lane-id="${laneId}"]`;
    const cells = [...this.root.querySelectorAll(selector)].filter((list) => list === cell || !list.closest("[hidden]"));
    return cells[cells.indexOf(cell) + delta] ?? null;
  }

  #key(event) {
    const card = event.target.closest?.(".card");
    if (!card) return;
    const section = card.closest(".column");
    const list = card.parentElement;
    const inLane = Boolean(list.dataset.laneId); // a cell of a board with lanes
    const sideways = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    const upDown = { ArrowDown: 1, ArrowUp: -1 }[event.key];
    if (this.#armed && event.key !== "Shift" && !(event.shiftKey && (sideways || upDown))) {
      this.#armed = null; // any other key lets a previewed move go
      this.clearPreview();
    }
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      this.open(card.dataset.taskId);
      return;
    }
    if (event.shiftKey && this.canWrite && !card.closest('[data-role="queued-cards"]')) {
      const taskId = card.dataset.taskId;
      let target = null;
      let index = 0;
      if (sideways) {
        target = inLane
          ? this.#neighbourCell(list, sideways)
          : this.#neighbourColumn(section, sideways)?.querySelector('[data-role="cards"]');
        index = target?.children.length;
      } else if (upDown) {
        index = [...list.children].indexOf(card) + upDown;
        if (index >= 0 && index < list.children.length) target = list;
        else if (inLane) { // past the cell's edge: into the lane above (at its end) or below (at its start)
          target = this.#neighbourCell(list, upDown, { across: true });
          index = upDown > 0 ? 0 : target?.children.length;
        }
      }
      if (target) {
        event.preventDefault();
        const armed = this.#armed;
        this.#armed = null;
        if (target !== list && !(armed?.taskId === taskId && armed.list === target)) {
          const { verdict } = this.preview(taskId, target, { confirm: true });
          if (verdict !== "admit") {
            this.#armed = { taskId, list: target };
            return;
          }
        }
        this.clearPreview();
        this.move(taskId, target.dataset.stepId, index, target.dataset.laneId);
      }
      return;
    }
    let next = null;
    if (upDown) {
      next = upDown > 0 ? card.nextElementSibling : card.previousElementSibling;
      if (!next && inLane) {
        const cell = this.#neighbourCell(list, upDown, { across: true });
        next = (upDown > 0 ? cell?.firstElementChild : cell?.lastElementChild) ?? null;
      }
    } else if (sideways) {
      const beside = inLane ? this.#neighbourCell(list, sideways) : this.#neighbourColumn(section, sideways);
      next = beside?.querySelector(".card") ?? null;
    }
    if (next) {
      event.preventDefault();
      next.focus();
    }
  }
}
