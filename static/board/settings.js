/* Step settings: every form writes through the REST step API and shows the server's
   field errors next to the fields ({"code": "invalid", "errors": {field: [...]}}). */
(function () {
  "use strict";

  var root = document.getElementById("step-settings");
  if (!root) return;
  var workflowId = root.dataset.workflowId;
  var alertBox = document.getElementById("settings-alert");
  var FIELDS = ["name", "color", "wip_limit", "pull_from_step_id", "on_full", "is_start_step", "events"];

  var send = window.kandevApi.send;

  function clearErrors(form) {
    form.querySelectorAll("[data-error-for]").forEach(function (p) { p.textContent = ""; });
    form.querySelectorAll("[aria-invalid]").forEach(function (f) { f.removeAttribute("aria-invalid"); });
    alertBox.hidden = true;
    alertBox.textContent = "";
  }

  function showErrors(form, errors) {
    Object.keys(errors).forEach(function (field) {
      var target = form.querySelector('[data-error-for="' + field + '"]') ||
        form.querySelector('[data-error-for="non_field"]');
      var text = [].concat(errors[field]).join(" ");
      target.textContent = target.dataset.errorFor === field ? text : field + ": " + text;
      if (form.elements[field]) form.elements[field].setAttribute("aria-invalid", "true");
    });
  }

  function showAlert(text) {
    alertBox.textContent = text;
    alertBox.hidden = false;
  }

  /* The form's values as the API expects them; {errors} when one cannot even be sent. */
  function values(form) {
    var data = {};
    var errors = {};
    FIELDS.forEach(function (field) {
      var input = form.elements[field];
      var raw = input.value;
      if (field === "wip_limit") {
        data[field] = /^-?\d+$/.test(raw.trim()) ? parseInt(raw, 10) : raw;
      } else if (field === "is_start_step") {
        data[field] = input.checked;
      } else if (field === "pull_from_step_id") {
        data[field] = raw || null;
      } else if (field === "events") {
        try {
          data[field] = JSON.parse(raw);
        } catch (e) {
          errors[field] = ["Not valid JSON."];
        }
      } else {
        data[field] = raw;
      }
    });
    return { data: data, errors: errors };
  }

  function handle(form, result) {
    if (result.ok) {
      location.reload();
      return;
    }
    if (result.data && result.data.errors) {
      showErrors(form, result.data.errors);
    } else {
      showAlert((result.data && result.data.detail) || "The server refused the change (HTTP " + result.status + ").");
    }
  }

  function networkError() {
    showAlert("Network error: nothing was saved. Check your connection and try again.");
  }

  root.addEventListener("submit", function (event) {
    var form = event.target;
    event.preventDefault();
    clearErrors(form);
    var v = values(form);
    if (Object.keys(v.errors).length) {
      showErrors(form, v.errors);
      return;
    }
    var request = form.dataset.role === "new-step-form"
      ? send("POST", "/api/v1/steps/", Object.assign({ workflow_id: workflowId }, v.data))
      : send("PATCH", "/api/v1/steps/" + form.dataset.stepId + "/", v.data);
    request.then(function (result) { handle(form, result); }).catch(networkError);
  });

  root.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-action]");
    if (!button) return;
    var form = button.closest("form");
    var stepId = form.dataset.stepId;
    var forms = Array.prototype.slice.call(root.querySelectorAll('[data-role="step-form"]'));
    var index = forms.indexOf(form);
    clearErrors(form);
    var request;
    if (button.dataset.action === "up" || button.dataset.action === "down") {
      var position = index + (button.dataset.action === "up" ? -1 : 1);
      request = send("PATCH", "/api/v1/steps/" + stepId + "/", { position: position });
    } else if (button.dataset.action === "delete") {
      var name = form.elements.name.defaultValue;
      if (!window.confirm('Delete the step "' + name + '"?')) return;
      var target = form.elements.move_tasks_to.value;
      var query = target ? "?move_tasks_to=" + encodeURIComponent(target) : "";
      request = send("DELETE", "/api/v1/steps/" + stepId + "/" + query);
    } else {
      return;
    }
    request.then(function (result) { handle(form, result); }).catch(networkError);
  });
})();
