// Logs: the daemon's own log, each stdio server's stderr and the servers'
// notifications/message, from GET /api/logs and then live from the event
// stream. Filters (server, source, minimum level, text) apply to both.
import { api, query } from './api.js';
import { store, on, serverName } from './state.js';
import { h, clear, field, errorBox, dateTimeOf } from './util.js';

const KEEP = 2000;
const LEVELS = ['debug', 'info', 'notice', 'warning', 'warn', 'error', 'critical', 'alert', 'emergency'];
const RANK = { debug: 0, info: 1, notice: 1, warning: 2, warn: 2, error: 3, critical: 3, alert: 3, emergency: 3 };
const filters = { serverId: '', source: '', level: '', text: '' };
let root = null;
let entries = [];
let follow = true;
let off = null;

// The API's timestamps are milliseconds; seconds are taken too.
function millis(ts) {
  const n = Number(ts) || 0;
  return n < 1e12 ? n * 1000 : n;
}

export function mount(container) {
  root = container;
  const server = h('select', { id: 'logs-server' }, h('option', { value: '' }, 'All servers and the daemon'),
    store.servers.map((s) => h('option', { value: s.id, selected: filters.serverId === s.id }, s.name)));
  const source = h('select', { id: 'logs-source' }, [['', 'Every source'], ['daemon', 'Daemon'], ['stderr', 'Server stderr'], ['server', 'Server log messages']]
    .map(([v, l]) => h('option', { value: v, selected: filters.source === v }, l)));
  const level = h('select', { id: 'logs-level' }, [['', 'Any level'], ['info', 'Info and above'], ['warn', 'Warnings and errors'], ['error', 'Errors']]
    .map(([v, l]) => h('option', { value: v, selected: filters.level === v }, l)));
  const text = h('input', { type: 'search', id: 'logs-text', value: filters.text, placeholder: 'text in the message' });
  const followBox = h('input', { type: 'checkbox', id: 'logs-follow', checked: follow });
  const apply = () => {
    const reload = filters.serverId !== server.value || filters.level !== level.value;
    Object.assign(filters, { serverId: server.value, source: source.value, level: level.value, text: text.value.trim() });
    if (reload) load();
    else render();
  };
  [server, source, level].forEach((c) => c.addEventListener('change', apply));
  text.addEventListener('input', apply);
  followBox.addEventListener('change', () => { follow = followBox.checked; render(); });
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-logs' }, 'Logs')),
    h('p', { class: 'hint' }, 'The daemon\'s log, each stdio server\'s stderr and the log messages servers send, newest first, as they arrive.'),
    h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter logs', onsubmit: (e) => e.preventDefault() },
      field('Server', server), field('Source', source), field('Level', level), field('Text', text),
      h('div', { class: 'field check-field' }, followBox, h('label', { for: 'logs-follow' }, 'Follow live'))),
    h('div', { id: 'logs-status', role: 'status', class: 'hint' }),
    h('div', { id: 'logs-list' }));
  off = on('log', (event) => {
    entries.unshift({ ...event.log, timestamp: millis(event.log.timestamp || event.timestamp) });
    if (entries.length > KEEP) entries.length = KEEP;
    if (follow) render();
  });
  load();
}

export function unmount() {
  if (off) off();
  off = null;
  root = null;
}

async function load() {
  const list = root.querySelector('#logs-list');
  try {
    const answer = await api('GET', `/api/logs${query({ serverId: filters.serverId, level: filters.level, limit: 500 })}`);
    if (!root) return;
    const got = ((answer && answer.entries) || []).map((e) => ({ ...e, timestamp: millis(e.timestamp) }));
    got.sort((a, b) => b.timestamp - a.timestamp);
    entries = got;
    render();
  } catch (error) {
    if (root) clear(list, errorBox(error));
  }
}

function matches(e) {
  if (filters.serverId && e.serverId !== filters.serverId) return false;
  const source = e.source || 'daemon';
  if (filters.source && source !== filters.source) return false;
  if (filters.level && (RANK[String(e.level).toLowerCase()] ?? 1) < RANK[filters.level]) return false;
  if (filters.text) {
    const hay = `${e.message || ''} ${e.data ? JSON.stringify(e.data) : ''}`.toLowerCase();
    if (!hay.includes(filters.text.toLowerCase())) return false;
  }
  return true;
}

function levelClass(level) {
  const l = String(level || '').toLowerCase();
  if (!LEVELS.includes(l)) return 'lv';
  return `lv lv-${RANK[l] >= 3 ? 'error' : RANK[l] === 2 ? 'warn' : 'info'}`;
}

function render() {
  if (!root) return;
  const shown = entries.filter(matches);
  root.querySelector('#logs-status').textContent = `${shown.length} of ${entries.length} entries${follow ? ', following' : ', paused'}`;
  clear(root.querySelector('#logs-list'),
    shown.length === 0 ? h('p', { class: 'empty' }, 'No log entry matches.') : h('div', { class: 'table-wrap' }, h('table', { class: 'logs' },
      h('caption', { class: 'offscreen' }, 'Log entries'),
      h('thead', {}, h('tr', {}, ['Time', 'Level', 'Source', 'Server', 'Message'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, shown.slice(0, 500).map((e) => h('tr', { class: 'log-row', dataset: { source: e.source || 'daemon' } },
        h('td', { class: 'mono nowrap' }, dateTimeOf(e.timestamp)),
        h('td', {}, h('span', { class: levelClass(e.level) }, e.level || '')),
        h('td', {}, e.source || 'daemon'),
        h('td', {}, e.serverId ? serverName(e.serverId) : '—'),
        h('td', { class: 'log-msg mono' }, e.message || '', extra(e.data))))))));
}

// The entry's data without what the other columns already show.
function extra(data) {
  if (!data) return null;
  const rest = Object.fromEntries(Object.entries(data).filter(([k]) => !['serverId', 'source'].includes(k)));
  return Object.keys(rest).length ? h('div', { class: 'hint' }, JSON.stringify(rest)) : null;
}
