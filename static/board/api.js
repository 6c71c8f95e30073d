// The REST API as the board pages call it: JSON, session auth with Django's CSRF header.

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** A write: resolves to {ok, status, data} for every HTTP answer; a network failure rejects. */
export async function send(method, url, body) {
  return write(method, url, body === undefined ? undefined : JSON.stringify(body), "application/json");
}

/** A write whose body is a file's bytes (an import), answered as send() is. */
export async function sendFile(method, url, file, contentType) {
  return write(method, url, file, contentType);
}

/** A write whose body is a form with files (multipart; the browser sets its boundary). */
export async function sendForm(method, url, form) {
  return write(method, url, form);
}

async function write(method, url, body, contentType) {
  const headers = { Accept: "application/json", "X-CSRFToken": csrfToken() };
  if (contentType) headers["Content-Type"] = contentType;
  const response = await fetch(url, { method, credentials: "same-origin", headers, body });
  const data = await response.json().catch(() => ({}));
  return { ok: response.ok, status: response.status, data };
}

/** A read: the JSON body; any failure, HTTP or network, rejects. */
export async function get(url) {
  const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.json();
}

/** The server's reason for refusing a write, as one line for the user. */
export function refusalText({ status, data = {} }) {
  if (data.errors) {
    return Object.entries(data.errors).map(([field, errors]) => `${field}: ${[].concat(errors).join(" ")}`).join(" ");
  }
  return data.detail || `The server refused the change (HTTP ${status}).`;
}
