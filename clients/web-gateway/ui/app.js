// The web UI's shell: sign-in check, navigation, the server picker and the
// live connection. Each view is a module with mount(container) and an
// optional unmount().
import { api, onUnauthorized } from './api.js';
import { store, on, loadServers, loadPending, startEvents, setCurrent, serverName } from './state.js';
import { h, clear, toast } from './util.js';
import * as servers from './servers.js';
import * as explore from './explore.js';
import * as skills from './skills.js';
import * as timeline from './timeline.js';
import * as history from './history.js';
import * as pending from './pending.js';
import * as conversions from './conversions.js';
import * as intercept from './intercept.js';
import * as sessions from './sessions.js';
import * as logs from './logs.js';
import * as doctor from './doctor.js';
import * as tasks from './tasks.js';
import * as inflight from './inflight.js';
import * as oauth from './oauth.js';
import * as drift from './drift.js';

const VIEWS = [
  { path: 'servers', label: 'Servers', view: servers },
  { path: 'explore', label: 'Tools & resources', view: explore },
  { path: 'skills', label: 'Skills', view: skills },
  { path: 'timeline', label: 'Live traffic', view: timeline },
  { path: 'history', label: 'History', view: history },
  { path: 'pending', label: 'Pending', view: pending },
  { path: 'conversions', label: 'Conversions', view: conversions },
  { path: 'intercept', label: 'Intercept', view: intercept },
  { path: 'sessions', label: 'Sessions', view: sessions },
  { path: 'logs', label: 'Logs', view: logs },
  { path: 'doctor', label: 'Doctor', view: doctor },
  { path: 'drift', label: 'Drift', view: drift },
  { path: 'tasks', label: 'Tasks', view: tasks },
  { path: 'inflight', label: 'In flight', view: inflight },
  { path: 'oauth', label: 'OAuth', view: oauth },
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const select = /** @type {HTMLSelectElement} */ (document.getElementById('server-select'));
let active = null;
let signedOut = false;

function showSignedOut() {
  if (signedOut) return;
  signedOut = true;
  document.body.classList.add('signed-out');
  clear(main, h('section', { class: 'signin' },
    h('h2', {}, 'Sign in to the MCP Inspector'),
    h('p', {}, 'This browser is not signed in (or its sign-in ended). In a terminal, run'),
    h('pre', { class: 'cmd' }, 'inspectorctl ui'),
    h('p', {}, 'and open the link it prints (', h('code', {}, 'inspectorctl ui --open'),
      ' opens it for you). ', h('code', {}, 'inspectord'),
      ' also prints one when it starts. A link works once, for 15 minutes.')));
  main.focus();
}
onUnauthorized(showSignedOut);

function renderNav() {
  const route = currentRoute();
  clear(nav, VIEWS.map((v) => {
    const badge = v.path === 'pending' && store.pending.size
      ? h('span', { class: 'badge', 'aria-label': `${store.pending.size} waiting` }, String(store.pending.size)) : null;
    return h('li', {}, h('a', {
      href: `#/${v.path}`, 'aria-current': v.path === route.path ? 'page' : null, id: `nav-${v.path}`,
    }, v.label, badge));
  }));
}

function renderServerSelect() {
  clear(select,
    store.servers.length === 0 ? h('option', { value: '' }, '(no servers yet)') : null,
    store.servers.map((s) => h('option', { value: s.id, selected: s.id === store.current }, s.name)));
}
select.addEventListener('change', () => setCurrent(select.value));

function currentRoute() {
  // "#/timeline?traceId=…": a view's own parameters follow a "?".
  const path = (location.hash.replace(/^#\/?/, '').split(/[/?]/)[0]) || 'servers';
  return VIEWS.find((v) => v.path === path) || VIEWS[0];
}

function route() {
  if (signedOut) return;
  const next = currentRoute();
  if (active && active.view.unmount) active.view.unmount();
  active = next;
  renderNav();
  const container = h('section', { class: `view view-${next.path}`, 'aria-labelledby': `title-${next.path}` });
  clear(main, container);
  next.view.mount(container);
  document.title = `${next.label} — MCP Inspector`;
}

async function start() {
  try {
    await loadServers();
  } catch (error) {
    if (error.status === 401) return;
    toast(`Cannot reach inspectord: ${error.message}`, 'error');
    return;
  }
  await loadPending().catch(() => {});
  renderServerSelect();
  on('servers', renderServerSelect);
  on('current', renderServerSelect);
  on('pending', (item) => {
    renderNav();
    if (item && item.status === 'PENDING') {
      toast(`${serverName(item.serverId)} asks: ${item.method} (see Pending)`);
    }
  });
  const live = document.getElementById('live');
  startEvents((up) => {
    live.textContent = up ? 'live' : 'reconnecting…';
    live.classList.toggle('down', !up);
  });
  intercept.startHeldTracking();
  window.addEventListener('hashchange', route);
  route();
}

document.getElementById('sign-out').addEventListener('click', async () => {
  await api('POST', '/ui/sign-out').catch(() => {});
  signedOut = false;
  showSignedOut();
});

start();
