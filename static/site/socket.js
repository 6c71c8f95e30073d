// A page's live WebSocket that comes back: after a close it connects again, waiting half a
// second, then twice as long each time, at most ten seconds. The server sends what was
// missed on every connect, so a page needs nothing else to catch up. A socket the server
// closes with 4403 has lost its access (the membership went, the person signed out, the
// token was revoked): it stays closed, and the page hears "refused".

const MAX_BACKOFF_MS = 10000;
const NO_ACCESS = 4403;

/** The live badge's words for each state a socket reports. */
export const LIVE_TEXT = { connecting: "Connecting…", live: "Live", offline: "Offline, reconnecting…", refused: "No access" };

/** Keep a socket to `path` open; `onState` hears "connecting", "live", "offline" and "refused". */
export function keepOpen(path, { onMessage, onState = () => {} }) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const connect = (attempt) => {
    const socket = new WebSocket(`${scheme}//${location.host}${path}`);
    onState("connecting");
    socket.addEventListener("open", () => {
      attempt = 0;
      onState("live");
    });
    socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
    socket.addEventListener("close", (event) => {
      if (event.code === NO_ACCESS) {
        onState("refused");
        return;
      }
      onState("offline");
      setTimeout(() => connect(attempt + 1), Math.min(MAX_BACKOFF_MS, 500 * 2 ** attempt));
    });
  };
  connect(0);
}
