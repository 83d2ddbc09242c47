// The detail pane of a message (timeline and history): the request and its
// response in the JSON tree viewer, "copy as curl" and "copy as inspectorctl".
import { h, copyText, shellQuote } from './util.js';
import { serverName } from './state.js';
import { jsonTree } from './jsonview.js';


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
 *   meta?: Object<string, string>, extra?: Node[], before?: Node|Node[], after?: Node|Node[]}} message
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

