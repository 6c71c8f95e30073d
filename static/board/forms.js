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

/** Browsers label YAML and CSV files variously (application/x-yaml, text/yaml,
    application/vnd.ms-excel or nothing): name the format the server reads by the extension. */
function documentType(file) {
  if (/\.json$/i.test(file.name)) return "application/json";
  return /\.csv$/i.test(file.name) ? "text/csv" : "application/yaml";
}

/** An import form sends to the importer its `data-import-kind` select names (a CSV file into
    the board its `data-import-into` select names, if any); its Preview button asks for a dry
    run, which writes nothing. */
function target(form, preview) {
  const kind = form.querySelector("[data-import-kind]");
  const into = form.querySelector("[data-import-into]");
  const url = new URL(kind ? kind.value : form.dataset.apiUrl, location.origin);
  if (into && !into.disabled && into.value) url.searchParams.set("workflow", into.value);
  if (preview) url.searchParams.set("dry_run", "1");
  return url.pathname + url.search;
}

// Only a CSV import may go into a board that exists.
document.addEventListener("change", (event) => {
  const kind = event.target.closest("[data-import-kind]");
  const into = kind?.form.querySelector("[data-import-into]");
  if (into) into.disabled = !kind.value.endsWith("/import/csv/");
});

function request(form, preview) {
  const { apiMethod, upload } = form.dataset;
  const apiUrl = target(form, preview);
  if (upload === undefined) return send(apiMethod, apiUrl, apiMethod === "DELETE" ? undefined : fields(form));
  const file = form.elements[upload].files[0];
  return file ? sendFile(apiMethod, apiUrl, file, documentType(file)) : null;
}

/** What an import did, or (a preview) would do: the tasks created, queued and archived, and
    each row a full limit refused. A kandev export answers per board; the others for one board. */
function importText(data, preview) {
  const results = data.workflows ? data.workflows.map((w) => w.tasks) : [data];
  const sum = (key) => results.reduce((n, r) => n + (r[key] || 0), 0);
  const refused = results.reduce((n, r) => n + r.refused.length, 0);
  const lines = [
    `${preview ? "Preview, nothing imported yet: would create" : "Imported:"} ${sum("created")} tasks, ` +
      `${sum("queued")} queued, ${sum("archived")} archived, ${refused} refused.`,
  ];
  for (const r of results) for (const refusal of r.refused) lines.push(`Row ${refusal.row}: ${refusal.reason}`);
  const skipped = Object.entries(data.skipped || {}).filter(([, n]) => n > 0);
  if (skipped.length) {
    const counts = skipped.map(([kind, n]) => `${n} ${kind.replace("_", " ")}`);
    lines.push(`Not imported (no place in kandev yet): ${counts.join(", ")}.`);
  }
  if (data.skipped_columns?.length) lines.push(`Columns skipped: ${data.skipped_columns.join(", ")}.`);
  return lines.join("\n");
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
  const preview = event.submitter?.name === "preview";
  const previewBox = form.querySelector("[data-import-preview]");
  if (previewBox) previewBox.textContent = "";
  const pending = request(form, preview);
  if (!pending) return show(form, ["Choose a file to import."]);
  const button = form.querySelector('[type="submit"]');
  button.disabled = true;
  try {
    const result = await pending;
    if (result.ok && (preview || result.data.refused?.length)) {
      // A preview, or an import some of whose rows were refused: say which before moving on.
      previewBox.textContent = importText(result.data, preview);
    } else if (result.ok) {
      location.reload();
      return;
    } else {
      showRefusal(form, result);
    }
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
