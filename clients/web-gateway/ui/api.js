// The REST API, as the browser calls it: same origin, signed in by the
// HttpOnly cookie the sign-in link set (never a token in script or URL).
// Every call that changes something carries X-Inspector-Csrf, which the
// gateway requires for cookie-authenticated changes.

export class ApiError extends Error {
  constructor(status, body, text) {
    const error = body && body.error ? body.error : {};
    super(error.message || text || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || `HTTP_${status}`;
    this.details = error.details || {};
    this.helpUrl = error.helpUrl || null;
  }
}

const unauthorizedListeners = [];
export function onUnauthorized(listener) {
  unauthorizedListeners.push(listener);
}

/**
 * Calls the REST API; answers the JSON body (or, with `raw`, the Response).
 * Throws ApiError for an HTTP error.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON
 * @param {{signal?: AbortSignal, raw?: boolean}} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, body, { signal, raw = false } = {}) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET') headers['X-Inspector-Csrf'] = '1';
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const response = await fetch(path, {
    method, headers, body: payload, credentials: 'same-origin', signal,
  });
  if (response.status === 204) return null;
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    if (response.ok && raw) return text;
  }
  if (!response.ok) {
    if (response.status === 401) unauthorizedListeners.forEach((l) => l());
    throw new ApiError(response.status, json, text);
  }
  return json;
}

export const enc = encodeURIComponent;

/**
 * Cancels a call this page sent with POST /mcp (its JSON-RPC id
 * `requestId`). The cancel and the call are separate requests, so the
 * cancel can reach the daemon first and find nothing to cancel; while
 * `isPending()` says the call still waits for its answer, the cancel is
 * asked again, sooner at first, until the daemon finds the call.
 * Answers the daemon's state of the call when cancelled
 * ('REQUEST_STATE_PENDING': taken out of the queue, never sent;
 * 'REQUEST_STATE_IN_PROGRESS': the server was sent notifications/cancelled),
 * or null when the call ended first.
 * @param {string} serverId
 * @param {string | number} requestId
 * @param {string} reason
 * @param {() => boolean} isPending
 * @returns {Promise<string | null>}
 */
export async function cancelSentCall(serverId, requestId, reason, isPending) {
  for (let pause = 20; ; pause = Math.min(pause * 2, 500)) {
    const answer = await api('POST', `/api/servers/${enc(serverId)}/cancel`, { requestId: JSON.stringify(requestId), reason });
    if (answer && answer.cancelled) return answer.state || 'REQUEST_STATE_IN_PROGRESS';
    if (!isPending()) return null;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

export function query(params) {
  const parts = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    parts.push(`${enc(key)}=${enc(value)}`);
  }
  return parts.length ? `?${parts.join('&')}` : '';
}
