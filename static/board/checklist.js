// The task detail's checklist: items ticked, added, edited, moved up or down and deleted,
// each write at once through the REST API (the card's "done/total" follows from the board's
// live message). Every control is a native checkbox, button or input, so the keyboard works
// as it does everywhere; after a write the focus stays on the item it was about.

import { send } from "./api.js";
import { focusPlace, restoreFocus } from "./focus.js";

export class Checklist {
  #taskId = null;
  #items = [];
  #editing = null; // the id of the item whose text is being edited

  /** write(method, url, body): the detail's write, which shows a refusal and answers null. */
  constructor(dialog, { write }) {
    this.write = write;
    this.list = dialog.querySelector('[data-role="checklist-items"]');
    this.progress = dialog.querySelector('[data-role="checklist-progress"]');
    this.addForm = dialog.querySelector('[data-role="checklist-add"]'); // none for viewers
    this.template = document.getElementById("checklist-item-template");
    this.addForm?.addEventListener("submit", (event) => {
      event.preventDefault();
      this.#add();
    });
    this.list.addEventListener("change", (event) => {
      if (event.target.matches('[data-role="done"]')) this.#tick(event.target.closest("li").dataset.itemId, event.target.checked);
    });
    this.list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-checklist]");
      if (button) this.#act(button.dataset.checklist, button.closest("li").dataset.itemId);
    });
    this.list.addEventListener("keydown", (event) => {
      if (!event.target.matches('[data-role="edit-text"]')) return;
      if (event.key === "Enter") {
        event.preventDefault();
        this.#act("save", this.#editing);
      } else if (event.key === "Escape") {
        event.preventDefault(); // the dialog stays open: only the edit is cancelled
        this.#act("cancel", this.#editing);
      }
    });
  }

  /** Show `taskId`'s items (again): on open, and when the board says the task changed. */
  async load(taskId) {
    if (taskId !== this.#taskId) this.#editing = null;
    this.#taskId = taskId;
    let page;
    try {
      const result = await send("GET", `/api/v1/tasks/${taskId}/checklist/?page_size=1000`);
      if (!result.ok) return;
      page = result.data;
    } catch {
      return; // the next change loads them again
    }
    if (this.#taskId !== taskId) return;
    this.#render(page.results);
  }

  #render(items, focus = null) {
    const place = focus ?? focusPlace(this.list, "data-item-id");
    this.#items = items;
    const done = items.filter((item) => item.done).length;
    this.progress.textContent = items.length ? `${done}/${items.length} done` : "";
    this.list.replaceChildren(...items.map((item, index) => this.#itemElement(item, index, items.length)));
    restoreFocus(this.list, "data-item-id", place);
  }

  #itemElement(item, index, count) {
    const li = this.template.content.cloneNode(true).firstElementChild;
    li.dataset.itemId = item.id;
    li.classList.toggle("is-done", item.done);
    const text = li.querySelector('[data-role="text"]');
    text.textContent = item.text;
    const box = li.querySelector('[data-role="done"]');
    if (!box) { // a viewer's list: its state in words
      li.querySelector('[data-role="state"]').textContent = item.done ? "Done:" : "To do:";
      return li;
    }
    box.id = `checklist-item-${item.id}`;
    box.checked = item.done;
    text.htmlFor = box.id;
    const name = `“${item.text}”`;
    const button = (action) => li.querySelector(`[data-checklist="${action}"]`);
    button("edit").setAttribute("aria-label", `Edit ${name}`);
    button("up").setAttribute("aria-label", `Move ${name} up`);
    button("down").setAttribute("aria-label", `Move ${name} down`);
    button("delete").setAttribute("aria-label", `Delete ${name}`);
    button("up").disabled = index === 0;
    button("down").disabled = index === count - 1;
    if (this.#editing === item.id) this.#editor(li, item);
    return li;
  }

  /** The item's text as an input, with Save and Cancel (Enter and Escape too). */
  #editor(li, item) {
    const input = document.createElement("input");
    input.dataset.role = "edit-text";
    input.maxLength = 500;
    input.value = item.text;
    input.setAttribute("aria-label", `Text of “${item.text}”`);
    const save = Object.assign(document.createElement("button"), { type: "button", textContent: "Save item" });
    const cancel = Object.assign(document.createElement("button"), { type: "button", textContent: "Cancel" });
    save.dataset.checklist = "save";
    cancel.dataset.checklist = "cancel";
    for (const b of [save, cancel]) b.className = "button button-small button-quiet";
    li.querySelector(".checklist-actions").replaceChildren(save, cancel);
    li.querySelector('[data-role="text"]').replaceWith(input);
  }

  async #add() {
    const input = this.addForm.elements.text;
    const result = await this.write("POST", `/api/v1/tasks/${this.#taskId}/checklist/`, { text: input.value });
    if (!result) return;
    input.value = "";
    this.#render([...this.#items, result.data]);
    input.focus();
  }

  async #tick(itemId, done) {
    const result = await this.write("PATCH", `/api/v1/checklist-items/${itemId}/`, { done });
    if (!result) {
      this.#render(this.#items, { id: itemId, control: '[data-role="done"]' }); // back as it was
      return;
    }
    this.#render(this.#items.map((item) => (item.id === itemId ? result.data : item)));
  }

  async #act(action, itemId) {
    const index = this.#items.findIndex((item) => item.id === itemId);
    if (index < 0) return;
    const url = `/api/v1/checklist-items/${itemId}/`;
    if (action === "edit" || action === "cancel") {
      this.#editing = action === "edit" ? itemId : null;
      const selector = action === "edit" ? '[data-role="edit-text"]' : '[data-checklist="edit"]';
      this.#render(this.#items, { id: itemId, control: selector });
    } else if (action === "save") {
      const text = this.list.querySelector(`li[data-item-id="${itemId}"] [data-role="edit-text"]`).value;
      const result = await this.write("PATCH", url, { text });
      if (!result) return;
      this.#editing = null;
      this.#render(this.#items.map((item) => (item.id === itemId ? result.data : item)), { id: itemId, control: '[data-checklist="edit"]' });
    } else if (action === "up" || action === "down") {
      const position = index + (action === "up" ? -1 : 1);
      const result = await this.write("PATCH", url, { position });
      if (!result) return;
      const items = this.#items.filter((item) => item.id !== itemId);
      items.splice(position, 0, result.data);
      const edge = position === 0 || position === items.length - 1;
      const selector = `[data-checklist="${edge ? (action === "up" ? "down" : "up") : action}"]`; // a disabled button cannot keep it
      this.#render(items.map((item, i) => ({ ...item, position: i })), { id: itemId, control: selector });
    } else if (action === "delete") {
      const result = await this.write("DELETE", url);
      if (!result) return;
      const items = this.#items.filter((item) => item.id !== itemId).map((item, i) => ({ ...item, position: i }));
      const next = items[Math.min(index, items.length - 1)];
      this.#render(items, next ? { id: next.id, control: '[data-role="done"]' } : null);
      if (!next) this.addForm.elements.text.focus();
    }
  }
}
