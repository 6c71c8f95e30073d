// The live protocol: the board's WebSocket, applied in version order. A gap means a message
// was missed, so the whole board is fetched while later messages wait; after a reconnect
// (socket.js), the snapshot the server sends replaces whatever was missed meanwhile.

import { get } from "./api.js";
import { keepOpen } from "../site/socket.js";

const REFETCH_RETRY_MS = 2000;
const NO_ACCESS_TEXT = "This board is no longer open to you: your access changed, or you signed out. Reload the page to see where you stand.";

export class Live {
  #buffered = [];
  #refetching = false;

  constructor({ workflowId, model, view }) {
    Object.assign(this, { workflowId, model, view });
  }

  connect() {
    keepOpen(`/ws/workflows/${this.workflowId}/`, {
      onMessage: (message) => this.receive(message),
      onState: (state) => {
        this.view.showLive(state);
        if (state === "refused") this.view.showAlert(NO_ACCESS_TEXT, "access");
      },
    });
  }

  receive(message) {
    if (message.type === "board.snapshot") {
      this.#show(message.board);
      this.#drain();
      return;
    }
    if (this.#refetching) {
      this.#buffered.push(message);
      return;
    }
    if (message.version <= this.model.version) return; // already part of what we show
    if (message.version !== this.model.version + 1) {
      this.#buffered.push(message);
      this.refetch();
      return;
    }
    const layout = this.model.layout();
    const touched = this.model.apply(message);
    if (touched === null) this.refetch();
    if (touched !== null && this.model.layout() !== layout) this.view.rebuild(); // a group gained or lost steps
    else this.view.render(touched ?? []);
  }

  /** Fetch the whole board; retried until it succeeds. */
  async refetch() {
    if (this.#refetching) return;
    this.#refetching = true;
    let board;
    try {
      board = await get(`/api/v1/workflows/${this.workflowId}/board/`);
    } catch {
      this.#refetching = false;
      this.view.showAlert("Could not refresh the board. Retrying…", "refresh");
      setTimeout(() => this.refetch(), REFETCH_RETRY_MS);
      return;
    }
    this.#refetching = false;
    // A snapshot that arrived over the socket meanwhile may already be newer.
    if (board.workflow.version >= this.model.version) this.#show(board);
    this.view.hideAlert("refresh");
    this.#drain();
  }

  #show(board) {
    if (this.model.load(board)) this.view.rebuild();
    else this.view.renderAll();
  }

  #drain() {
    const waiting = this.#buffered.sort((a, b) => a.version - b.version);
    this.#buffered = [];
    waiting.forEach((message) => this.receive(message));
  }
}
