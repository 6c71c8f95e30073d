// The board's writes: a move is shown at once and rolled back if the server refuses it or
// the network fails; a created task is shown when the server answers. A move the board's
// preview says a full limit refuses (limits.js) is still sent, for the server decides, but
// the card stays where it is meanwhile; one it says will queue is shown in the queue.

import { refusalText, send } from "./api.js";

export class BoardWrites {
  constructor({ model, view, live }) {
    Object.assign(this, { model, view, live });
  }

  /** Move a task to `index` of a step's cards, or with `laneId` (a board with lanes) to
      `index` of that lane's cell of the step. */
  async move(taskId, stepId, cellIndex, laneId = null) {
    const { model, view } = this;
    const task = model.tasks.get(taskId);
    if (!task) return;
    const index = laneId ? model.stepIndex(taskId, stepId, laneId, cellIndex) : cellIndex;
    const columns = [task.step_id, stepId];
    const saved = model.save(columns);
    const versionAtMove = model.version;
    const { verdict } = model.judge(taskId, stepId, laneId);
    view.hideAlert();
    if (verdict !== "full") {
      model.place(taskId, stepId, index, laneId, { queued: verdict === "queue" });
      model.pending.set(taskId, { stepId, index, laneId, queued: verdict === "queue" });
    }
    view.render(columns); // a refused card goes back from where it was dropped

    let failure;
    try {
      const body = { step_id: stepId, position: index, ...(laneId && { lane_id: laneId }) };
      const result = await send("POST", `/api/v1/tasks/${taskId}/move/`, body);
      if (result.ok) {
        model.pending.delete(taskId);
        return;
      }
      failure = [refusalText(result), "refused"];
    } catch {
      failure = ["Network error: the move was not saved. Check your connection and try again.", "network"];
    }
    model.pending.delete(taskId);
    model.restore(saved);
    view.render(columns);
    view.showAlert(...failure);
    if (model.version !== versionAtMove) this.live.refetch(); // others changed these columns meanwhile
  }

  async create(form) {
    const { model, view } = this;
    const title = form.elements.title.value.trim();
    if (!title) return;
    view.hideAlert();
    const button = form.querySelector("button");
    button.disabled = true;
    try {
      const result = await send("POST", "/api/v1/tasks/", {
        title, priority: form.elements.priority.value, step_id: form.dataset.stepId,
      });
      if (!result.ok) {
        view.showAlert(refusalText(result), "refused");
        return;
      }
      form.elements.title.value = "";
      const task = result.data;
      if (!model.tasks.has(task.id)) { // its broadcast may have come first
        model.tasks.set(task.id, task);
        view.render([task.step_id]);
      }
    } catch {
      view.showAlert("Network error: the task was not created. Check your connection and try again.", "network");
    } finally {
      button.disabled = false;
    }
  }
}
