// History: recorded requests with the seed's filters (server, method,
// since, direction, text), paging, and the same detail pane as the timeline
// (JSON tree viewer, replay, edit and replay, break on this), with a link
// to the message's session and, for a traced request, to Live traffic
// showing its trace. Errors and calls over a second stand out; the
// era probe of an auto-era server is shown as a probe; later rounds of a
// multi round-trip request say which round they are.
import { api, query, enc } from './api.js';
import { store } from './state.js';
import { h, clear, field, errorBox, dateTimeOf } from './util.js';
import { serverName } from './state.js';
import { detailPane, httpSection } from './detail.js';
import { breakOnButton } from './intercept.js';
import { replayOne } from './sessions.js';
import { SLOW_MS, traceLine } from './timeline.js';

// server/discover answered "method not found": the probe of an auto-era
// server that speaks the handshake era. Not a failure.
function isProbe(e) {
  return e.method === 'server/discover' && e.error && Number(e.error.code) === -32601;
}

function rowClass(e) {
  const out = [];
  if (isProbe(e)) out.push('is-probe');
  else if (e.success === false || (e.result && e.result.isError === true)) out.push('is-error');
  if (e.duration >= SLOW_MS) out.push('is-slow');
  return out.join(' ');
}

function okText(e) {
  if (isProbe(e)) return 'probe';
  return e.success === undefined ? '…' : e.success ? 'yes' : 'no';
}

const PAGE = 50;
const filters = { serverId: '', method: '', since: '', direction: '', text: '' };
// Pages by the daemon's page tokens (keyset: as fast deep in the history as
// on its first page): tokens[i] asks for page i; tokens[0] is ''.
/** @type {string[]} */
let tokens = [''];
let page = 0;
// Each load's number: an answer to a load that a later one replaced (a new
// search while the first page was on its way) is dropped, so it can neither
// draw stale rows nor leave its page token behind.
let loads = 0;
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
    tokens = [''];
    page = 0;
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
  const params = { serverId: filters.serverId, method: filters.method, direction: filters.direction, text: filters.text, limit: PAGE, pageToken: tokens[page] };
  if (filters.since) params.since = Date.now() - Number(filters.since);
  const mine = ++loads;
  try {
    const answer = await api('GET', `/api/history${query(params)}`);
    if (mine !== loads || !root) return;
    const entries = answer.entries || [];
    const total = answer.total || 0;
    const next = answer.nextPageToken || '';
    if (next) tokens[page + 1] = next;
    const first = page * PAGE;
    const counted = total ? ` of ${answer.totalIsEstimate ? 'at least ' : ''}${total}` : '';
    clear(out,
      entries.length === 0 ? h('p', { class: 'empty' }, 'Nothing recorded matches.') : h('div', { class: 'table-wrap' }, h('table', { class: 'history' },
        h('caption', { class: 'offscreen' }, 'Recorded requests'),
        h('thead', {}, h('tr', {}, ['Time', 'Server', 'Method', 'Target', 'Duration', 'OK', 'Id', 'Session'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, entries.map((e) => h('tr', { class: rowClass(e), dataset: { message: String(e.messageId || '') } },
          h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => show(e) }, dateTimeOf(e.timestamp))),
          h('td', {}, serverName(e.serverId)),
          h('td', {}, e.method, e.inputRound ? h('span', { class: 'muted' }, ` (round ${e.inputRound})`) : null),
          h('td', { class: 'clip' }, e.target || ''),
          h('td', { class: 'dur' }, e.duration !== undefined ? `${Math.round(e.duration)} ms` : 'pending'),
          h('td', { class: 'probe' }, okText(e)),
          h('td', { class: 'mono' }, e.id),
          h('td', {}, e.sessionId ? h('a', { href: `#/sessions/${enc(e.sessionId)}`, 'aria-label': `Open the session of ${e.method} ${e.id}` }, 'Session') : '')))))),
      h('nav', { class: 'pager', 'aria-label': 'Pages' },
        h('button', { type: 'button', disabled: page === 0, onclick: () => { page = Math.max(0, page - 1); load(); } }, 'Newer'),
        h('span', { role: 'status' }, entries.length ? `${first + 1}–${first + entries.length}${counted}` : ''),
        h('button', { type: 'button', disabled: !next, onclick: () => { page += 1; load(); } }, 'Older')));
  } catch (error) {
    if (mine === loads) clear(out, errorBox(error));
  }
}

function show(entry) {
  // The id is JSON text for numbers and quoted strings; some are recorded bare.
  let id = null;
  try {
    id = JSON.parse(entry.id || 'null');
  } catch {
    id = entry.id;
  }
  const request = { jsonrpc: '2.0', id, method: entry.method };
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
    extra: [breakOnButton({ serverId: entry.serverId, direction: entry.direction, kind: 'request', method: entry.method, target: entry.target }),
      entry.sessionId ? h('a', { class: 'button', href: `#/sessions/${enc(entry.sessionId)}` }, 'Open its session') : null],
    before: [traceLine(entry.traceId || ''), httpSection([['carried the request', entry.requestHttp], ['carried the response', entry.responseHttp]])],
    after: entry.messageId && entry.direction !== 'SERVER_TO_CLIENT'
      ? replayOne({ id: entry.messageId, raw: JSON.stringify(request), kind: 'request', direction: 'CLIENT_TO_SERVER', sequence: entry.id }, entry.serverId, `${entry.method} ${entry.id}`)
      : null,
    meta: {
      Server: serverName(entry.serverId), Time: dateTimeOf(entry.timestamp),
      Duration: entry.duration !== undefined ? `${Math.round(entry.duration)} ms${entry.duration >= SLOW_MS ? ' (slow)' : ''}` : 'pending',
      Probe: isProbe(entry) ? 'server/discover is not known to this server: it speaks the handshake era (not a failure)' : undefined,
      Era: entry.era, Round: entry.inputRound || undefined, Session: entry.sessionId,
    },
  }));
  box.querySelector('h3').focus();
}
