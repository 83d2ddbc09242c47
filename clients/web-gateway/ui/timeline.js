// Live traffic: every message from /api/events. A request and its answer
// are one row with the duration; the later rounds of a multi round-trip
// request (input_required answers and their retries) and the updates of a
// task it started are grouped under the first request (open a group with
// Right or a click on its count). Errors and calls over a second stand
// out; the era probe of an auto-era server (server/discover answered
// -32601) is shown as a probe. Pinned rows stay at the top until unpinned.
// Filters by server, method, direction, text and trace (the trace id of
// a message recorded while tracing is on; "#/timeline?traceId=ID" opens
// the view filtered to it, with the trace's messages recorded before the
// page saw them loaded from history); the detail pane shows both messages in the
// JSON tree viewer with replay, edit and replay, break on this and pin,
// and a message's trace with a link that shows only that trace. The list is virtualized: only the rows in view
// exist in the page, so 10,000 messages scroll as fast as 10.
import { store, on, serverName } from './state.js';
import { h, clear, field, timeOf } from './util.js';
import { detailPane, recordedHttpSection } from './detail.js';
import { breakOnButton } from './intercept.js';
import { replayOne } from './sessions.js';
import { api, query } from './api.js';

const ROW = 30;          // px, fixed row height (style.css .tl-row)
const OVERSCAN = 10;
const MAX_ROWS = 50000;  // the oldest go beyond this
export const SLOW_MS = 1000;

// Kept across views: the timeline records even while another view shows.
// A row: {id, time, serverId, sessionId, dir, kind, method, target, jsonId,
// raw, msgId, era, round, traceId, response: {raw, time, kind, errorCode,
// id, traceId} | null, duration, error, probe, parent, children}
const rows = [];
const byRequestKey = new Map();  // session|jsonId|direction -> request row
const byMessageId = new Map();   // recorded message id -> request row
const byTask = new Map();        // task id -> the row of the request that started it
const byRetryKey = new Map();    // session|direction|jsonId|method -> row answered input_required
const pinned = new Set();        // row ids
const expanded = new Set();      // row ids of open groups
let nextId = 1;
let dropped = 0;
let started = false;

function requestKey(sessionId, jsonId, direction) {
  return `${sessionId}|${jsonId}|${direction}`;
}

function opposite(direction) {
  return direction === 'CLIENT_TO_SERVER' ? 'SERVER_TO_CLIENT' : 'CLIENT_TO_SERVER';
}

// The task a message names (params.taskId, result.taskId, result.task.taskId).
function taskIdOf(raw) {
  if (!raw.includes('"taskId"')) return '';
  try {
    const m = JSON.parse(raw);
    const p = m.params || {};
    const r = m.result || {};
    return String(p.taskId || (p.task && p.task.taskId) || r.taskId || (r.task && r.task.taskId) || '');
  } catch {
    return '';
  }
}

function inputRequired(raw) {
  return /"(resultType|status)"\s*:\s*"input_required"/.test(raw) || raw.includes('"inputRequests"');
}

function adopt(parent, child) {
  if (!parent || parent === child) return;
  child.parent = parent;
  parent.children.push(child);
}

function answer(request, m, time) {
  request.response = { raw: m.raw || '', time, kind: m.kind, errorCode: m.errorCode || '', id: Number(m.id || 0), traceId: m.traceId || '' };
  if (m.durationMs !== undefined && m.durationMs !== null) request.duration = m.durationMs;
  else if (request.time && time) request.duration = time - request.time;
  // A tool's own failure (isError) counts as an error too.
  request.error = request.error || m.kind === 'error' || m.kind === 'invalid' || m.success === false ||
    /"isError"\s*:\s*true/.test(request.response.raw);
  // An auto-era server that is not modern answers the probe this way: the
  // daemon then falls back to the initialize handshake. Not a failure.
  if (request.method === 'server/discover' && String(m.errorCode) === '-32601') {
    request.probe = true;
    request.error = false;
  }
  const raw = request.response.raw;
  if (inputRequired(raw) && !request.parent) {
    byRetryKey.set(`${request.sessionId}|${request.dir}|${request.jsonId}|${request.method}`, request);
  }
  const task = taskIdOf(raw);
  if (task && !byTask.has(task)) byTask.set(task, request.parent || request);
}

export function record(event) {
  const m = event.message;
  const time = m.timestamp || event.timestamp;
  if (m.kind === 'response' || m.kind === 'error') {
    let request = m.correlatedId ? byMessageId.get(Number(m.correlatedId)) : null;
    if (request && request.response) request = null;
    if (!request) request = byRequestKey.get(requestKey(m.sessionId, m.jsonrpcId, opposite(m.direction)));
    if (request && !request.response) {
      byRequestKey.delete(requestKey(m.sessionId, m.jsonrpcId, opposite(m.direction)));
      answer(request, m, time);
      return request;
    }
  }
  const row = {
    id: nextId++, time, serverId: m.serverId, sessionId: m.sessionId || '', dir: m.direction,
    kind: m.kind, method: m.method || '', jsonId: m.jsonrpcId || '', raw: m.raw || '',
    msgId: Number(m.id || 0), era: m.era || '', round: m.inputRound || 0, traceId: m.traceId || '',
    response: null, duration: m.durationMs, error: m.kind === 'error' || m.kind === 'invalid' || m.success === false,
    probe: false, target: m.target || '', parent: null, children: [],
  };
  if (m.kind === 'request') {
    byRequestKey.set(requestKey(row.sessionId, row.jsonId, row.dir), row);
    if (row.msgId) byMessageId.set(row.msgId, row);
    // A later round of a multi round-trip request: the daemon names its
    // first round; otherwise the same id and method retried after an
    // input_required answer.
    const first = m.firstRoundId ? byMessageId.get(Number(m.firstRoundId)) : null;
    const retryKey = `${row.sessionId}|${row.dir}|${row.jsonId}|${row.method}`;
    if (first && first !== row) adopt(first.parent || first, row);
    else if (byRetryKey.has(retryKey) && row.raw.includes('requestState')) adopt(byRetryKey.get(retryKey), row);
  }
  if (!row.parent) {
    const task = taskIdOf(row.raw);
    if (task && byTask.has(task)) adopt(byTask.get(task), row);
  }
  rows.push(row);
  if (rows.length > MAX_ROWS) {
    for (const old of rows.splice(0, rows.length - MAX_ROWS)) {
      if (old.msgId) byMessageId.delete(old.msgId);
      pinned.delete(old.id);
    }
  }
  return row;
}

// The newest recorded message `test` accepts (pending.js reads the server's
// own key order of an elicitation from the raw text this way).
export function findRaw(test) {
  for (let i = rows.length - 1; i >= 0; i--) {
    if (test(rows[i])) return rows[i];
  }
  return null;
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
const filters = { server: '', method: '', direction: '', text: '', trace: '' };

// The trace a row belongs to (its request's, else its answer's); '' when
// the daemon traced neither.
function traceOf(row) {
  return row.traceId || (row.response && row.response.traceId) || '';
}

// The address of the timeline showing only trace `id` ('' : all of it).
export function traceHref(id) {
  return id ? `#/timeline?traceId=${encodeURIComponent(id)}` : '#/timeline';
}

// Traces whose recorded messages were asked of history (once each).
const loadedTraces = new Set();

// Adds the messages of trace `id` that history has and the list has not
// (recorded before the page was open, or dropped beyond MAX_ROWS), oldest
// first so that answers find their requests.
async function loadTrace(id) {
  if (!/^[0-9a-f]{32}$/.test(id) || loadedTraces.has(id)) return;
  loadedTraces.add(id);
  let answer;
  try {
    answer = await api('GET', `/api/messages${query({ traceId: id, limit: 1000 })}`);
  } catch {
    loadedTraces.delete(id);  // asked again the next time it is shown
    return;
  }
  const known = new Set();
  for (const r of rows) {
    if (r.msgId) known.add(r.msgId);
    if (r.response && r.response.id) known.add(r.response.id);
  }
  const missing = (answer.messages || []).filter((m) => !known.has(Number(m.id || 0)))
    .sort((a, b) => Number(a.id || 0) - Number(b.id || 0));
  for (const m of missing) record({ message: m, timestamp: m.timestamp });
  if (missing.length && root) {
    refilter();
    paint();
  }
}

/**
 * A message's trace for its detail pane: the id, and a link to Live
 * traffic showing only that trace (or, when it shows that trace now, every
 * message). Null without a trace.
 * @param {string} trace
 * @returns {HTMLElement|null}
 */
export function traceLine(trace) {
  if (!trace) return null;
  const shown = root !== null && filters.trace === trace;
  return h('p', { class: 'tl-trace' }, 'Trace ', h('code', {}, trace), ' ',
    shown
      ? h('a', { class: 'button', href: traceHref(''), 'aria-label': `Show every message, not only trace ${trace}` }, 'Show all messages')
      : h('a', { class: 'button', href: traceHref(trace), 'aria-label': `Show only the messages of trace ${trace}` }, 'Show only this trace'));
}

// The trace asked for in the address ("#/timeline?traceId=ID"), if any.
function traceInHash() {
  const at = location.hash.indexOf('?');
  if (at < 0) return null;
  const id = new URLSearchParams(location.hash.slice(at + 1)).get('traceId');
  return id === null ? null : id.trim().toLowerCase();
}
let pendingFrame = 0;

function schedule() {
  if (!root || pendingFrame) return;
  pendingFrame = requestAnimationFrame(() => {
    pendingFrame = 0;
    refilterNew();
    paint();
  });
}

function matches(row) {
  if (filters.server && row.serverId !== filters.server) return false;
  if (filters.method && !row.method.includes(filters.method)) return false;
  if (filters.direction && row.dir !== filters.direction) return false;
  if (filters.trace && traceOf(row) !== filters.trace) return false;
  if (filters.text && !row.raw.toLowerCase().includes(filters.text) &&
      !(row.response && row.response.raw.toLowerCase().includes(filters.text))) return false;
  return true;
}

// Pinned groups first, then the rest in arrival order (by time for one
// trace, whose older messages may have come from history after the live
// ones); an open group's rows follow their first request.
function refilter() {
  const top = [];
  const rest = [];
  for (const r of rows) {
    if (r.parent) continue;
    if (!matches(r) && !(r.children.length && r.children.some(matches))) continue;
    (pinned.has(r.id) ? top : rest).push(r);
  }
  if (filters.trace) rest.sort((a, b) => (a.time || 0) - (b.time || 0) || a.id - b.id);
  const withChildren = (heads) => heads.flatMap((r) => (expanded.has(r.id) ? [r, ...r.children] : [r]));
  filtered = withChildren(top).concat(withChildren(rest));
  filteredTop = top.length;
  filteredUpTo = rows.length ? rows[rows.length - 1].id : 0;
}

// What refilter() last saw: how many pinned rows lead `filtered`, and the
// newest row it looked at.
let filteredTop = 0;
let filteredUpTo = 0;

// After new messages only: with no filter and no open group, the list
// changes at its ends (new rows after the last, the rows dropped beyond
// MAX_ROWS from the front of the unpinned part), so live traffic costs
// the rows that came, not the 50,000 kept. Otherwise, refilter().
function refilterNew() {
  const plain = !filters.server && !filters.method && !filters.direction && !filters.text && !filters.trace && expanded.size === 0;
  if (!plain) return refilter();
  const oldest = rows.length ? rows[0].id : Infinity;
  // A pinned row dropped beyond MAX_ROWS: the pinned part changes.
  if (filteredTop !== pinned.size || (filteredTop && filtered[0].id < oldest)) return refilter();
  let gone = 0;
  while (filteredTop + gone < filtered.length && filtered[filteredTop + gone].id < oldest) gone++;
  if (gone) filtered.splice(filteredTop, gone);
  let from = rows.length;
  while (from > 0 && rows[from - 1].id > filteredUpTo) from--;
  for (let i = from; i < rows.length; i++) {
    if (!rows[i].parent) filtered.push(rows[i]);
  }
  filteredUpTo = rows.length ? rows[rows.length - 1].id : filteredUpTo;
}

function arrow(dir) {
  return dir === 'CLIENT_TO_SERVER' ? '→' : '←';
}

function kindOf(r) {
  return r.probe ? 'probe' : r.kind;
}

function durationOf(r) {
  if (r.duration !== undefined && r.duration !== null) return `${Math.round(r.duration)} ms`;
  return r.kind === 'request' ? '…' : '';
}

function rowClass(r) {
  let cls = 'tl-row';
  if (r.probe) cls += ' is-probe';
  else if (r.error) cls += ' is-error';
  if (r.duration >= SLOW_MS) cls += ' is-slow';
  if (pinned.has(r.id)) cls += ' is-pinned';
  if (r.parent) cls += ' is-child';
  if (r.id === selectedId) cls += ' selected';
  return cls;
}

// The element of a row as last drawn, with what it showed: a paint keeps
// the elements whose row looks the same and builds only the others, so
// following live traffic adds one row and drops one instead of rebuilding
// the screen.
let drawn = new Map();  // row id -> {el, look}

function lookOf(r) {
  return `${rowClass(r)}|${durationOf(r)}|${kindOf(r)}|${serverName(r.serverId)}|${r.children.length}|${expanded.has(r.id)}`;
}

function rowElement(r, i) {
  const group = r.children.length;
  const attrs = {
    class: rowClass(r), role: 'row', tabindex: r.id === selectedId ? '0' : '-1',
    'aria-selected': String(r.id === selectedId), dataset: { row: String(r.id), index: String(i) },
  };
  if (group) attrs['aria-expanded'] = String(expanded.has(r.id));
  if (r.parent) attrs['aria-level'] = '2';
  const el = h('div', attrs,
    h('span', { role: 'cell', class: 'c-time' }, pinned.has(r.id) ? h('span', { class: 'offscreen' }, 'pinned ') : null, timeOf(r.time)),
    h('span', { role: 'cell', class: 'c-dir', 'aria-label': r.dir === 'CLIENT_TO_SERVER' ? 'to server' : 'from server' }, arrow(r.dir)),
    h('span', { role: 'cell', class: 'c-server' }, serverName(r.serverId)),
    h('span', { role: 'cell', class: 'c-kind' }, kindOf(r)),
    h('span', { role: 'cell', class: 'c-method' },
      r.parent ? h('span', { class: 'muted' }, r.round ? `↳ round ${r.round} ` : '↳ ') : null,
      r.method, r.target ? h('span', { class: 'muted' }, ` ${r.target}`) : null,
      group ? h('span', { class: 'tl-group', dataset: { toggle: String(r.id) } }, ` ${expanded.has(r.id) ? '▾' : '▸'} +${group}`) : null),
    h('span', { role: 'cell', class: 'c-id' }, r.jsonId),
    h('span', { role: 'cell', class: 'c-dur' }, durationOf(r)));
  // CSSOM, not a style attribute: the page's CSP allows no inline styles.
  el.style.top = `${i * ROW}px`;
  return el;
}

function paint() {
  if (!root) return;
  spacer.style.height = `${filtered.length * ROW}px`;
  if (follow) viewport.scrollTop = filtered.length * ROW;
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - OVERSCAN);
  const last = Math.min(filtered.length, Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + OVERSCAN);
  const out = [];
  const next = new Map();
  for (let i = first; i < last; i++) {
    const r = filtered[i];
    const look = lookOf(r);
    const before = drawn.get(r.id);
    let el;
    if (before && before.look === look) {
      // The same row moved (older rows were dropped above it).
      el = before.el;
      if (el.dataset.index !== String(i)) {
        el.dataset.index = String(i);
        el.style.top = `${i * ROW}px`;
      }
    } else {
      el = rowElement(r, i);
    }
    next.set(r.id, { el, look });
    out.push(el);
  }
  drawn = next;
  // The page's order is the list's (screen readers and Tab follow it):
  // rows that left go, new ones go in their place, the rest stay put.
  const hadFocus = body.contains(document.activeElement);
  const keep = new Set(out);
  for (const child of [...body.children]) if (!keep.has(child)) child.remove();
  let cursor = body.firstChild;
  for (const el of out) {
    if (el === cursor) cursor = cursor.nextSibling;
    else body.insertBefore(el, cursor);
  }
  // The keyboard's place in the list is kept when its row was redrawn.
  if (hadFocus && !body.contains(document.activeElement)) {
    (body.querySelector(`[data-row="${selectedId}"]`) || viewport).focus({ preventScroll: true });
  }
  const pins = pinned.size ? `, ${pinned.size} pinned` : '';
  const text = `${filtered.length} of ${rows.length} messages${pins}${dropped ? `, ${dropped} dropped by a slow connection` : ''}`;
  if (status.textContent !== text) status.textContent = text;
}

// A round or task update pins the group it belongs to.
function togglePin(row) {
  const head = row.parent || row;
  if (pinned.has(head.id)) pinned.delete(head.id);
  else pinned.add(head.id);
  refilter();
  select(row.id, false);
}

function toggleGroup(row, open = !expanded.has(row.id)) {
  if (!row.children.length) return;
  if (open) expanded.add(row.id);
  else expanded.delete(row.id);
  refilter();
  paint();
}

function asMessage(r) {
  return { serverId: r.serverId, direction: r.dir, kind: r.kind, method: r.method, target: r.target };
}

function select(id, focus) {
  selectedId = id;
  const row = rows.find((r) => r.id === id);
  paint();
  if (!row) return;
  const head = row.parent || row;
  const replayable = row.kind === 'request' && row.dir === 'CLIENT_TO_SERVER' && row.msgId > 0;
  const pin = h('button', { type: 'button', onclick: () => togglePin(row) },
    pinned.has(head.id) ? 'Unpin' : 'Pin');
  const group = head.children.length ? h('section', { class: 'tl-rounds', 'aria-label': 'Rounds and updates of this request' },
    h('h4', {}, `Grouped under the first request (${head.children.length + 1} messages)`),
    h('ol', {}, [head, ...head.children].map((r) => h('li', {},
      h('button', { type: 'button', class: 'link', 'aria-current': r.id === row.id ? 'true' : null, onclick: () => { toggleGroup(head, true); select(r.id, true); } },
        `${r.round ? `round ${r.round}: ` : ''}${r.method || r.kind} ${r.jsonId ? `#${r.jsonId}` : ''}`),
      ` ${kindOf(r)} ${durationOf(r)}`)))) : null;
  clear(detailBox, detailPane({
    title: `${row.method || row.kind} ${row.jsonId ? `#${row.jsonId}` : ''}`,
    serverId: row.serverId,
    request: row.kind === 'request' || row.kind === 'notification' ? row.raw : null,
    response: row.response ? row.response.raw : (row.kind === 'request' || row.kind === 'notification' ? null : row.raw),
    extra: [pin, breakOnButton(asMessage(row))],
    before: [traceLine(traceOf(row)), group, recordedHttpSection([
      [row.kind === 'request' || row.kind === 'notification' ? 'carried the request' : 'carried the message', row.msgId],
      ['carried the response', row.response ? row.response.id : 0]])],
    after: replayable ? replayOne({ id: row.msgId, raw: row.raw, kind: row.kind, direction: row.dir, sequence: row.jsonId }, row.serverId, `${row.method} #${row.jsonId}`) : null,
    meta: {
      Server: serverName(row.serverId),
      Direction: row.dir === 'CLIENT_TO_SERVER' ? 'client → server' : 'server → client',
      Kind: kindOf(row),
      Duration: row.duration !== undefined && row.duration !== null ? `${Math.round(row.duration)} ms${row.duration >= SLOW_MS ? ' (slow)' : ''}` : undefined,
      Probe: row.probe ? 'server/discover is not known to this server: it speaks the handshake era (not a failure)' : undefined,
      'Error code': row.response && row.response.errorCode && !row.probe ? row.response.errorCode : undefined,
      Era: row.era,
      Round: row.round || undefined,
      Session: row.sessionId,
    },
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
  // The address is where the trace filter lives: the view's own link
  // ("#/timeline") shows every trace.
  filters.trace = traceInHash() || '';
  const trace = h('input', { type: 'search', id: 'tl-trace', value: filters.trace, placeholder: 'trace id', spellcheck: 'false' });
  followBox = h('input', { type: 'checkbox', id: 'tl-follow', checked: follow });
  const update = () => {
    filters.server = server.value;
    filters.method = method.value.trim();
    filters.direction = direction.value;
    filters.text = text.value.trim().toLowerCase();
    const traceWanted = trace.value.trim().toLowerCase();
    if (traceWanted !== filters.trace) {
      filters.trace = traceWanted;
      // The address says which trace is shown (without a new view).
      window.history.replaceState(null, '', traceHref(traceWanted));
      loadTrace(traceWanted);
    }
    refilter();
    paint();
  };
  [server, direction].forEach((c) => c.addEventListener('change', update));
  [method, text, trace].forEach((c) => c.addEventListener('input', update));
  followBox.addEventListener('change', () => { follow = followBox.checked; paint(); });
  const clearButton = h('button', {
    type: 'button',
    onclick: () => {
      rows.length = 0;
      for (const m of [byRequestKey, byMessageId, byTask, byRetryKey]) m.clear();
      loadedTraces.clear();
      pinned.clear();
      expanded.clear();
      dropped = 0;
      selectedId = 0;
      clear(detailBox);
      refilter();
      paint();
    },
  }, 'Clear');
  spacer = h('div', { class: 'tl-spacer' });
  body = h('div', { class: 'tl-body', role: 'rowgroup' });
  drawn = new Map();
  viewport = h('div', {
    class: 'tl-viewport', tabindex: '0', role: 'grid', 'aria-rowcount': '-1',
    'aria-label': 'Messages (arrow keys move, Right and Left open and close a group, p pins)',
  }, spacer, body);
  viewport.addEventListener('scroll', () => {
    const atEnd = viewport.scrollTop + viewport.clientHeight >= viewport.scrollHeight - ROW;
    if (!atEnd && follow) { follow = false; followBox.checked = false; }
    paint();
  });
  viewport.addEventListener('click', (e) => {
    const toggle = e.target.closest('[data-toggle]');
    if (toggle) {
      const row = rows.find((r) => r.id === Number(toggle.dataset.toggle));
      if (row) toggleGroup(row);
    }
    const rowEl = e.target.closest('[data-row]');
    if (rowEl) select(Number(rowEl.dataset.row), true);
  });
  viewport.addEventListener('keydown', (e) => {
    const row = rows.find((r) => r.id === selectedId);
    if (e.key === 'ArrowDown' || e.key === 'j') { e.preventDefault(); moveSelection(1); }
    if (e.key === 'ArrowUp' || e.key === 'k') { e.preventDefault(); moveSelection(-1); }
    if (e.key === 'End') { e.preventDefault(); moveSelection(filtered.length); }
    if (e.key === 'Home') { e.preventDefault(); moveSelection(-filtered.length); }
    if (e.key === 'PageDown') { e.preventDefault(); moveSelection(Math.max(1, Math.floor(viewport.clientHeight / ROW) - 1)); }
    if (e.key === 'PageUp') { e.preventDefault(); moveSelection(-Math.max(1, Math.floor(viewport.clientHeight / ROW) - 1)); }
    if (!row) return;
    if (e.key === 'ArrowRight') { e.preventDefault(); toggleGroup(row, true); }
    if (e.key === 'ArrowLeft') {
      e.preventDefault();
      if (row.parent) { select(row.parent.id, true); } else toggleGroup(row, false);
    }
    if (e.key === 'p') { e.preventDefault(); togglePin(row); body.querySelector(`[data-row="${row.id}"]`)?.focus(); }
    if (e.key === 'Enter') { e.preventDefault(); detailBox.querySelector('h3')?.focus(); }
  });
  status = h('div', { class: 'muted', role: 'status', id: 'tl-status' });
  detailBox = h('div', { class: 'detail tl-detail', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Choose a message to see it in full.'));
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-timeline' }, 'Live traffic'), status),
    h('div', { class: 'filters', role: 'search', 'aria-label': 'Filter messages' },
      field('Server', server), field('Method', method), field('Direction', direction), field('Text', text), field('Trace', trace),
      h('label', { class: 'check', for: followBox.id }, followBox, ' Follow new messages'), clearButton),
    h('div', { class: 'split tl-split' },
      h('div', { class: 'tl-list' },
        h('div', { class: 'tl-head', 'aria-hidden': 'true' }, ['Time', '', 'Server', 'Kind', 'Method', 'Id', 'Duration'].map((t, i) => h('span', { class: ['c-time', 'c-dir', 'c-server', 'c-kind', 'c-method', 'c-id', 'c-dur'][i] }, t))),
        viewport),
      detailBox));
  refilter();
  paint();
  loadTrace(filters.trace);
  // Back from a trace link: the message chosen stays in the detail pane.
  if (selectedId && rows.some((r) => r.id === selectedId)) select(selectedId, false);
}

export function unmount() {
  root = null;
}
