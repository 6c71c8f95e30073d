// The live board: the server renders the page around it and carries the board as data; these
// modules build its columns and cards from that data, keep a model of it, apply the live
// messages, and write moves and new tasks through the REST API.

import { TaskDetail } from "./detail.js";
import { showLabels } from "./filter.js";
import { BoardInput } from "./input.js";
import { CollapsedLanes } from "./lanes.js";
import { Live } from "./live.js";
import { BoardModel } from "./model.js";
import { People } from "./people.js";
import { BoardView } from "./render.js";
import { RunnerNote } from "./runners.js";
import { BoardWrites } from "./writes.js";

const root = document.getElementById("board");
const dataBlock = (id) => JSON.parse(document.getElementById(id).textContent);

const board = dataBlock("board-data");
const model = new BoardModel(dataBlock("priority-ranks"), dataBlock("people"));
const people = new People(dataBlock("people"), board.workflow.workspace_id);
const view = new BoardView(root, model, people, new CollapsedLanes(root.dataset.workflowId));
const live = new Live({ workflowId: root.dataset.workflowId, model, view });
const writes = new BoardWrites({ model, view, live });
const detail = new TaskDetail({ root, model, view, people });
const input = new BoardInput(root, {
  canWrite: root.dataset.canWrite === "true",
  move: (taskId, stepId, index, laneId) => writes.move(taskId, stepId, index, laneId),
  open: (taskId) => detail.open(taskId),
  preview: (taskId, list, how) => view.showPreview(list, model.judge(taskId, list.dataset.stepId, list.dataset.laneId ?? null), how),
  clearPreview: () => view.clearPreview(),
  hold: () => view.hold(),
  release: () => view.release(),
});
view.onRebuilt = () => input.enableDragging();
const runnerNote = new RunnerNote(document.querySelector('[data-role="runner-note"]'), board.workflow.workspace_id);
view.onRendered = () => {
  detail.modelChanged();
  runnerNote.update(model.agents);
  showLabels(model.labels);
};

root.addEventListener("submit", (event) => {
  const form = event.target.closest('[data-role="add-task"]');
  if (!form) return;
  event.preventDefault();
  writes.create(form);
});
setInterval(() => view.tickAges(), 60_000);

view.serviceLevels = dataBlock("service-levels");
model.load(board);
view.rebuild();
live.connect();
if (root.dataset.openTaskId) detail.open(root.dataset.openTaskId, { push: false });
