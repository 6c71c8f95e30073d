// `@` autocomplete on a comment's textarea, as an ARIA combobox: typing "@" and the start of
// a name lists the workspace's members who match (a listbox); the arrow keys move through
// them (aria-activedescendant), Enter or Tab writes the chosen "@username", Escape closes.

const SHOWN = 8; // options at most: the list helps finish a name, not browse the members
const TYPED = /(?:^|[^\w@.+-])@([\w.+-]*)$/; // "@" and what follows it, up to the caret

export class MentionBox {
  #options = [];
  #active = -1;
  #start = -1; // where the "@" being completed is

  /** `members()` answers [{username, name}] of the workspace. */
  constructor(textarea, listbox, members) {
    Object.assign(this, { textarea, listbox, members });
    textarea.addEventListener("input", () => this.#suggest());
    textarea.addEventListener("keydown", (event) => this.#key(event));
    textarea.addEventListener("blur", () => this.close());
    listbox.addEventListener("mousedown", (event) => event.preventDefault()); // the textarea keeps the focus
    listbox.addEventListener("click", (event) => {
      const option = event.target.closest('[role="option"]');
      if (option) this.#choose(Number(option.dataset.index));
    });
  }

  get open() {
    return this.textarea.getAttribute("aria-expanded") === "true";
  }

  close() {
    this.#options = [];
    this.#active = -1;
    this.listbox.hidden = true;
    this.listbox.replaceChildren();
    this.textarea.setAttribute("aria-expanded", "false");
    this.textarea.removeAttribute("aria-activedescendant");
  }

  #suggest() {
    const { value, selectionStart } = this.textarea;
    const typed = value.slice(0, selectionStart).match(TYPED);
    if (!typed) return this.close();
    const query = typed[1].toLowerCase();
    this.#start = selectionStart - typed[1].length - 1;
    this.#options = this.members()
      .filter((m) => m.username.toLowerCase().startsWith(query) || m.name.toLowerCase().startsWith(query))
      .slice(0, SHOWN);
    if (!this.#options.length) return this.close();
    this.#active = 0;
    this.listbox.replaceChildren(...this.#options.map((member, index) => {
      const option = document.createElement("li");
      option.id = `${this.listbox.id}-${index}`;
      option.setAttribute("role", "option");
      option.dataset.index = index;
      option.textContent = member.name === member.username ? `@${member.username}` : `@${member.username} (${member.name})`;
      return option;
    }));
    this.listbox.hidden = false;
    this.textarea.setAttribute("aria-expanded", "true");
    this.#highlight();
  }

  #highlight() {
    for (const option of this.listbox.children) {
      option.setAttribute("aria-selected", String(Number(option.dataset.index) === this.#active));
    }
    this.textarea.setAttribute("aria-activedescendant", `${this.listbox.id}-${this.#active}`);
    this.listbox.children[this.#active]?.scrollIntoView({ block: "nearest" });
  }

  #key(event) {
    if (!this.open) return;
    const count = this.#options.length;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      this.#active = (this.#active + (event.key === "ArrowDown" ? 1 : count - 1)) % count;
      this.#highlight();
    } else if (event.key === "Enter" || event.key === "Tab") {
      this.#choose(this.#active);
    } else if (event.key === "Escape") {
      this.close(); // only the list: the dialog stays open
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
  }

  #choose(index) {
    const member = this.#options[index];
    if (!member) return;
    const { value, selectionStart } = this.textarea;
    const written = `@${member.username} `;
    this.textarea.value = value.slice(0, this.#start) + written + value.slice(selectionStart);
    const caret = this.#start + written.length;
    this.textarea.setSelectionRange(caret, caret);
    this.close();
    this.textarea.focus();
  }
}
