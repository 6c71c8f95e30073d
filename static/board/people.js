// Who the board names: the workspace's members as the page was rendered with them (its
// "people" data block), and anyone assigned since, learnt from the members API.

import { get } from "./api.js";

/** A card's assignee at a glance: "Alice Brown" -> "AB", "olivia" -> "OL". */
function initials(name) {
  const words = name.split(/\s+/).filter(Boolean);
  return (words.length > 1 ? words[0][0] + words.at(-1)[0] : name.slice(0, 2)).toUpperCase();
}

export class People {
  #byId = new Map();
  #asked = new Set(); // ids read from the members API once already

  constructor(list, workspaceId) {
    this.workspaceId = workspaceId;
    for (const person of list) this.#byId.set(person.id, { ...person, initials: initials(person.name) });
  }

  get(id) {
    return this.#byId.get(id) ?? null;
  }

  /** Everyone of the workspace, by username (whom a comment may mention). */
  everyone() {
    return [...this.#byId.values()].sort((a, b) => a.username.localeCompare(b.username));
  }

  /** Those who may be assigned (owners and members), by name. */
  assignable() {
    return [...this.#byId.values()].filter((p) => p.assignable).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Someone unknown here is assigned: read the members again, once per such id. Resolves
      true when it learnt anyone (the board then names them). */
  learn(ids) {
    const unknown = ids.filter((id) => !this.#byId.has(id) && !this.#asked.has(id));
    if (!unknown.length) return Promise.resolve(false);
    for (const id of unknown) this.#asked.add(id);
    return get(`/api/v1/workspaces/${this.workspaceId}/members/`)
      .then((members) => {
        for (const { user_id: id, username, role } of members) {
          if (this.#byId.has(id)) continue;
          this.#byId.set(id, { id, username, name: username, initials: initials(username), assignable: role !== "viewer" });
        }
        return unknown.some((id) => this.#byId.has(id));
      })
      .catch(() => false);
  }
}
