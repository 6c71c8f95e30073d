// The task detail's attachments: the list (name, size, who, when, a download link), an
// upload form for members and owners, and Delete (with a confirmation) on the files this
// person may delete: their own, or any when they own the workspace. The server decides again.

import { refusalText, send, sendForm } from "./api.js";
import { focusPlace, restoreFocus } from "./focus.js";

const UNITS = ["bytes", "KB", "MB", "GB"];

/** "512 bytes", "1.5 MB". */
export function sizeText(size) {
  let value = size;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} ${value === 1 ? "byte" : "bytes"}` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

export class TaskAttachments {
  #taskId = null;

  constructor(dialog) {
    this.section = dialog.querySelector('[data-role="attachments"]');
    this.part = (role) => this.section.querySelector(`[data-role="${role}"]`);
    this.form = this.part("attachment-form"); // none for viewers
    this.username = this.section.dataset.username;
    this.isOwner = this.section.dataset.isOwner === "true";
    this.form?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#upload();
    });
    this.section.addEventListener("click", (event) => this.#click(event));
  }

  /** Show the attachments of task `taskId` (again: after a change, the list is read anew). */
  async load(taskId) {
    if (taskId !== this.#taskId) {
      this.#taskId = taskId;
      this.part("attachment-status").textContent = "";
      this.part("attachment-list").replaceChildren();
      this.part("no-attachments").hidden = false;
    }
    let page;
    try {
      const result = await send("GET", `/api/v1/tasks/${taskId}/attachments/?page_size=1000`);
      if (!result.ok) return;
      page = result.data;
    } catch {
      return; // the next change loads them again
    }
    if (this.#taskId !== taskId) return;
    const list = this.part("attachment-list");
    const place = focusPlace(list, "data-attachment-id");
    const template = document.getElementById("attachment-item-template");
    list.replaceChildren(...page.results.map((attachment) => {
      const item = template.content.cloneNode(true).firstElementChild;
      item.dataset.attachmentId = attachment.id;
      const link = item.querySelector('[data-role="link"]');
      link.href = attachment.url;
      link.textContent = attachment.name;
      const when = new Date(attachment.created_at).toLocaleString();
      item.querySelector('[data-role="about"]').textContent =
        `${sizeText(attachment.size)} · ${attachment.uploaded_by ?? "someone who left"} · ${when}`;
      const remove = item.querySelector('[data-action="delete-attachment"]');
      if (remove) {
        remove.hidden = !(this.isOwner || attachment.uploaded_by === this.username);
        remove.setAttribute("aria-label", `Delete ${attachment.name}`);
        item.querySelector('[data-role="confirm-text"]').textContent = `Delete ${attachment.name} for good?`;
      }
      return item;
    }));
    this.part("no-attachments").hidden = page.results.length > 0;
    // A confirmation in progress is not kept: the file's link takes the focus instead.
    if (place && !restoreFocus(list, "data-attachment-id", place)) {
      restoreFocus(list, "data-attachment-id", { ...place, control: '[data-role="link"]' });
    }
  }

  async #upload() {
    const input = this.form.elements.file;
    const error = this.part("attachment-form").querySelector('[data-error-for="file"]');
    error.textContent = "";
    input.removeAttribute("aria-invalid");
    if (!input.files.length) {
      this.#refused(input, error, "Choose a file to attach.");
      return;
    }
    const taskId = this.#taskId;
    const name = input.files[0].name;
    this.part("attachment-status").textContent = `Uploading ${name}…`;
    let result;
    try {
      result = await sendForm("POST", `/api/v1/tasks/${taskId}/attachments/`, new FormData(this.form));
    } catch {
      this.#refused(input, error, "Network error: the file was not attached. Check your connection and try again.");
      return;
    }
    if (!result.ok) {
      this.#refused(input, error, result.data.errors?.file?.join(" ") ?? refusalText(result));
      return;
    }
    this.form.reset();
    this.part("attachment-status").textContent = `Attached ${result.data.name}.`;
    await this.load(taskId);
  }

  #refused(input, error, text) {
    this.part("attachment-status").textContent = "";
    error.textContent = text;
    input.setAttribute("aria-invalid", "true");
    input.focus();
  }

  async #click(event) {
    const button = event.target.closest("button[data-action]");
    const item = button?.closest("[data-attachment-id]");
    if (!item) return;
    const confirm = item.querySelector('[data-role="confirm"]');
    const remove = item.querySelector('[data-action="delete-attachment"]');
    if (button.dataset.action === "delete-attachment") {
      confirm.hidden = false;
      remove.hidden = true;
      confirm.querySelector('[data-action="confirm-delete-attachment"]').focus();
    } else if (button.dataset.action === "keep-attachment") {
      confirm.hidden = true;
      remove.hidden = false;
      remove.focus();
    } else if (button.dataset.action === "confirm-delete-attachment") {
      const name = item.querySelector('[data-role="link"]').textContent;
      let result;
      try {
        result = await send("DELETE", `/api/v1/attachments/${item.dataset.attachmentId}/`);
      } catch {
        result = { ok: false, status: 0, data: { detail: "Network error: the file was not deleted." } };
      }
      this.part("attachment-status").textContent = result.ok ? `Deleted ${name}.` : refusalText(result);
      if (result.ok) {
        item.remove();
        this.part("no-attachments").hidden = this.part("attachment-list").children.length > 0;
        (this.form?.elements.file ?? this.section.querySelector("a"))?.focus();
      }
    }
  }
}
