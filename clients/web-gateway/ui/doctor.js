// Doctor: runs the connection doctor (POST /api/servers/{id}/doctor) on a
// server and shows each check in order with its result, its time, what it
// found and, unless it passed, how to fix it. #/doctor/ID runs it at once
// (the Servers view's "Doctor" buttons lead there).
import { api, enc } from './api.js';
import { store, serverName, onServerListChange } from './state.js';
import { h, clear, errorBox, actionButton } from './util.js';

const RESULT = {
  CHECK_PASS: ['pass', 'Passed'], CHECK_WARN: ['warn', 'Warning'], CHECK_FAIL: ['fail', 'Failed'], CHECK_SKIP: ['skip', 'Skipped'],
};
const last = new Map();  // server id -> Diagnosis, for this page's life
let root = null;
let autoRan = '';  // the #/doctor/ID already run on arrival
let offServers = null;

export function mount(container) {
  unmount();
  root = container;
  offServers = onServerListChange(() => { if (root) mount(root); });
  const wanted = decodeURIComponent(location.hash.replace(/^#\/?/, '').split('/')[1] || '');
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-doctor' }, 'Connection doctor')),
    h('p', { class: 'hint' }, 'Diagnoses a server over a connection of its own: configuration, process or network, TLS, transport, OAuth, protocol version and a tools/list round trip. The daemon\'s session is left alone and nothing is recorded.'),
    store.servers.length === 0 ? h('p', { class: 'empty' }, 'No servers yet.') : h('div', { class: 'table-wrap' }, h('table', { class: 'doctor-servers' },
      h('caption', { class: 'offscreen' }, 'Servers'),
      h('thead', {}, h('tr', {}, ['Server', 'Transport', 'Last diagnosis', 'Action'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, store.servers.map((s) => h('tr', { dataset: { server: s.name } },
        h('th', { scope: 'row' }, s.name),
        h('td', {}, s.transport || ''),
        h('td', { class: 'doctor-last' }, summary(last.get(s.id))),
        h('td', {}, actionButton('Run doctor', () => run(s.id), { 'aria-label': `Run the doctor on ${s.name}`, class: 'doctor-run' }))))))),
    h('div', { id: 'doctor-result', 'aria-live': 'polite' }));
  const server = wanted && wanted !== autoRan ? store.servers.find((s) => s.id === wanted || s.name === wanted) : null;
  if (server) {
    autoRan = wanted;
    run(server.id);
  } else if (last.size) {
    const [id, diagnosis] = [...last.entries()].pop();
    show(id, diagnosis);
  }
}

export function unmount() {
  if (offServers) offServers();
  offServers = null;
  if (root && !location.hash.startsWith('#/doctor/')) autoRan = '';
  root = null;
}

function summary(diagnosis) {
  if (!diagnosis) return '—';
  const [cls, text] = RESULT[diagnosis.overall] || ['skip', diagnosis.overall || '?'];
  return h('span', { class: `check check-${cls}` }, text);
}

async function run(id) {
  const out = root.querySelector('#doctor-result');
  clear(out, h('p', { role: 'status' }, `Diagnosing ${serverName(id)}…`));
  try {
    const diagnosis = await api('POST', `/api/servers/${enc(id)}/doctor`, {});
    last.set(id, diagnosis);
    if (!root) return;
    const cell = root.querySelector(`tr[data-server="${CSS.escape(serverName(id))}"] .doctor-last`);
    if (cell) clear(cell, summary(diagnosis));
    show(id, diagnosis);
  } catch (error) {
    if (root) clear(out, errorBox(error));
  }
}

function ms(value) {
  return value === undefined || value === null ? '' : `${Math.round(Number(value))} ms`;
}

function show(id, d) {
  const out = root.querySelector('#doctor-result');
  const [cls, text] = RESULT[d.overall] || ['skip', d.overall || '?'];
  clear(out, h('section', { class: 'panel doctor-report', 'aria-labelledby': 'doctor-report-title' },
    h('h3', { id: 'doctor-report-title', tabindex: '-1' }, `${d.serverName || serverName(id)}: `,
      h('span', { class: `check check-${cls}` }, text)),
    h('p', { class: 'hint' }, `${d.transport || ''} · ${ms(d.durationMs)}${d.timedOut ? ' (timed out)' : ''}`),
    h('ol', { class: 'doctor-checks' }, (d.checks || []).map((c) => {
      const [ccls, ctext] = RESULT[c.status] || ['skip', c.status || '?'];
      return h('li', { class: `doctor-check check-row-${ccls}`, dataset: { check: c.name } },
        h('div', { class: 'doctor-check-head' },
          h('span', { class: `check check-${ccls}` }, ctext),
          h('strong', {}, c.title || c.name),
          h('span', { class: 'mono hint' }, c.name),
          h('span', { class: 'doctor-time hint' }, ms(c.durationMs))),
        c.found ? h('p', { class: 'doctor-found' }, c.found) : null,
        c.reason ? h('p', { class: 'hint' }, c.reason) : null,
        c.fix ? h('p', { class: 'doctor-fix' }, h('strong', {}, 'Advice: '), c.fix) : null,
        c.details && c.details.length ? h('ul', { class: 'doctor-details mono' }, c.details.map((x) => h('li', {}, x))) : null);
    }))));
  out.querySelector('h3').focus();
}
