// In flight: a server's request queue (GET /api/servers/{id}/requests):
// every caller's request queued or waiting for its answer, oldest first,
// with the server's counters; each can be cancelled
// (POST .../requests/{entryId}:cancel). Refreshed every second while open.
import { api, enc } from './api.js';
import { store, on, onServerListChange } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, timeOf } from './util.js';

const EVERY_MS = 1000;
let root = null;
let offServers = null;
let timer = null;
let serverFilter = null;  // null: the current server
let offCurrent = null;

function chosen() {
  return serverFilter === null ? store.current : serverFilter;
}

export function mount(container) {
  unmount();
  root = container;
  offServers = onServerListChange(() => { if (root) mount(root); });
  const server = h('select', { id: 'inflight-server' },
    store.servers.map((s) => h('option', { value: s.id, selected: chosen() === s.id }, s.name)));
  server.addEventListener('change', () => {
    serverFilter = server.value;
    load();
  });
  offCurrent = on('current', () => {
    if (serverFilter === null && root) {
      server.value = store.current;
      load();
    }
  });
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-inflight' }, 'In flight')),
    h('p', { class: 'hint' }, 'Requests callers sent to the server that are still queued or waiting for the answer: from this UI, the CLI, front doors and proxies. Cancelling one sends notifications/cancelled (or tasks/cancel) and fails the call for its caller.'),
    h('form', { class: 'filters', 'aria-label': 'Choose the server', onsubmit: (e) => e.preventDefault() }, field('Server', server)),
    h('div', { id: 'inflight-counters', class: 'hint', role: 'status' }),
    h('div', { id: 'inflight-list' }));
  load();
}

export function unmount() {
  if (offServers) offServers();
  offServers = null;
  clearTimeout(timer);
  timer = null;
  if (offCurrent) offCurrent();
  offCurrent = null;
  root = null;
}

async function load() {
  clearTimeout(timer);
  if (!root) return;
  const id = chosen();
  const list = root.querySelector('#inflight-list');
  if (!id) {
    clear(list, h('p', { class: 'empty' }, 'No servers yet.'));
    return;
  }
  try {
    const answer = await api('GET', `/api/servers/${enc(id)}/requests`);
    if (!root || id !== chosen()) return;
    render(id, answer || {});
  } catch (error) {
    if (root) clear(list, errorBox(error));
  }
  if (root) timer = setTimeout(load, EVERY_MS);
}

function render(id, answer) {
  const requests = answer.requests || [];
  const q = answer.queue || {};
  root.querySelector('#inflight-counters').textContent =
    `${q.pending || 0} queued · ${q.inProgress || 0} in progress · ${q.completed || 0} completed · ${q.failed || 0} failed · ${q.cancelled || 0} cancelled`;
  const list = root.querySelector('#inflight-list');
  // The same requests as shown: only their state and age change in place
  // (focus and keyboard position stay).
  const rows = [...list.querySelectorAll('tr.inflight-row')];
  if (requests.length && rows.length === requests.length && rows.every((row, i) => row.dataset.entry === requests[i].id)) {
    rows.forEach((row, i) => {
      row.querySelector('.inflight-state').textContent = stateText(requests[i].state);
      row.querySelector('.inflight-age').textContent = ageText(requests[i].ageMs);
      row.querySelector('.inflight-sent').textContent = requests[i].startedAt ? timeOf(Number(requests[i].startedAt)) : '—';
    });
    return;
  }
  // Keep focus on a row's button across refreshes when that row is still there.
  const active = /** @type {HTMLElement|null} */ (document.activeElement);
  const focused = active && list.contains(active) ? active.dataset.entry : null;
  clear(list,
    requests.length === 0 ? h('p', { class: 'empty' }, 'Nothing in flight.') : h('div', { class: 'table-wrap' }, h('table', { class: 'inflight' },
      h('caption', { class: 'offscreen' }, 'Requests in flight'),
      h('thead', {}, h('tr', {}, ['Method', 'Target', 'State', 'Age', 'Sent', 'Session', 'Caller', 'Id', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, requests.map((r) => h('tr', { class: 'inflight-row', dataset: { entry: r.id } },
        h('td', {}, r.method),
        h('td', { class: 'clip' }, r.target || ''),
        h('td', { class: 'inflight-state' }, stateText(r.state)),
        h('td', { class: 'mono inflight-age' }, ageText(r.ageMs)),
        h('td', { class: 'mono inflight-sent' }, r.startedAt ? timeOf(Number(r.startedAt)) : '—'),
        h('td', {}, r.sessionKind || ''),
        h('td', { class: 'clip' }, r.caller || ''),
        h('td', { class: 'mono' }, r.requestId || ''),
        h('td', {}, actionButton('Cancel', async () => {
          await api('POST', `/api/servers/${enc(id)}/requests/${enc(r.id)}:cancel`, {});
          toast(`Cancelled ${r.method} ${r.target || ''}`);
          await load();
        }, { class: 'danger inflight-cancel', 'aria-label': `Cancel ${r.method} ${r.target || ''} (${r.id})`, 'data-entry': r.id }))))))));
  if (focused) {
    const again = list.querySelector(`button[data-entry="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

function stateText(state) {
  if (state === 'REQUEST_STATE_IN_PROGRESS') return 'in progress';
  if (state === 'REQUEST_STATE_PENDING') return 'queued';
  return state || '';
}

function ageText(ageMs) {
  return `${((Number(ageMs) || 0) / 1000).toFixed(1)} s`;
}
