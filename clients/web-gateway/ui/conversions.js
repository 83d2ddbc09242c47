// Conversions (front doors): stdio servers served as Streamable HTTP
// endpoints by BridgeService, and each server's own front door URLs on
// this listener.
import { api, enc } from './api.js';
import { store, loadServers } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, copyText } from './util.js';

let root = null;
// What the last conversion said (its URL, and its token, shown once): kept
// across the redraw that lists it (without the form once no stdio server
// is left), until the view is left.
/** @type {Node|null} */
let outcome = null;

export function mount(container) {
  root = container;
  load();
}

export function unmount() {
  root = null;
  outcome = null;
}

async function load() {
  let conversions = [];
  let problem = null;
  try {
    const answer = await api('GET', '/convert');
    conversions = answer.servers || [];
  } catch (error) {
    problem = error;
  }
  if (!root) return;
  const stdio = store.servers.filter((s) => s.transport === 'stdio');
  const pick = h('select', {}, stdio.map((s) => h('option', { value: s.id }, s.name)));
  const sse = h('input', { type: 'checkbox', id: 'conv-sse' });
  const token = h('input', { type: 'checkbox', id: 'conv-token' });
  const result = h('div', { role: 'status' }, outcome);
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-conversions' }, 'Conversions and front doors')),
    h('p', { class: 'hint' }, 'Every server is also an MCP endpoint on this address, for any MCP client: its front door. A conversion serves a stdio server on a port of its own.'),
    h('div', { class: 'table-wrap' }, h('table', {},
      h('caption', {}, 'Front doors'),
      h('thead', {}, h('tr', {}, ['Server', 'Streamable HTTP', 'Legacy SSE'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, store.servers.map((s) => {
        const base = `${location.origin}/servers/${encodeURIComponent(s.name)}`;
        return h('tr', {}, h('th', { scope: 'row' }, s.name),
          h('td', {}, h('button', { type: 'button', class: 'link mono', onclick: () => copyText(`${base}/mcp`), 'aria-label': `Copy ${s.name} Streamable HTTP URL` }, `${base}/mcp`)),
          h('td', {}, h('button', { type: 'button', class: 'link mono', onclick: () => copyText(`${base}/sse`), 'aria-label': `Copy ${s.name} SSE URL` }, `${base}/sse`)));
      })))),
    h('h3', {}, 'Running conversions'),
    problem ? errorBox(problem) : conversions.length === 0 ? h('p', { class: 'empty' }, 'None running.') : h('div', { class: 'table-wrap' }, h('table', {},
      h('caption', { class: 'offscreen' }, 'Running conversions'),
      h('thead', {}, h('tr', {}, ['Name', 'URL', 'Sessions', 'SSE', 'Token', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, conversions.map((c) => h('tr', {},
        h('th', { scope: 'row' }, c.serverName), h('td', { class: 'mono' }, c.url), h('td', {}, String(c.sessions || 0)),
        h('td', {}, c.sse ? c.sseUrl || 'yes' : 'no'), h('td', {}, c.requireToken ? 'required' : 'none'),
        h('td', {},
          actionButton('Stop', async () => { await api('DELETE', `/convert/${enc(c.serverName)}`); toast(`Stopped ${c.serverName}`); await load(); }, { 'aria-label': `Stop ${c.serverName}` }),
          c.serverId ? actionButton('Revert', async () => { await api('POST', `/config/${enc(c.serverId)}:revert`, {}); toast(`${c.serverName} is stdio again`); await loadServers(); await load(); }, { 'aria-label': `Revert ${c.serverName}` }) : null)))))),
    stdio.length ? h('form', { class: 'editor', 'aria-label': 'Convert a stdio server', onsubmit: async (e) => {
      e.preventDefault();
      outcome = null;
      clear(result);
      try {
        const answer = await api('POST', `/config/${enc(pick.value)}:convert?sse=${sse.checked}&requireToken=${token.checked}`, {});
        const c = answer.conversion || {};
        outcome = h('p', { class: 'ok' }, `Serving at ${c.url}`, c.token ? ` — token (shown once): ${c.token}` : '');
        clear(result, outcome);
        await loadServers();
        await load();
      } catch (error) {
        clear(result, errorBox(error));
      }
    } },
    h('h3', {}, 'Convert a stdio server'), field('Server', pick),
    h('label', { class: 'check', for: 'conv-sse' }, sse, ' Also serve legacy SSE'),
    h('label', { class: 'check', for: 'conv-token' }, token, ' Require a bearer token'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Convert'))) : null,
    // Outside the form: the last stdio server converted takes the form away.
    result);
}
