// A page's live WebSocket that comes back: after a close it connects again, waiting half a
// second, then twice as long each time, at most ten seconds. The server sends what was
// missed on every connect, so a page needs nothing else to catch up.

const MAX_BACKOFF_MS = 10000;

/** The badge's words for each state a socket reports. */
export const LIVE_TEXT = { connecting: "Connecting…", live: "Live", offline: "Offline, reconnecting…" };

/** Keep a socket to `path` open; `onState` hears "connecting", "live" and "offline". */
export function keepOpen(path, { onMessage, onState }) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const connect = (attempt) => {
    const socket = new WebSocket(`${scheme}//${location.host}${path}`);
    onState("connecting");
    socket.addEventListener("open", () => {
      attempt = 0;
      onState("live");
    });
    socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
    socket.addEventListener("close", () => {
      onState("offline");
      setTimeout(() => connect(attempt + 1), Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt));
    });
  };
  connect(0);
}
