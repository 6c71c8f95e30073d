// The step settings' lanes: a form per lane, cloned from the page's template and filled in
// from the lanes API (the lane, its cell limits, where its tasks may go when it is deleted).
// settings.js writes them.

import { get } from "./api.js";
import { fillPlaceholders } from "./render.js";

const items = (answer) => (Array.isArray(answer) ? answer : answer.results);

/** Put a form for each of the workflow's lanes into `section`, in lane order. */
export async function showLaneForms(section, workflowId) {
  const status = section.querySelector('[data-role="lanes-status"]');
  let lanes;
  let cells;
  try {
    lanes = items(await get(`/api/v1/lanes/?workflow=${encodeURIComponent(workflowId)}&page_size=1000`));
    cells = await Promise.all(lanes.map((lane) => get(`/api/v1/lanes/${lane.id}/cells/`).then(items)));
  } catch {
    status.textContent = "Could not load the lanes: reload the page to try again.";
    return;
  }
  lanes.sort((a, b) => a.position - b.position);
  const template = document.getElementById("lane-form-template");
  const forms = lanes.map((lane, index) => {
    const form = template.content.firstElementChild.cloneNode(true);
    fillPlaceholders(form, { id: lane.id });
    fillLaneForm(form, lane, cells[index], lanes);
    // The expedite lane is always first: it does not move, nor does another past it.
    form.querySelector('[data-action="lane-up"]').disabled = index === 0 || lanes[index - 1].is_expedite || lane.is_expedite;
    form.querySelector('[data-action="lane-down"]').disabled = index === lanes.length - 1 || lane.is_expedite;
    return form;
  });
  section.querySelector('[data-role="lane-forms"]').replaceChildren(...forms);
  status.textContent = lanes.length === 1 ? "One lane: the board shows no lane headers until it has a second." : "";
}

function fillLaneForm(form, lane, cells, lanes) {
  form.querySelector('[data-role="lane-title"]').textContent = lane.name;
  const figures = lane.wip_limit ? `${lane.occupied} of ${lane.wip_limit}` : `${lane.occupied}`;
  form.querySelector('[data-role="lane-occupied"]').textContent =
    `${figures} in active steps${lane.over_limit ? ": over its limit" : ""}`;
  form.elements.name.value = lane.name;
  form.elements.name.defaultValue = lane.name;
  form.elements.wip_limit.value = lane.wip_limit || "";
  form.elements.is_expedite.checked = lane.is_expedite;
  form.querySelector('[data-action="lane-up"]').setAttribute("aria-label", `Move lane ${lane.name} earlier`);
  form.querySelector('[data-action="lane-down"]').setAttribute("aria-label", `Move lane ${lane.name} later`);
  for (const cell of cells) {
    const input = form.querySelector(`[data-cell-step="${cell.step_id}"]`);
    if (input) input.value = cell.wip_limit;
  }
  const others = lanes.filter((other) => other.id !== lane.id);
  // The last lane stays: every task is in one.
  form.querySelector('[data-role="lane-delete"]').hidden = others.length === 0;
  form.elements.move_tasks_to.replaceChildren(...others.map((other) => new Option(other.name, other.id)));
}

/** A lane form's values as the lanes API takes them. */
export function laneValues(form, whole) {
  const raw = form.elements.wip_limit.value.trim();
  return { name: form.elements.name.value, wip_limit: raw === "" ? 0 : whole(raw), is_expedite: form.elements.is_expedite.checked };
}

/** A lane form's cell limits as the cells API takes them: the steps with a limit typed in. */
export function cellValues(form, whole) {
  return [...form.querySelectorAll("[data-cell-step]")]
    .filter((input) => input.value.trim() !== "")
    .map((input) => ({ step_id: input.dataset.cellStep, wip_limit: whole(input.value) }));
}
