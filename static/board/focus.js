// The task dialog's lists (comments, checklist, attachments, agent sessions) are built anew
// whenever their data changes, a colleague's write included. Taking the old items out blurs
// the one in focus; these two give the focus back, so a person keeps their place.

// How a control is told apart from the others in its item, in this order.
const CONTROL = ["action", "checklist", "role"];

/**
 * Where the focus is in `list`: the element, the id of its item (the item carries it in
 * `attribute`) and a selector for the same control in the item built anew; null elsewhere.
 */
export function focusPlace(list, attribute) {
  const element = document.activeElement;
  if (!element || !list.contains(element)) return null;
  const key = CONTROL.find((name) => element.dataset[name]);
  const control = key ? `[data-${key}="${element.dataset[key]}"]` : element.localName;
  return { element, id: element.closest(`[${attribute}]`)?.getAttribute(attribute), control };
}

/**
 * Give the focus back to `place` in `list` built anew: to the element itself if it was kept (an
 * edit in progress keeps its caret), else to the same control of the same item. A place can
 * also be written by hand, `{ id, control }`, to send the focus on after a write. False when
 * nothing there can take it (the item is gone, or the control is hidden now).
 */
export function restoreFocus(list, attribute, place) {
  if (!place) return false;
  const target = place.element?.isConnected && list.contains(place.element)
    ? place.element
    : place.id && list.querySelector(`[${attribute}="${CSS.escape(place.id)}"] ${place.control}`);
  target?.focus();
  return Boolean(target) && document.activeElement === target;
}
