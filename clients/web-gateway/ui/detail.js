// The detail pane of a message (timeline and history): the request and its
// response in the JSON tree viewer, "copy as curl" and "copy as inspectorctl",
// and the HTTP exchanges that carried them when recorded (HTTP upstreams
// and front doors).
import { h, clear, copyText, shellQuote } from './util.js';
import { serverName } from './state.js';
import { jsonTree } from './jsonview.js';
import { api, query } from './api.js';

/**
 * An HTTP exchange as history records it (McpMessage.http): secret header
 * values arrive masked ("Bearer ***(40 chars)").
 * @typedef {{method?: string, path?: string, status?: number,
 *   requestHeaders?: Object<string, string>, responseHeaders?: Object<string, string>}} HttpExchange
 */

/** @param {HttpExchange} http */
export function httpLine(http) {
  return `HTTP: ${http.method || ''} ${http.path || ''} → ${http.status ? http.status : 'not answered yet'}`;
}

/**
 * @param {string} caption
 * @param {Object<string, string>|undefined} headers
 */
function headerList(caption, headers) {
  const names = Object.keys(headers || {}).sort();
  if (!names.length) return null;
  return h('div', { class: 'http-headers' },
    h('h5', {}, caption),
    h('dl', {}, names.map((name) => [h('dt', {}, name), h('dd', {}, String(headers[name]))])));
}

/**
 * The exchanges that carried a message and its answer: "HTTP: POST /mcp →
 * 200" with the headers each way. `exchanges`: [label, exchange] pairs
 * (a missing exchange is skipped); nothing at all when none is there.
 * @param {Array<[string, HttpExchange|undefined|null]>} exchanges
 * @param {HTMLElement} [into] fills this element instead of a new one
 * @returns {HTMLElement}
 */
export function httpSection(exchanges, into) {
  const present = exchanges.filter(([, http]) => http && http.method);
  const box = into || h('section', { class: 'msg-http', 'aria-label': 'HTTP exchange' });
  clear(box, present.length ? [h('h4', {}, 'HTTP'), present.map(([label, http]) =>
    h('div', { class: 'http-exchange' },
      h('p', { class: 'http-line' }, h('code', {}, httpLine(http)), ` (${label})`),
      headerList('Request headers', http.requestHeaders),
      headerList('Response headers', http.responseHeaders)))] : []);
  return box;
}

/**
 * httpSection for recorded messages known by id (0: none): looked up in
 * history once the pane is open; the section stays empty for messages
 * that did not cross HTTP.
 * @param {Array<[string, number]>} ids label and message id
 * @returns {HTMLElement}
 */
export function recordedHttpSection(ids) {
  const box = h('section', { class: 'msg-http', 'aria-label': 'HTTP exchange' });
  const wanted = ids.filter(([, id]) => id > 0);
  Promise.all(wanted.map(async ([label, id]) => {
    try {
      const answer = await api('GET', `/api/messages${query({ messageId: id, limit: 1 })}`);
      const message = answer && answer.messages && answer.messages[0];
      return /** @type {[string, HttpExchange|undefined]} */ ([label, message ? message.http : undefined]);
    } catch {
      return /** @type {[string, HttpExchange|undefined]} */ ([label, undefined]);
    }
  })).then((found) => httpSection(found, box));
  return box;
}


export function curlFor(serverId, raw) {
  return `curl -sS -H "X-Session-Token: $(cat "\${XDG_STATE_HOME:-$HOME/.local/state}/inspector/token")" ` +
    `-H 'Content-Type: application/json' --data-raw ${shellQuote(raw)} ` +
    `${shellQuote(`${location.origin}/mcp?serverId=${encodeURIComponent(serverId)}`)}`;
}

export function inspectorctlFor(serverId, raw) {
  const name = serverName(serverId) || serverId;
  try {
    const message = JSON.parse(raw);
    if (message.method === 'tools/call' && message.params && message.params.name) {
      return `inspectorctl call ${shellQuote(name)} ${shellQuote(message.params.name)} --json ${shellQuote(JSON.stringify(message.params.arguments || {}))}`;
    }
    if (message.method) {
      return `inspectorctl rpc ${shellQuote(name)} ${shellQuote(message.method)}` +
        (message.params !== undefined ? ` --params ${shellQuote(JSON.stringify(message.params))}` : '');
    }
  } catch { /* not JSON: send it as it is */ }
  return `inspectorctl rpc ${shellQuote(name)} ${shellQuote(raw)}`;
}

// `request` and `response`: raw JSON texts (either may be missing).
// `extra`: more buttons for the message (e.g. "Break on this"); `before`
// and `after`: more content above and below the request and response.
/**
 * @param {{title: string, serverId?: string, request?: string, response?: string,
 *   meta?: Object<string, string>, extra?: Node[], before?: Node|(Node|null)[], after?: Node|Node[]}} message
 * @returns {HTMLElement}
 */
export function detailPane({ title, serverId, request, response, meta, extra, before, after }) {
  const sendable = request && (() => {
    try {
      const m = JSON.parse(request);
      return m.method !== undefined;
    } catch {
      return false;
    }
  })();
  return h('div', { class: 'msg-detail' },
    h('h3', { tabindex: '-1' }, title),
    meta ? h('dl', { class: 'meta' }, Object.entries(meta).filter(([, v]) => v !== undefined && v !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])) : null,
    sendable ? h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => copyText(curlFor(serverId, request)) }, 'Copy as curl'),
      h('button', { type: 'button', onclick: () => copyText(inspectorctlFor(serverId, request)) }, 'Copy as inspectorctl')) : null,
    extra && extra.length ? h('div', { class: 'actions' }, extra) : null,
    before || null,
    request ? [h('h4', {}, 'Request'), jsonTree(request, { label: 'Request' })] : null,
    response ? [h('h4', {}, 'Response'), jsonTree(response, { label: 'Response' })] : null,
    after || null);
}

