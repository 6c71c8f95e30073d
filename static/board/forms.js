// The home and archive pages' forms write through the REST API: each form names its request
// (data-api-method, data-api-url). A success reloads the page, which the server renders anew;
// a refusal is shown in the form, each field's errors under the field's own label.

import { refusalText, send, sendFile } from "./api.js";

/** The form's fields as the API's JSON body; a `data-omit-empty` field left empty is not sent. */
function fields(form) {
  const data = {};
  for (const field of form.elements) {
    if (!field.name || field.type === "file") continue;
    if (field.value === "" && "omitEmpty" in field.dataset) continue;
    data[field.name] = field.value;
  }
  return data;
}

/** Browsers label YAML files variously (application/x-yaml, text/yaml or nothing): name the
    format the server reads by the file's extension. */
const documentType = (file) => (/\.json$/i.test(file.name) ? "application/json" : "application/yaml");

function request(form) {
  const { apiMethod, apiUrl, upload } = form.dataset;
  if (upload === undefined) return send(apiMethod, apiUrl, apiMethod === "DELETE" ? undefined : fields(form));
  const file = form.elements[upload].files[0];
  return file ? sendFile(apiMethod, apiUrl, file, documentType(file)) : null;
}

function show(form, lines) {
  const box = form.querySelector('[data-error-for="non_field"]');
  box.textContent = lines.join("\n");
}

function showRefusal(form, result) {
  const errors = result.data.errors;
  if (!errors) return show(form, [refusalText(result)]);
  show(form, Object.entries(errors).map(([name, messages]) => {
    const field = form.elements[name];
    field?.setAttribute("aria-invalid", "true");
    const label = field?.labels?.[0]?.textContent ?? name;
    return `${label}: ${[].concat(messages).join(" ")}`;
  }));
}

document.addEventListener("submit", async (event) => {
  const form = event.target.closest("form[data-api-url]");
  if (!form) return;
  event.preventDefault();
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
  for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
  show(form, []);
  const pending = request(form);
  if (!pending) return show(form, ["Choose a file to import."]);
  const button = form.querySelector('[type="submit"]');
  button.disabled = true;
  try {
    const result = await pending;
    if (result.ok) {
      location.reload();
      return;
    }
    showRefusal(form, result);
  } catch {
    show(form, ["Network error: nothing was saved. Check your connection and try again."]);
  }
  button.disabled = false;
});

// A select with data-describe shows its chosen option's data-description in the named element.
document.addEventListener("change", (event) => {
  const select = event.target.closest("select[data-describe]");
  if (!select) return;
  document.getElementById(select.dataset.describe).textContent = select.selectedOptions[0]?.dataset.description ?? "";
});
