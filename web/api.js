// API v1 over fetch, same origin only. The token (tokens mode) lives in this
// module's memory and nowhere else: not in storage, not in the URL, so a
// reload or a closed tab forgets it.

let token = null;
const unauthorizedListeners = new Set();

export function setToken(value) { token = value || null; }
export function hasToken() { return token !== null; }
export function onUnauthorized(listener) { unauthorizedListeners.add(listener); }

export class APIError extends Error {
  constructor(status, code, message, retryAfter = null) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  // Worth trying again with the same request: the server or the network
  // failed, or asked to wait.
  get isTransient() { return this.status === 0 || this.status === 429 || this.status >= 500; }
}

export const path = {
  conversation: (cid) => `/v1/conversations/${encodeURIComponent(cid)}`,
  messages: (cid) => `/v1/conversations/${encodeURIComponent(cid)}/messages`,
  events: (cid) => `/v1/conversations/${encodeURIComponent(cid)}/events`,
  readMarker: (cid, uid) => `/v1/conversations/${encodeURIComponent(cid)}/members/${encodeURIComponent(uid)}/read`,
  inbox: (uid) => `/v1/users/${encodeURIComponent(uid)}/conversations`,
  inboxEvents: (uid) => `/v1/users/${encodeURIComponent(uid)}/events`,
};

export function query(parameters) {
  const pairs = Object.entries(parameters).filter(([, v]) => v !== null && v !== undefined);
  return pairs.length ? "?" + pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&") : "";
}

// One request; resolves with the JSON body of a 2xx, rejects with APIError
// (status 0 when the server could not be reached).
export async function request(method, url, { body, signal } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method, headers, signal, cache: "no-store", credentials: "omit",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new APIError(0, "unreachable", "the server cannot be reached");
  }
  let json = null;
  try { json = await response.json(); } catch { json = null; }
  if (!response.ok) {
    const error = json?.error ?? {};
    const retryAfter = Number(response.headers.get("Retry-After")) || null;
    const failure = new APIError(response.status, error.code, error.message, retryAfter);
    if (response.status === 401) unauthorizedListeners.forEach((listener) => listener(failure));
    throw failure;
  }
  return json;
}

export const get = (url, options) => request("GET", url, options);

// A page of a conversation for a MessageWindow request.
export function page(cid, windowRequest, signal) {
  const parameters = { limit: windowRequest.limit };
  if (windowRequest.cursor !== "newest") parameters[windowRequest.cursor] = windowRequest.id;
  if (windowRequest.window) parameters.window = windowRequest.window;
  return get(path.messages(cid) + query(parameters), { signal });
}

// Which mode the server is in, asked without a token: tokens mode refuses
// (401), open mode says `me` needs a name (400).
export async function probeMode() {
  try {
    await get(path.inbox("me") + query({ limit: 1 }));
    return "tokens";
  } catch (error) {
    if (error.status === 401) return "tokens";
    if (error.status === 400) return "open";
    throw error;
  }
}
