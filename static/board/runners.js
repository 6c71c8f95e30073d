// "No runner has been seen": while agent sessions wait for a runner, the header says when a
// runner last asked this workspace for work (the workspace's `runner_seen_at`), so a team
// without one knows why its cards say "waiting for a runner".

import { get } from "./api.js";
import { ageText } from "./render.js";

const RECHECK_MS = 30_000; // a runner that polls is noted at most every 15 s

export class RunnerNote {
  #checkedAt = 0;
  #unclaimed = 0;

  constructor(element, workspaceId) {
    Object.assign(this, { element, workspaceId });
  }

  /** Called after every render with the board's agent figures. */
  async update(figures) {
    const unclaimed = figures?.workspace_unclaimed ?? 0;
    const changed = unclaimed !== this.#unclaimed;
    this.#unclaimed = unclaimed;
    if (!unclaimed) {
      this.element.hidden = true;
      return;
    }
    if (!changed && Date.now() - this.#checkedAt < RECHECK_MS) return;
    this.#checkedAt = Date.now();
    const workspace = await get(`/api/v1/workspaces/${this.workspaceId}/`).catch(() => null);
    if (!workspace) return;
    const seen = workspace.runner_seen_at;
    const stale = !seen || Date.now() - Date.parse(seen) > RECHECK_MS * 2;
    this.element.hidden = !stale;
    this.element.textContent = !seen
      ? "No runner has been seen in this workspace: start one to run these sessions."
      : `No runner has asked for work since ${ageText(seen)} ago.`;
  }
}
