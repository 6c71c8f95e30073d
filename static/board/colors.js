// Step colours come as data-step-color, not style attributes (which a strict Content Security
// Policy forbids); setting a property through the CSSOM is allowed, and the CSS reads it.

export function paintStepColors(elements) {
  for (const element of elements) element.style.setProperty("--step-color", element.dataset.stepColor);
}
