// Step settings: every form writes through the REST API (steps, step groups, lanes and
// their cells, the workflow's expedite and session limits, the workspace's session limit)
// and shows the server's field errors next to the fields ({"code": "invalid", "errors": {field: [...]}}).

import { refusalText, send } from "./api.js";
import { paintStepColors } from "./colors.js";
import { eventsOf, onEditorChange, onEditorClick } from "./events-editor.js";
import { cellValues, laneValues, showLaneForms } from "./lane-forms.js";

const root = document.getElementById("step-settings");
const workflowId = root.dataset.workflowId;
const alertBox = document.getElementById("settings-alert");
const FIELDS = ["name", "color", "kind", "wip_limit", "pull_from_step_id", "on_full", "is_start_step"];

/** A whole number as the API takes it; anything else as typed, for the server to refuse. */
const whole = (raw) => (/^-?\d+$/.test(raw.trim()) ? parseInt(raw, 10) : raw);

function clearErrors(form) {
  for (const p of form.querySelectorAll("[data-error-for]")) p.textContent = "";
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
  alertBox.hidden = true;
  alertBox.textContent = "";
}

function showErrors(form, errors) {
  for (const [field, messages] of Object.entries(errors)) {
    const target = form.querySelector(`[data-error-for="${field}"]`) ??
      form.querySelector('[data-error-for="non_field"]');
    const text = [].concat(messages).join(" ");
    target.textContent = target.dataset.errorFor === field ? text : `${field}: ${text}`;
    const fields = form.elements[field];
    for (const input of fields instanceof RadioNodeList ? fields : [fields]) input?.setAttribute("aria-invalid", "true");
  }
}

function showAlert(text) {
  alertBox.textContent = text;
  alertBox.hidden = false;
}

/** The form's values as the API expects them. */
function values(form) {
  const data = { events: eventsOf(form) };
  for (const field of FIELDS) {
    const input = form.elements[field];
    const raw = input.value;
    if (field === "wip_limit") {
      data[field] = whole(raw);
    } else if (field === "is_start_step") {
      data[field] = input.checked;
    } else if (field === "pull_from_step_id") {
      data[field] = raw || null;
    } else {
      data[field] = raw;
    }
  }
  return data;
}

/** A step group's form as the API takes it: its steps are the boxes ticked. */
const groupValues = (form) => ({
  name: form.elements.name.value,
  wip_limit: whole(form.elements.wip_limit.value),
  step_ids: [...form.querySelectorAll('[name="step_ids"]:checked')].map((box) => box.value),
});

/** Every message in an error body, however nested (a list's errors are per item). */
const messagesOf = (errors) =>
  typeof errors === "string" ? [errors] : Object.values(errors ?? {}).flatMap(messagesOf);

/** A lane and then its cell limits; the cells' field errors are shown as the cells'. */
async function saveLane(form) {
  const laneUrl = `/api/v1/lanes/${form.dataset.laneId}/`;
  const lane = await send("PATCH", laneUrl, laneValues(form, whole));
  if (!lane.ok) return lane;
  const cells = await send("PUT", `${laneUrl}cells/`, cellValues(form, whole));
  if (cells.data?.errors) cells.data.errors = { cells: messagesOf(cells.data.errors) };
  return cells;
}

/** The forms that write one thing each and reload the page with it. */
const WRITES = {
  "lane-form": saveLane,
  "new-lane-form": (form) => send("POST", "/api/v1/lanes/", { workflow_id: workflowId, ...laneValues(form, whole) }),
  "step-form": (form) => send("PATCH", `/api/v1/steps/${form.dataset.stepId}/`, values(form)),
  "new-step-form": (form) => send("POST", "/api/v1/steps/", { workflow_id: workflowId, ...values(form) }),
  "group-form": (form) => send("PATCH", `/api/v1/step-groups/${form.dataset.groupId}/`, groupValues(form)),
  "new-group-form": (form) => send("POST", "/api/v1/step-groups/", { workflow_id: workflowId, ...groupValues(form) }),
};

/** The limit forms, saved in place: what each writes, through the workflow or the workspace API. */
const LIMIT_WRITES = {
  "expedite-form": (form) => send("PATCH", `/api/v1/workflows/${workflowId}/`, {
    expedite_limit: whole(form.elements.expedite_limit.value),
  }),
  "workflow-limits-form": (form) => send("PATCH", `/api/v1/workflows/${workflowId}/`, {
    max_parallel_sessions: whole(form.elements.max_parallel_sessions.value),
    on_session_limit: form.elements.on_session_limit.value,
  }),
  "workspace-limits-form": (form) => {
    const raw = form.elements.max_concurrent_sessions.value;
    return send("PATCH", `/api/v1/workspaces/${form.dataset.workspaceId}/`, {
      max_concurrent_sessions: raw.trim() === "" ? null : whole(raw),
    });
  },
};

// A write that reloads the page says so after the reload, and keyboard focus goes back to
// where it was (the same field or button of the same form).
const SAVED_KEY = "kandev.settings.saved";

function formSelector(form) {
  if (form.dataset.stepId) return `form[data-step-id="${form.dataset.stepId}"]`;
  if (form.dataset.groupId) return `form[data-group-id="${form.dataset.groupId}"]`;
  if (form.dataset.laneId) return `form[data-lane-id="${form.dataset.laneId}"]`;
  return `form[data-role="${form.dataset.role}"]`;
}

function reloadSaying(form, text) {
  const active = document.activeElement;
  const within = form.contains(active) ? active : null;
  const field = within?.name || within?.dataset.action || (within?.type === "submit" ? "submit" : "");
  sessionStorage.setItem(SAVED_KEY, JSON.stringify({ text, form: formSelector(form), field }));
  location.reload();
}

function restoreAfterSave() {
  const saved = JSON.parse(sessionStorage.getItem(SAVED_KEY) ?? "null");
  sessionStorage.removeItem(SAVED_KEY);
  if (!saved) return;
  document.getElementById("settings-saved").textContent = saved.text;
  // The lane forms load first; a person who moved the focus meanwhile keeps it there.
  const form = root.querySelector(saved.form);
  if (!form || root.contains(document.activeElement)) return;
  const target =
    (saved.field === "submit" && form.querySelector('[type="submit"]')) ||
    (saved.field && (form.elements[saved.field] || form.querySelector(`[data-action="${saved.field}"]`))) ||
    form.querySelector('[type="submit"]');
  (target instanceof RadioNodeList ? target[0] : target)?.focus();
}

const SAVED_TEXT = {
  "step-form": "Step saved.",
  "new-step-form": "Step added.",
  "group-form": "Group saved.",
  "new-group-form": "Group added.",
  "lane-form": "Lane saved.",
  "new-lane-form": "Lane added.",
};

/** Send a form's write; on success `saved()` (by default the page reloads with the change). */
async function submit(form, request, saved = () => reloadSaying(form, SAVED_TEXT[form.dataset.role] ?? "Saved.")) {
  let result;
  try {
    result = await request;
  } catch {
    showAlert("Network error: nothing was saved. Check your connection and try again.");
    return;
  }
  if (result.ok) saved();
  else if (result.data.errors) showErrors(form, result.data.errors);
  else showAlert(refusalText(result));
}

root.addEventListener("submit", (event) => {
  const form = event.target;
  event.preventDefault();
  clearErrors(form);
  const limits = LIMIT_WRITES[form.dataset.role];
  if (limits) {
    const status = form.querySelector('[data-role="saved"]');
    status.textContent = "";
    submit(form, limits(form), () => { status.textContent = "Saved."; });
    return;
  }
  submit(form, WRITES[form.dataset.role](form));
});

root.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || onEditorClick(button)) return;
  const form = button.closest("form");
  const { stepId } = form.dataset;
  const { action } = button.dataset;
  clearErrors(form);
  if (action === "up" || action === "down") {
    const forms = [...root.querySelectorAll('[data-role="step-form"]')];
    const position = forms.indexOf(form) + (action === "up" ? -1 : 1);
    submit(form, send("PATCH", `/api/v1/steps/${stepId}/`, { position }), () => reloadSaying(form, "Step moved."));
  } else if (action === "lane-up" || action === "lane-down") {
    const forms = [...root.querySelectorAll('[data-role="lane-form"]')];
    const position = forms.indexOf(form) + (action === "lane-up" ? -1 : 1);
    submit(form, send("PATCH", `/api/v1/lanes/${form.dataset.laneId}/`, { position }), () => reloadSaying(form, "Lane moved."));
  } else if (action === "delete-lane") {
    const target = form.elements.move_tasks_to;
    const into = target.selectedOptions[0]?.textContent;
    if (!window.confirm(`Delete the lane "${form.elements.name.defaultValue}"? Its tasks move to the lane "${into}".`)) return;
    const query = `?move_tasks_to=${encodeURIComponent(target.value)}`;
    submit(form, send("DELETE", `/api/v1/lanes/${form.dataset.laneId}/${query}`), () => reloadSaying(form, "Lane deleted."));
  } else if (action === "delete-group") {
    if (!window.confirm(`Delete the group "${form.elements.name.defaultValue}"? Its steps keep their own limits.`)) return;
    submit(form, send("DELETE", `/api/v1/step-groups/${form.dataset.groupId}/`), () => reloadSaying(form, "Group deleted."));
  } else if (action === "delete") {
    if (!window.confirm(`Delete the step "${form.elements.name.defaultValue}"?`)) return;
    const target = form.elements.move_tasks_to.value;
    const query = target ? `?move_tasks_to=${encodeURIComponent(target)}` : "";
    submit(form, send("DELETE", `/api/v1/steps/${stepId}/${query}`), () => reloadSaying(form, "Step deleted."));
  }
});

root.addEventListener("change", (event) => onEditorChange(event.target));

paintStepColors(root.querySelectorAll("[data-step-color]"));

await showLaneForms(root.querySelector('[data-role="lanes"]'), workflowId);
restoreAfterSave();
