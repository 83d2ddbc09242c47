// History: recorded requests with the seed's filters (server, method,
// since, direction, text), paging, and the same detail pane as the timeline.
import { api, query } from './api.js';
import { store } from './state.js';
import { h, clear, field, errorBox, dateTimeOf } from './util.js';
import { serverName } from './state.js';
import { detailPane } from './detail.js';

const PAGE = 50;
const filters = { serverId: '', method: '', since: '', direction: '', text: '' };
let offset = 0;
let root = null;

export function mount(container) {
  root = container;
  const server = h('select', {}, h('option', { value: '' }, 'All servers'),
    store.servers.map((s) => h('option', { value: s.id, selected: filters.serverId === s.id }, s.name)));
  const method = h('input', { type: 'search', value: filters.method, placeholder: 'tools/call' });
  const since = h('select', {}, [['', 'Any time'], ['600000', 'Last 10 minutes'], ['3600000', 'Last hour'], ['86400000', 'Last day']]
    .map(([v, l]) => h('option', { value: v, selected: filters.since === v }, l)));
  const direction = h('select', {}, [['', 'Both'], ['CLIENT_TO_SERVER', 'Client requests'], ['SERVER_TO_CLIENT', 'Server requests']]
    .map(([v, l]) => h('option', { value: v, selected: filters.direction === v }, l)));
  const text = h('input', { type: 'search', value: filters.text, placeholder: 'text in request or response' });
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter history' },
    field('Server', server), field('Method', method), field('Since', since), field('Direction', direction), field('Text', text),
    h('button', { type: 'submit', class: 'primary' }, 'Search'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    Object.assign(filters, { serverId: server.value, method: method.value.trim(), since: since.value, direction: direction.value, text: text.value.trim() });
    offset = 0;
    load();
  });
  clear(root, h('div', { class: 'view-head' }, h('h2', { id: 'title-history' }, 'History')), form,
    h('div', { id: 'history-results' }), h('div', { id: 'history-detail', class: 'detail' }));
  load();
}

export function unmount() {
  root = null;
}

async function load() {
  const out = root.querySelector('#history-results');
  const params = { serverId: filters.serverId, method: filters.method, direction: filters.direction, text: filters.text, limit: PAGE, offset };
  if (filters.since) params.since = Date.now() - Number(filters.since);
  try {
    const answer = await api('GET', `/api/history${query(params)}`);
    const entries = answer.entries || [];
    const total = answer.total || 0;
    clear(out,
      entries.length === 0 ? h('p', { class: 'empty' }, 'Nothing recorded matches.') : h('div', { class: 'table-wrap' }, h('table', { class: 'history' },
        h('caption', { class: 'offscreen' }, 'Recorded requests'),
        h('thead', {}, h('tr', {}, ['Time', 'Server', 'Method', 'Target', 'Duration', 'OK', 'Id'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, entries.map((e) => h('tr', { class: e.success === false ? 'is-error' : '' },
          h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => show(e) }, dateTimeOf(e.timestamp))),
          h('td', {}, serverName(e.serverId)),
          h('td', {}, e.method),
          h('td', { class: 'clip' }, e.target || ''),
          h('td', {}, e.duration !== undefined ? `${Math.round(e.duration)} ms` : 'pending'),
          h('td', {}, e.success === undefined ? '…' : e.success ? 'yes' : 'no'),
          h('td', { class: 'mono' }, e.id)))))),
      h('nav', { class: 'pager', 'aria-label': 'Pages' },
        h('button', { type: 'button', disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }, 'Newer'),
        h('span', { role: 'status' }, total ? `${offset + 1}–${offset + entries.length} of ${total}` : ''),
        h('button', { type: 'button', disabled: offset + entries.length >= total, onclick: () => { offset += PAGE; load(); } }, 'Older')));
  } catch (error) {
    clear(out, errorBox(error));
  }
}

function show(entry) {
  const request = { jsonrpc: '2.0', id: JSON.parse(entry.id || 'null'), method: entry.method };
  if (entry.params !== undefined) request.params = entry.params;
  let response = null;
  if (entry.result !== undefined || entry.error !== undefined) {
    response = { jsonrpc: '2.0', id: request.id };
    if (entry.error !== undefined && entry.error !== null) response.error = entry.error;
    else response.result = entry.result;
  }
  const box = root.querySelector('#history-detail');
  clear(box, detailPane({
    title: `${entry.method} ${entry.target || ''}`,
    serverId: entry.serverId,
    request: JSON.stringify(request),
    response: response ? JSON.stringify(response) : null,
    meta: { Server: serverName(entry.serverId), Time: dateTimeOf(entry.timestamp), Duration: entry.duration !== undefined ? `${Math.round(entry.duration)} ms` : 'pending' },
  }));
  box.querySelector('h3').focus();
}
