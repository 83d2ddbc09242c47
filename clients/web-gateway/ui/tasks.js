// Tasks (the io.modelcontextprotocol/tasks extension): the tasks servers
// run for callers' requests, with their status history and, once they
// end, their result. Live from the event stream's `task` events (collected
// from the page's start, whatever view is open) and, for tasks seen
// before, from the recorded tasks/get polls in the history.
import { api, query } from './api.js';
import { store, on, serverName, onServerListChange } from './state.js';
import { h, clear, field, errorBox, timeOf, pretty } from './util.js';

const tasks = new Map();  // `${serverId} ${taskId}` -> task
const ENDED = ['completed', 'failed', 'cancelled'];
let root = null;
let offServers = null;
let serverFilter = null;  // null: the current server
let open = '';            // the key of the task whose detail is shown

function keyOf(serverId, taskId) {
  return `${serverId} ${taskId}`;
}

function millis(ts) {
  const n = Number(ts) || 0;
  return n < 1e12 ? n * 1000 : n;
}

function upsert(serverId, taskId, fields, when) {
  const key = keyOf(serverId, taskId);
  let task = tasks.get(key);
  if (!task) {
    task = { key, serverId, taskId, status: '', statusMessage: '', method: '', target: '', requestId: '', updates: [], first: when, last: when };
    tasks.set(key, task);
  }
  const changed = fields.status !== undefined && (fields.status !== task.status || (fields.statusMessage || '') !== task.statusMessage);
  if (changed) task.updates.push({ when, status: fields.status, message: fields.statusMessage || '' });
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v !== '') task[k] = v;
  if (fields.status !== undefined) task.statusMessage = fields.statusMessage || '';
  task.first = Math.min(task.first, when);
  task.last = Math.max(task.last, when);
  return task;
}

on('task', (event) => {
  const t = event.task;
  const task = upsert(t.serverId, t.taskId, {
    status: t.status, statusMessage: t.statusMessage, method: t.method, target: t.target, requestId: t.requestId,
  }, millis(event.timestamp) || Date.now());
  if (t.inputKeys && t.inputKeys.length) task.inputKeys = t.inputKeys;
  if (ENDED.includes(t.status)) loadResult(task);
  render();
});

// The tasks/get answers recorded for a server, oldest first, fold into the
// list (tasks from before the page was opened).
async function loadHistory(serverId) {
  const answer = await api('GET', `/api/history${query({ method: 'tasks/get', serverId, limit: 500 })}`);
  const entries = ((answer && answer.entries) || []).slice().reverse();
  for (const e of entries) {
    const r = e.result || {};
    const taskId = r.taskId || e.target;
    if (!taskId) continue;
    const task = upsert(e.serverId, taskId, { status: r.status, statusMessage: r.statusMessage }, millis(e.timestamp));
    if (r.result !== undefined) task.result = r.result;
    if (r.error !== undefined) task.error = r.error;
  }
}

// The result (or error) of an ended task: its last recorded tasks/get.
async function loadResult(task) {
  try {
    const answer = await api('GET', `/api/history${query({ method: 'tasks/get', serverId: task.serverId, text: task.taskId, limit: 5 })}`);
    const entry = ((answer && answer.entries) || []).find((e) => (e.result && e.result.taskId === task.taskId) || e.target === task.taskId);
    if (entry && entry.result) {
      if (entry.result.result !== undefined) task.result = entry.result.result;
      if (entry.result.error !== undefined) task.error = entry.result.error;
    }
    if (entry && entry.error) task.error = entry.error;
    render();
  } catch {
    // Shown without its result.
  }
}

export function mount(container) {
  unmount();
  root = container;
  offServers = onServerListChange(() => { if (root) mount(root); });
  const chosen = serverFilter === null ? store.current : serverFilter;
  const server = h('select', { id: 'tasks-server' }, h('option', { value: '' }, 'All servers'),
    store.servers.map((s) => h('option', { value: s.id, selected: chosen === s.id }, s.name)));
  server.addEventListener('change', () => {
    serverFilter = server.value;
    refresh();
  });
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-tasks' }, 'Tasks')),
    h('p', { class: 'hint' }, 'Tasks a server runs for a request (tools that answer with a task handle). The daemon follows each with tasks/get; input it asks for appears in Pending.'),
    h('form', { class: 'filters', 'aria-label': 'Choose the server', onsubmit: (e) => e.preventDefault() }, field('Server', server)),
    h('div', { id: 'tasks-list' }),
    h('div', { id: 'tasks-detail' }));
  refresh();
}

export function unmount() {
  if (offServers) offServers();
  offServers = null;
  root = null;
}

async function refresh() {
  const chosen = serverFilter === null ? store.current : serverFilter;
  try {
    if (chosen) await loadHistory(chosen);
    else await Promise.all(store.servers.map((s) => loadHistory(s.id)));
    render();
  } catch (error) {
    if (root) clear(root.querySelector('#tasks-list'), errorBox(error));
  }
}

function statusBadge(status) {
  const cls = status === 'completed' ? 'pass' : status === 'failed' ? 'fail' : status === 'cancelled' ? 'skip' : 'warn';
  return h('span', { class: `check check-${cls} task-status` }, status || '?');
}

function render() {
  if (!root) return;
  const chosen = serverFilter === null ? store.current : serverFilter;
  const list = [...tasks.values()].filter((t) => !chosen || t.serverId === chosen).sort((a, b) => b.first - a.first);
  clear(root.querySelector('#tasks-list'),
    list.length === 0 ? h('p', { class: 'empty' }, 'No tasks seen for this server yet.') : h('div', { class: 'table-wrap' }, h('table', { class: 'tasks' },
      h('caption', { class: 'offscreen' }, 'Tasks'),
      h('thead', {}, h('tr', {}, ['Task', 'Server', 'Request', 'Status', 'Message', 'Started', 'Updated'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, list.map((t) => h('tr', { class: 'task-row', dataset: { task: t.taskId } },
        h('td', {}, h('button', { type: 'button', class: 'link mono', 'aria-expanded': String(open === t.key), 'aria-label': `Show task ${t.taskId}`,
          onclick: () => { open = open === t.key ? '' : t.key; render(); } }, t.taskId)),
        h('td', {}, serverName(t.serverId)),
        h('td', {}, [t.method, t.target].filter(Boolean).join(' ') || '—'),
        h('td', {}, statusBadge(t.status)),
        h('td', { class: 'clip' }, t.statusMessage || ''),
        h('td', { class: 'mono' }, timeOf(t.first)),
        h('td', { class: 'mono' }, timeOf(t.last))))))));
  const task = tasks.get(open);
  clear(root.querySelector('#tasks-detail'), task ? h('section', { class: 'panel task-detail', 'aria-label': `Task ${task.taskId}` },
    h('h3', {}, `Task ${task.taskId}`),
    h('dl', { class: 'meta' },
      h('dt', {}, 'Server'), h('dd', {}, serverName(task.serverId)),
      h('dt', {}, 'Request'), h('dd', {}, `${task.method || '?'} ${task.target || ''} ${task.requestId ? `(id ${task.requestId})` : ''}`),
      task.inputKeys ? [h('dt', {}, 'Input asked'), h('dd', {}, task.inputKeys.join(', '))] : null),
    h('h4', {}, 'Status changes'),
    h('ol', { class: 'task-updates' }, task.updates.map((u) => h('li', {}, h('span', { class: 'mono' }, timeOf(u.when)), ' ', statusBadge(u.status), ' ', u.message))),
    task.result !== undefined ? [h('h4', {}, 'Result'), h('pre', { class: 'json task-result' }, pretty(task.result))] : null,
    task.error !== undefined ? [h('h4', {}, 'Error'), h('pre', { class: 'json task-error' }, pretty(task.error))] : null) : null);
}
