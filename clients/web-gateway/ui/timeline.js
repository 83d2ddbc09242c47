// Live traffic: every message from /api/events, requests paired with their
// responses (duration, errors), filters by server, method, direction and
// text, and the detail pane. The list is virtualized: only the rows in view
// exist in the page, so 10,000 messages scroll as fast as 10.
import { store, on, serverName } from './state.js';
import { h, clear, field, timeOf } from './util.js';
import { detailPane } from './detail.js';
import { breakOnButton } from './intercept.js';

const ROW = 30;          // px, fixed row height (style.css .tl-row)
const OVERSCAN = 10;
const MAX_ROWS = 50000;  // the oldest go beyond this

// Kept across views: the timeline records even while another view shows.
const rows = [];                 // {id, time, serverId, dir, kind, method, jsonId, raw, pair, duration, error}
const byRequestKey = new Map();  // session|jsonId|direction -> request row
let nextId = 1;
let dropped = 0;
let started = false;

function requestKey(m, direction) {
  return `${m.sessionId}|${m.jsonrpcId}|${direction}`;
}

function record(event) {
  const m = event.message;
  const row = {
    id: nextId++, time: m.timestamp || event.timestamp, serverId: m.serverId, dir: m.direction,
    kind: m.kind, method: m.method || '', jsonId: m.jsonrpcId || '', raw: m.raw || '',
    pair: null, duration: m.durationMs, error: m.kind === 'error' || m.kind === 'invalid' || m.success === false,
    target: m.target || '',
  };
  if (m.kind === 'request') {
    byRequestKey.set(requestKey(m, m.direction), row);
  } else if (m.kind === 'response' || m.kind === 'error') {
    const opposite = m.direction === 'CLIENT_TO_SERVER' ? 'SERVER_TO_CLIENT' : 'CLIENT_TO_SERVER';
    const request = byRequestKey.get(requestKey(m, opposite));
    if (request) {
      byRequestKey.delete(requestKey(m, opposite));
      request.pair = row;
      row.pair = request;
      row.method = row.method || request.method;
      row.target = row.target || request.target;
      if (row.duration === undefined && request.time && row.time) row.duration = row.time - request.time;
      request.duration = row.duration;
      request.error = request.error || row.error;
    }
  }
  rows.push(row);
  if (rows.length > MAX_ROWS) rows.splice(0, rows.length - MAX_ROWS);
}

export function ensureRecording() {
  if (started) return;
  started = true;
  on('message', (event) => {
    record(event);
    schedule();
  });
  on('dropped', (d) => {
    dropped += Number(d.count || 0);
    schedule();
  });
}
ensureRecording();

// --- the view --------------------------------------------------------------

let root = null;
let viewport = null;
let spacer = null;
let body = null;
let detailBox = null;
let status = null;
let filtered = [];
let selectedId = 0;
let follow = true;
const filters = { server: '', method: '', direction: '', text: '' };
let pendingFrame = 0;

function schedule() {
  if (!root || pendingFrame) return;
  pendingFrame = requestAnimationFrame(() => {
    pendingFrame = 0;
    refilter();
    paint();
  });
}

function matches(row) {
  if (filters.server && row.serverId !== filters.server) return false;
  if (filters.method && !row.method.includes(filters.method)) return false;
  if (filters.direction && row.dir !== filters.direction) return false;
  if (filters.text && !row.raw.toLowerCase().includes(filters.text)) return false;
  return true;
}

function refilter() {
  filtered = rows.filter(matches);
}

function arrow(dir) {
  return dir === 'CLIENT_TO_SERVER' ? '→' : '←';
}

function paint() {
  if (!root) return;
  spacer.style.height = `${filtered.length * ROW}px`;
  if (follow) viewport.scrollTop = viewport.scrollHeight;
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(filtered.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + OVERSCAN);
  const out = [];
  for (let i = first; i < last; i++) {
    const r = filtered[i];
    const cls = `tl-row${r.error ? ' is-error' : ''}${r.id === selectedId ? ' selected' : ''}`;
    const el = h('div', {
      class: cls, role: 'row', tabindex: r.id === selectedId ? '0' : '-1',
      'aria-selected': String(r.id === selectedId), dataset: { row: String(r.id), index: String(i) },
    },
    h('span', { role: 'cell', class: 'c-time' }, timeOf(r.time)),
    h('span', { role: 'cell', class: 'c-dir', 'aria-label': r.dir === 'CLIENT_TO_SERVER' ? 'to server' : 'from server' }, arrow(r.dir)),
    h('span', { role: 'cell', class: 'c-server' }, serverName(r.serverId)),
    h('span', { role: 'cell', class: 'c-kind' }, r.kind),
    h('span', { role: 'cell', class: 'c-method' }, r.method, r.target ? h('span', { class: 'muted' }, ` ${r.target}`) : null),
    h('span', { role: 'cell', class: 'c-id' }, r.jsonId),
    h('span', { role: 'cell', class: 'c-dur' }, r.duration !== undefined && r.duration !== null ? `${Math.round(r.duration)} ms` : ''));
    // CSSOM, not a style attribute: the page's CSP allows no inline styles.
    el.style.top = `${i * ROW}px`;
    out.push(el);
  }
  body.replaceChildren(...out);
  status.textContent = `${filtered.length} of ${rows.length} messages${dropped ? `, ${dropped} dropped by a slow connection` : ''}`;
}

function select(id, focus) {
  selectedId = id;
  const row = rows.find((r) => r.id === id);
  paint();
  if (!row) return;
  const answer = row.kind === 'response' || row.kind === 'error';
  const request = answer ? row.pair : row;
  const response = answer ? row : row.pair;
  clear(detailBox, detailPane({
    title: `${row.method || row.kind} ${row.jsonId ? `#${row.jsonId}` : ''}`,
    serverId: row.serverId,
    request: request ? request.raw : null,
    response: response ? response.raw : null,
    extra: [breakOnButton({ serverId: row.serverId, direction: row.dir, kind: row.kind, method: row.method, target: row.target })],
    meta: { Server: serverName(row.serverId), Direction: row.dir === 'CLIENT_TO_SERVER' ? 'client → server' : 'server → client', Kind: row.kind, Duration: row.duration !== undefined ? `${Math.round(row.duration)} ms` : undefined },
  }));
  if (focus) body.querySelector(`[data-row="${id}"]`)?.focus();
}

function moveSelection(step) {
  let index = filtered.findIndex((r) => r.id === selectedId);
  index = Math.max(0, Math.min(filtered.length - 1, (index < 0 ? filtered.length : index) + step));
  const row = filtered[index];
  if (!row) return;
  follow = false;
  followBox.checked = false;
  if (index * ROW < viewport.scrollTop) viewport.scrollTop = index * ROW;
  if ((index + 1) * ROW > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = (index + 1) * ROW - viewport.clientHeight;
  select(row.id, true);
}

let followBox = null;

export function mount(container) {
  root = container;
  const server = h('select', { id: 'tl-server' }, h('option', { value: '' }, 'All servers'),
    store.servers.map((s) => h('option', { value: s.id, selected: filters.server === s.id }, s.name)));
  const method = h('input', { type: 'search', id: 'tl-method', value: filters.method, placeholder: 'tools/call' });
  const direction = h('select', { id: 'tl-direction' },
    [['', 'Both directions'], ['CLIENT_TO_SERVER', '→ to the server'], ['SERVER_TO_CLIENT', '← from the server']]
      .map(([v, l]) => h('option', { value: v, selected: filters.direction === v }, l)));
  const text = h('input', { type: 'search', id: 'tl-text', value: filters.text, placeholder: 'text in the message' });
  followBox = h('input', { type: 'checkbox', id: 'tl-follow', checked: follow });
  const update = () => {
    filters.server = server.value;
    filters.method = method.value.trim();
    filters.direction = direction.value;
    filters.text = text.value.trim().toLowerCase();
    refilter();
    paint();
  };
  [server, direction].forEach((c) => c.addEventListener('change', update));
  [method, text].forEach((c) => c.addEventListener('input', update));
  followBox.addEventListener('change', () => { follow = followBox.checked; paint(); });
  const clearButton = h('button', { type: 'button', onclick: () => { rows.length = 0; byRequestKey.clear(); dropped = 0; selectedId = 0; clear(detailBox); refilter(); paint(); } }, 'Clear');
  spacer = h('div', { class: 'tl-spacer' });
  body = h('div', { class: 'tl-body', role: 'rowgroup' });
  viewport = h('div', {
    class: 'tl-viewport', tabindex: '0', role: 'grid', 'aria-label': 'Messages (arrow keys move, Enter shows)', 'aria-rowcount': '-1',
  }, spacer, body);
  viewport.addEventListener('scroll', () => {
    const atEnd = viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - ROW;
    if (!atEnd && follow) { follow = false; followBox.checked = false; }
    paint();
  });
  viewport.addEventListener('click', (e) => {
    const rowEl = e.target.closest('[data-row]');
    if (rowEl) select(Number(rowEl.dataset.row), true);
  });
  viewport.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); moveSelection(1); }
    if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); moveSelection(-1); }
    if (e.key === 'End') { e.preventDefault(); moveSelection(filtered.length); }
    if (e.key === 'Home') { e.preventDefault(); moveSelection(-filtered.length); }
  });
  status = h('div', { class: 'muted', role: 'status', id: 'tl-status' });
  detailBox = h('div', { class: 'detail tl-detail', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Choose a message to see it in full.'));
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-timeline' }, 'Live traffic'), status),
    h('div', { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
      field('Server', server), field('Method', method), field('Direction', direction), field('Text', text),
      h('label', { class: 'check', for: followBox.id }, followBox, ' Follow new messages'), clearButton),
    h('div', { class: 'split tl-split' },
      h('div', { class: 'tl-list' },
        h('div', { class: 'tl-head', 'aria-hidden': 'true' }, ['Time', '', 'Server', 'Kind', 'Method', 'Id', 'Duration'].map((t, i) => h('span', { class: ['c-time', 'c-dir', 'c-server', 'c-kind', 'c-method', 'c-id', 'c-dur'][i] }, t))),
        viewport),
      detailBox));
  refilter();
  paint();
}

export function unmount() {
  root = null;
}

// For tests and benchmarks: the number of rows held and in the page.
window.__inspectorTimeline = { held: () => rows.length, rendered: () => (body ? body.childElementCount : 0), record };
