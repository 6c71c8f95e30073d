// Which of a board's lanes this browser keeps collapsed: remembered in localStorage per board,
// so a person's folded lanes stay folded across reloads and visits, and nobody else's change.

export class CollapsedLanes {
  constructor(workflowId) {
    this.key = `kandev.lanes.collapsed.${workflowId}`;
    let saved = [];
    try {
      saved = JSON.parse(localStorage.getItem(this.key) ?? "[]");
    } catch {
      saved = []; // unreadable (or storage refused): every lane open
    }
    this.ids = new Set(Array.isArray(saved) ? saved : []);
  }

  has(laneId) {
    return this.ids.has(laneId);
  }

  set(laneId, collapsed) {
    if (collapsed === this.ids.has(laneId)) return;
    if (collapsed) this.ids.add(laneId);
    else this.ids.delete(laneId);
    try {
      localStorage.setItem(this.key, JSON.stringify([...this.ids]));
    } catch {
      // storage full or refused: the lane folds for this visit only
    }
  }
}
