// The structured editor of a step's events: per event list, rows of actions the server
// rendered (templates/boards/_event_action.html); a new row is a clone of the list's
// <template>. The rows are read back into the `events` object the step API takes.

function showTarget(row) {
  const type = row.querySelector('[data-field="type"]').value;
  row.querySelector('[data-role="target"]').hidden = type !== "move_to_step";
}

let added = 0;

function addAction(list) {
  const template = list.querySelector('[data-role="action-template"]');
  const row = template.content.firstElementChild.cloneNode(true);
  // The template's ids end "-new-type" / "-new-step": each clone gets its own.
  added += 1;
  for (const element of row.querySelectorAll("[id], [for]")) {
    for (const attribute of ["id", "for"]) {
      const value = element.getAttribute(attribute);
      if (value) element.setAttribute(attribute, value.replace(/-new-(type|step)$/, `-added${added}-$1`));
    }
  }
  list.querySelector('[data-role="actions"]').append(row);
  showTarget(row);
  row.querySelector('[data-field="type"]').focus();
}

function removeAction(row) {
  const list = row.closest("[data-event]");
  const next = row.nextElementSibling ?? row.previousElementSibling;
  row.remove();
  // Focus stays in the list: on the neighbouring action, else on "Add action".
  (next?.querySelector('[data-field="type"]') ?? list.querySelector('[data-action="add-action"]')).focus();
}

/** Handles the editor's own buttons; true when `button` was one of them. */
export function onEditorClick(button) {
  if (button.dataset.action === "add-action") addAction(button.closest("[data-event]"));
  else if (button.dataset.action === "remove-action") removeAction(button.closest('[data-role="action"]'));
  else return false;
  return true;
}

export function onEditorChange(select) {
  if (select.dataset.field === "type") showTarget(select.closest('[data-role="action"]'));
}

function actionOf(row) {
  const type = row.querySelector('[data-field="type"]').value;
  if (type !== "move_to_step") return { type };
  return { type, config: { step_id: row.querySelector('[data-field="step_id"]').value } };
}

/** The form's events as the API expects them: {on_enter: [...], on_turn_complete: [...], ...}. */
export function eventsOf(form) {
  return Object.fromEntries([...form.querySelectorAll("[data-event]")].map((list) => [
    list.dataset.event,
    [...list.querySelectorAll('[data-role="action"]')].map(actionOf),
  ]));
}
