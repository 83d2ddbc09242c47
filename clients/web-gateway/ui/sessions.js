// Recorded sessions: the list (kind, server, client, start, end, message
// count), one session as its own timeline (#/sessions/ID), its name and
// notes, export (a download of the session file) and import (an upload),
// replay of one request (as recorded or edited, to any server) and of the
// whole session against a live server, verification of a server against
// the session under a rules file (a report of each difference: request,
// path, recorded and actual value), and the daemon's structural diff of
// two sessions' answers, side by side with the changed paths marked.
import { api, enc, query } from './api.js';
import { store, serverName } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, dateTimeOf, timeOf, pretty, uid } from './util.js';
import { jsonTree } from './jsonview.js';
import { diffView } from './diff.js';
import { breakOnButton } from './intercept.js';

const PAGE = 50;
const MESSAGES_PAGE = 200;
const filters = { serverId: '', kind: '' };
let offset = 0;
let root = null;
const clients = new Map();   // session id -> client name (from its initialize)

function sessionIdFromHash() {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  return parts[0] === 'sessions' && parts[1] ? decodeURIComponent(parts[1]) : '';
}

export function mount(container) {
  root = container;
  const id = sessionIdFromHash();
  if (id) openSession(id);
  else renderList();
}

export function unmount() {
  root = null;
}

/**
 * A labelled choice of server.
 * @param {string} id the select's id
 * @param {string} selected the server chosen at first
 * @param {{any?: boolean|string, label?: string}} [options] `any`: a first
 *   choice for no server in particular (true: "All servers", or its text)
 */
function serverPicker(id, selected, { any = false, label = 'Server' } = {}) {
  const select = h('select', { id },
    any ? h('option', { value: '' }, any === true ? 'All servers' : any) : null,
    store.servers.map((s) => h('option', { value: s.id, selected: s.id === selected }, s.name)));
  return field(label, select);
}

function head(title, ...rest) {
  return h('div', { class: 'view-head' }, h('h2', { id: 'title-sessions' }, title), ...rest);
}

// --- the list --------------------------------------------------------------

function importForm(onDone) {
  const file = h('input', { type: 'file', id: 'ss-import-file', accept: 'application/json,.json' });
  const result = h('div', { role: 'status' });
  const form = h('form', { class: 'ss-import', 'aria-label': 'Import a session file' },
    field('Session file (JSON)', file, 'A file exported here or by another inspector in the same shape.'),
    h('button', { type: 'submit' }, 'Import'), result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(result);
    const chosen = file.files && file.files[0];
    if (!chosen) {
      clear(result, errorBox({ code: 'INVALID_REQUEST', message: 'choose a session file first' }));
      return;
    }
    try {
      const answer = await api('POST', '/api/sessions:import', { json: await chosen.text() });
      const session = answer.session || {};
      toast(`Imported ${session.id}${answer.idChanged ? ' (under a new id: the file\'s was taken)' : ''}`);
      onDone(session, answer.idChanged);
    } catch (error) {
      clear(result, errorBox(error));
    }
  });
  return form;
}

async function renderList() {
  if (!root) return;
  const server = h('select', { id: 'ss-server' }, h('option', { value: '' }, 'All servers'),
    store.servers.map((s) => h('option', { value: s.id, selected: filters.serverId === s.id }, s.name)));
  const kind = h('select', { id: 'ss-kind' }, [['', 'Any kind'], ['daemon', 'daemon'], ['bridge', 'bridge (front door)'], ['proxy', 'proxy'], ['replay', 'replay']]
    .map(([v, l]) => h('option', { value: v, selected: filters.kind === v }, l)));
  const update = () => {
    filters.serverId = server.value;
    filters.kind = kind.value;
    offset = 0;
    renderList();
  };
  server.addEventListener('change', update);
  kind.addEventListener('change', update);
  const results = h('div', { id: 'ss-results' }, h('p', { class: 'muted' }, 'Loading…'));
  clear(root, head('Recorded sessions'),
    h('div', { class: 'filters', role: 'search', 'aria-label': 'Filter sessions' }, field('Server', server), field('Kind', kind)),
    results,
    h('section', { class: 'panel', 'aria-labelledby': 'ss-import-title' }, h('h3', { id: 'ss-import-title' }, 'Import'),
      importForm((session) => { location.hash = `#/sessions/${enc(session.id)}`; })));
  try {
    const answer = await api('GET', `/api/sessions${query({ serverId: filters.serverId, kind: filters.kind, limit: PAGE, offset })}`);
    const list = (answer && answer.sessions) || [];
    const total = answer.total || 0;
    if (!root) return;
    clear(results,
      list.length === 0 ? h('p', { class: 'empty' }, 'No sessions recorded yet. Every connection to a server is one.') : h('div', { class: 'table-wrap' }, h('table', { class: 'sessions' },
        h('caption', { class: 'offscreen' }, 'Recorded sessions'),
        h('thead', {}, h('tr', {}, ['Session', 'Kind', 'Server', 'Client', 'Started', 'Ended', 'Messages', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, list.map(sessionRow)))),
      h('nav', { class: 'pager', 'aria-label': 'Session pages' },
        h('button', { type: 'button', disabled: offset === 0, onclick: () => { offset = Math.max(0, offset - PAGE); renderList(); } }, 'Newer'),
        h('span', { role: 'status' }, total ? `${offset + 1}–${offset + list.length} of ${total}` : ''),
        h('button', { type: 'button', disabled: offset + list.length >= total, onclick: () => { offset += PAGE; renderList(); } }, 'Older')));
    list.forEach(fillClient);
  } catch (error) {
    clear(results, errorBox(error));
  }
}

function label(s) {
  return s.name || s.id.slice(0, 8);
}

function sessionRow(s) {
  return h('tr', { dataset: { session: s.id } },
    h('th', { scope: 'row' }, h('a', { href: `#/sessions/${enc(s.id)}` }, label(s)),
      s.name ? h('div', { class: 'muted mono' }, s.id.slice(0, 8)) : null,
      s.importedAt ? h('div', { class: 'muted' }, 'imported') : null),
    h('td', {}, s.kind, s.replayOf ? h('div', { class: 'muted mono' }, `of ${s.replayOf.slice(0, 8)}`) : null,
      s.caller && s.caller.subject ? h('div', { class: 'muted ss-caller' }, `by ${s.caller.subject}`) : null),
    h('td', {}, s.serverName || serverName(s.serverId)),
    h('td', { class: 'ss-client', dataset: { client: s.id } }, clients.get(s.id) || '…'),
    h('td', {}, s.startedAt ? dateTimeOf(s.startedAt) : ''),
    h('td', {}, s.endedAt ? `${dateTimeOf(s.endedAt)}${s.endReason ? ` (${s.endReason})` : ''}` : 'live'),
    h('td', { class: 'ss-count' }, String(s.messages || 0)),
    h('td', { class: 'row-actions' },
      actionButton('Export', () => exportSession(s, false), { 'aria-label': `Export ${label(s)}` })));
}

// The client is who sent the session's initialize (clientInfo); the
// daemon's own sessions are the daemon's.
async function fillClient(s) {
  if (!clients.has(s.id)) {
    try {
      // The era probe (server/discover) may come before initialize.
      const page = await api('GET', `/api/sessions/${enc(s.id)}${query({ messages: true, pageSize: 6 })}`);
      const requests = (page.page || []).filter((m) => m.kind === 'request' && m.direction === 'CLIENT_TO_SERVER');
      const init = requests.find((m) => m.method === 'initialize') || requests.find((m) => m.method === 'server/discover');
      let name = s.kind === 'daemon' ? 'inspectord' : s.kind === 'replay' ? 'inspectord (replay)' : '—';
      if (init) {
        try {
          const params = JSON.parse(init.raw).params || {};
          const info = params.clientInfo || (params._meta || {})['io.modelcontextprotocol/clientInfo'];
          if (info && info.name) name = `${info.name}${info.version ? ` ${info.version}` : ''}`;
        } catch { /* keep the kind's */ }
      }
      clients.set(s.id, name);
    } catch {
      clients.set(s.id, '—');
    }
  }
  const cell = root && root.querySelector(`[data-client="${CSS.escape(s.id)}"]`);
  if (cell) cell.textContent = clients.get(s.id);
}

async function exportSession(s, includeSecrets) {
  const answer = await api('GET', `/api/sessions/${enc(s.id)}:export${includeSecrets ? '?includeSecrets=true' : ''}`);
  const url = URL.createObjectURL(new Blob([answer.json], { type: 'application/json' }));
  const link = h('a', { href: url, download: answer.filename || `session-${s.id}.json`, class: 'offscreen' }, 'download');
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  toast(`Exported ${answer.filename}${answer.masked ? ` (${answer.masked} secret values masked)` : ''}`);
}

// --- one session -----------------------------------------------------------

let current = null;      // the Session shown
let messages = [];       // its messages loaded so far
let nextToken = '';
let chosenMessage = null;

async function openSession(id) {
  clear(root, head('Session'), h('p', { class: 'muted' }, 'Loading…'));
  try {
    const s = await api('GET', `/api/sessions/${enc(id)}${query({ messages: true, pageSize: MESSAGES_PAGE })}`);
    if (!root) return;
    current = s;
    messages = s.page || [];
    nextToken = s.nextPageToken || '';
    chosenMessage = null;
    renderSession();
  } catch (error) {
    if (root) clear(root, head('Session', h('a', { href: '#/sessions' }, 'All sessions')), errorBox(error));
  }
}

async function loadMore() {
  const s = await api('GET', `/api/sessions/${enc(current.id)}${query({ messages: true, pageSize: MESSAGES_PAGE, pageToken: nextToken })}`);
  messages = messages.concat(s.page || []);
  nextToken = s.nextPageToken || '';
  renderMessages();
}

function renderSession() {
  const s = current;
  const name = h('input', { type: 'text', id: 'ss-name', value: s.name || '' });
  const notes = h('textarea', { id: 'ss-notes', rows: 3 });
  notes.value = s.notes || '';
  const about = h('form', { class: 'ss-about', 'aria-label': 'Name and notes' },
    field('Name', name), field('Notes', notes),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save name and notes')));
  about.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      current = { ...current, ...(await api('PATCH', `/api/sessions/${enc(s.id)}`, { name: name.value, notes: notes.value })) };
      toast('Saved');
      root.querySelector('#title-sessions').textContent = `Session ${label(current)}`;
    } catch (error) {
      toast(error.message, 'error');
    }
  });
  const secrets = h('input', { type: 'checkbox', id: 'ss-secrets' });
  const meta = {
    Id: s.id, Kind: s.kind, Server: s.serverName || serverName(s.serverId), Transport: s.transport,
    Command: s.serverCommand, URL: s.serverUrl, Protocol: s.protocolVersion,
    Started: s.startedAt ? dateTimeOf(s.startedAt) : '', Ended: s.endedAt ? `${dateTimeOf(s.endedAt)} ${s.endReason || ''}` : 'live',
    Messages: String(s.messages || 0), 'Replay of': s.replayOf, Imported: s.importedAt ? dateTimeOf(s.importedAt) : '',
    Caller: s.caller ? s.caller.subject : '', Issuer: s.caller ? s.caller.issuer : '',
    'Caller client': s.caller ? s.caller.clientId : '', Scopes: s.caller && s.caller.scopes ? s.caller.scopes.join(' ') : '',
  };
  clear(root,
    head(`Session ${label(s)}`, h('a', { href: '#/sessions' }, 'All sessions')),
    h('div', { class: 'ss-top' },
      h('section', { class: 'panel', 'aria-label': 'About this session' },
        h('dl', { class: 'ss-meta' }, Object.entries(meta).filter(([, v]) => v).map(([k, v]) => [h('dt', {}, k), h('dd', { class: k === 'Id' || k === 'Command' ? 'mono' : '' }, v)])),
        about,
        h('div', { class: 'actions' },
          actionButton('Export', () => exportSession(s, secrets.checked), { id: 'ss-export' }),
          h('label', { class: 'check', for: 'ss-secrets' }, secrets, ' Keep secrets (unmasked)'))),
      replayPanel()),
    h('div', { id: 'ss-replay-result' }),
    h('section', { class: 'panel', 'aria-labelledby': 'ss-msgs-title' },
      h('h3', { id: 'ss-msgs-title' }, 'Messages'),
      h('div', { class: 'split ss-split' }, h('div', { id: 'ss-messages', class: 'ss-messages' }), h('div', { id: 'ss-message', class: 'detail', 'aria-live': 'polite' }))));
  renderMessages();
}

function arrow(direction) {
  return direction === 'CLIENT_TO_SERVER' ? '→' : '←';
}

function renderMessages() {
  const box = root && root.querySelector('#ss-messages');
  if (!box) return;
  clear(box,
    messages.length === 0 ? h('p', { class: 'empty' }, 'No messages.') : h('ol', { class: 'ss-list', 'aria-label': 'Messages in order' },
      messages.map((m) => h('li', {}, h('button', {
        type: 'button', class: `ss-msg${m.success === false || m.kind === 'error' ? ' is-error' : ''}`, 'aria-pressed': String(chosenMessage === m),
        dataset: { seq: String(m.sequence || ''), method: m.method || '', kind: m.kind || '', dir: m.direction || '' },
        onclick: () => { chosenMessage = m; renderMessages(); showMessage(m); },
      },
      h('span', { class: 'mono' }, `${m.sequence || ''}`), ' ',
      h('span', { 'aria-label': m.direction === 'CLIENT_TO_SERVER' ? 'to server' : 'from server' }, arrow(m.direction)), ' ',
      h('span', { class: 'mono muted' }, timeOf(m.timestamp)), ' ',
      h('strong', {}, m.kind), ' ', m.method || '', m.target ? h('span', { class: 'muted' }, ` ${m.target}`) : null,
      m.durationMs !== undefined ? h('span', { class: 'muted' }, ` ${Math.round(m.durationMs)} ms`) : null,
      m.interceptAction ? h('span', { class: 'muted' }, ` [${m.interceptAction}]`) : null)))),
    nextToken ? actionButton('Load more messages', loadMore) : null);
}

function showMessage(m) {
  const box = root.querySelector('#ss-message');
  const replayable = m.kind === 'request' && m.direction === 'CLIENT_TO_SERVER' && m.id && m.id !== '0';
  clear(box,
    h('h4', { tabindex: '-1' }, `#${m.sequence} ${m.kind} ${m.method || ''}`),
    jsonTree(m.raw, { label: `Message ${m.sequence}` }),
    m.modified && m.originalRaw ? h('details', {}, h('summary', {}, 'Changed by intercept: the message as received'), diffView(m.originalRaw, m.raw, { labelA: 'As received', labelB: 'As sent' })) : null,
    h('div', { class: 'actions' },
      breakOnButton({ serverId: current.serverId, direction: m.direction, kind: m.kind, method: m.method, target: m.target })),
    replayable ? replayOne(m) : null);
  box.querySelector('h4').focus();
}

// Replay one recorded request, as it was or edited, to any server. Shared
// with Live traffic and History (`own`: the server it was sent to; `label`:
// how the message is named).
export function replayOne(m, own = current.serverId, label = `message ${m.sequence}`) {
  const serverId = uid('rs');
  const picker = serverPicker(serverId, own, { any: 'Its own server', label: 'Send to' });
  const area = h('textarea', { id: uid('re'), class: 'mono', rows: 8, spellcheck: 'false', hidden: true, 'aria-label': 'The request to send (JSON)' });
  // The editor is filled when first opened: a large message costs nothing
  // until someone edits it.
  let filled = false;
  const check = h('div', { role: 'status', class: 'edit-check' });
  const diffBox = h('div', {});
  const out = h('div', { class: 'ss-replay-one' });
  let original;
  const recorded = () => {
    if (original === undefined) {
      try {
        original = JSON.parse(m.raw);
      } catch {
        original = null;  // sent as recorded
      }
    }
    return original;
  };
  const edited = () => {
    if (area.hidden) return { ok: true, raw: '' };
    try {
      const value = JSON.parse(area.value);
      return { ok: true, raw: JSON.stringify(value), value };
    } catch (error) {
      return { ok: false, problem: error.message };
    }
  };
  area.addEventListener('input', () => {
    const e = edited();
    check.className = `edit-check ${e.ok ? 'ok' : 'err'}`;
    check.textContent = e.ok ? 'Valid JSON' : `Not JSON: ${e.problem}`;
    const before = recorded();
    clear(diffBox, e.ok && before ? diffView(before, e.value, { labelA: 'Recorded', labelB: 'To send' }) : null);
  });
  const editButton = h('button', {
    type: 'button', 'aria-expanded': 'false',
    onclick: () => {
      if (!filled) {
        area.value = pretty(m.raw);
        filled = true;
      }
      area.hidden = !area.hidden;
      editButton.setAttribute('aria-expanded', String(!area.hidden));
      if (!area.hidden) area.focus();
    },
  }, 'Edit before replaying');
  const form = h('form', { class: 'ss-replay-form', 'aria-label': `Replay ${label}` },
    h('h5', {}, 'Replay this request'), picker,
    h('div', { class: 'actions' }, editButton), area, check, diffBox,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Replay')), out);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = edited();
    if (!body.ok) return;
    const target = form.querySelector(`#${serverId}`).value;
    clear(out, h('p', { class: 'muted' }, 'Replaying…'));
    try {
      const answer = await api('POST', '/api/replay', { messageId: m.id, raw: body.raw || undefined, serverId: target || undefined });
      clear(out, h('h5', {}, 'Answer ', h('a', { href: `#/sessions/${enc(answer.sessionId)}` }, 'in its replay session')),
        answer.response ? jsonTree(answer.response.raw, { label: 'The answer', open: 4 }) : h('p', { class: 'muted' }, 'No answer.'));
    } catch (error) {
      clear(out, errorBox(error));
    }
  });
  return form;
}

// Replay the whole session against a live server, or compare it with
// another session; either way the diff of the answers follows.
function replayPanel() {
  const own = store.servers.some((x) => x.id === current.serverId) ? current.serverId : (store.servers.find((x) => x.name === current.serverName) || {}).id;
  const ignore = h('input', { type: 'text', id: 'ss-ignore', placeholder: '/result/content/*/text' });
  const replay = h('form', { class: 'ss-replay', 'aria-label': 'Replay the session' },
    h('h3', {}, 'Replay against a live server'),
    serverPicker('ss-replay-server', own),
    field('Also ignore (JSON Pointers, comma-separated)', ignore, '/id and /result/_meta are ignored already.'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Replay session')));
  replay.addEventListener('submit', async (e) => {
    e.preventDefault();
    const out = root.querySelector('#ss-replay-result');
    const button = replay.querySelector('button[type=submit]');
    button.disabled = true;
    clear(out, h('p', { class: 'muted', role: 'status' }, 'Replaying…'));
    try {
      const answer = await api('POST', `/api/sessions/${enc(current.id)}:replay`, {
        serverId: replay.querySelector('#ss-replay-server').value,
        ignore: ignore.value.split(',').map((x) => x.trim()).filter(Boolean),
      });
      await showDiff(out, answer.diff, current, answer.session);
    } catch (error) {
      clear(out, errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  const other = h('input', { type: 'text', id: 'ss-compare', placeholder: 'another session\'s id', autocomplete: 'off' });
  const compare = h('form', { class: 'ss-compare', 'aria-label': 'Compare with another session' },
    h('h3', {}, 'Compare'), field('With session', other),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Compare answers')));
  compare.addEventListener('submit', async (e) => {
    e.preventDefault();
    const out = root.querySelector('#ss-replay-result');
    try {
      const diff = await api('POST', '/api/sessions:diff', { a: current.id, b: other.value.trim() });
      await showDiff(out, diff, current, { id: diff.b });
    } catch (error) {
      clear(out, errorBox(error));
    }
  });
  return h('section', { class: 'panel', 'aria-label': 'Replay and compare' }, replay, verifyForm(own), compare);
}

// Verify a live server against this session (SessionService.VerifySession):
// the server's answers compared with the recorded ones under a rules file.
function verifyForm(own) {
  const rules = h('textarea', { id: 'ss-verify-rules', class: 'mono', rows: 3, spellcheck: 'false', placeholder: '{"ignore": ["/result/content/0/text"]}' });
  const form = h('form', { class: 'ss-verify', 'aria-label': 'Verify a server against this session' },
    h('h3', {}, 'Verify against…'),
    serverPicker('ss-verify-server', own, { label: 'Server to check' }),
    field('Rules (JSON, optional)', rules, 'What may differ: ignore, match, sets, tolerance; empty: the defaults (ids, _meta, timestamps).'),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Verify')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const out = root.querySelector('#ss-replay-result');
    const button = form.querySelector('button[type=submit]');
    button.disabled = true;
    clear(out, h('p', { class: 'muted', role: 'status' }, 'Verifying…'));
    try {
      const answer = await api('POST', '/api/sessions:verify', {
        id: current.id,
        serverId: form.querySelector('#ss-verify-server').value,
        rulesJson: rules.value.trim() || undefined,
      });
      showVerifyReport(out, answer, serverName(form.querySelector('#ss-verify-server').value));
    } catch (error) {
      clear(out, errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function valueText(v) {
  return v === undefined ? 'absent' : JSON.stringify(v);
}

// The verification's report: passed or not, then one row per difference.
function showVerifyReport(out, answer, server) {
  const diff = answer.diff || {};
  const pairs = diff.pairs || [];
  const rows = [];
  for (const p of pairs) {
    if (p.status === 'same') continue;
    const changes = p.changes && p.changes.length ? p.changes : [{ path: '', op: p.status }];
    for (const c of changes) {
      rows.push(h('tr', { class: 'mark-changed', dataset: { index: String(p.index), path: c.path || '' } },
        h('td', {}, `#${p.index} ${p.method}`),
        h('td', { class: 'mono ss-verify-path' }, c.path || '(whole answer)'),
        h('td', { class: 'mono ss-verify-recorded' }, c.op === 'added' ? 'absent' : valueText(c.oldValue)),
        h('td', { class: 'mono ss-verify-actual' }, c.op === 'removed' ? 'absent' : valueText(c.newValue))));
    }
  }
  const differing = pairs.filter((p) => p.status !== 'same').length;
  const replay = answer.session || {};
  clear(out, h('section', { class: 'panel ss-verify-report', 'aria-labelledby': 'ss-verify-title', dataset: { passed: String(!!answer.passed) } },
    h('h3', { id: 'ss-verify-title', tabindex: '-1' },
      answer.passed ? `PASS: all ${pairs.length} answers of ${server} match` : `FAIL: ${differing} of ${pairs.length} answers of ${server} differ`),
    replay.id ? h('p', {}, 'Replayed in ', h('a', { href: `#/sessions/${enc(replay.id)}` }, `session ${replay.id.slice(0, 8)}`),
      diff.ignored && diff.ignored.length ? h('span', { class: 'muted' }, ` (ignoring ${diff.ignored.join(', ')})`) : null) : null,
    rows.length ? h('div', { class: 'table-wrap' }, h('table', { class: 'ss-verify-diffs' },
      h('caption', { class: 'offscreen' }, 'Differences'),
      h('thead', {}, h('tr', {}, ['Request', 'Path', 'Recorded', 'Actual'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows))) : null));
  out.querySelector('#ss-verify-title').focus();
}

async function messageRaw(id) {
  if (!id || id === '0') return null;
  const answer = await api('GET', `/api/messages${query({ messageId: id })}`);
  const m = ((answer && answer.messages) || [])[0];
  return m ? m.raw : null;
}

// The daemon's diff: a row per request pair; the pairs that differ show
// both answers side by side with the changed paths marked.
async function showDiff(out, diff, a, b) {
  const pairs = diff.pairs || [];
  const differing = pairs.filter((p) => p.status !== 'same');
  const details = await Promise.all(differing.map(async (p) => {
    const [left, right] = await Promise.all([messageRaw(p.aResponseId), messageRaw(p.bResponseId)]);
    return h('section', { class: 'ss-pair', 'aria-label': `Request ${p.index} ${p.method}`, dataset: { index: String(p.index), status: p.status } },
      h('h4', {}, `#${p.index} ${p.method}${p.bMethod && p.bMethod !== p.method ? ` / ${p.bMethod}` : ''} — ${p.status.replace('_', ' ')}`),
      diffView(left, right, { changes: p.changes || [], labelA: `Recorded (${label(a)})`, labelB: `Replayed (${(b.id || '').slice(0, 8)})` }));
  }));
  clear(out, h('section', { class: 'panel ss-diff', 'aria-labelledby': 'ss-diff-title' },
    h('h3', { id: 'ss-diff-title', tabindex: '-1' }, diff.identical ? 'The answers are the same' : `${diff.differing} of ${pairs.length} answers differ`),
    b.id ? h('p', {}, 'Compared with ', h('a', { href: `#/sessions/${enc(b.id)}` }, `session ${b.id.slice(0, 8)}`),
      diff.ignored && diff.ignored.length ? h('span', { class: 'muted' }, ` (ignoring ${diff.ignored.join(', ')})`) : null) : null,
    h('div', { class: 'table-wrap' }, h('table', { class: 'ss-pairs' },
      h('caption', { class: 'offscreen' }, 'Answers, request by request'),
      h('thead', {}, h('tr', {}, ['#', 'Method', 'Status', 'Changed paths'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, pairs.map((p) => h('tr', { class: p.status === 'same' ? '' : 'mark-changed' },
        h('td', {}, String(p.index)), h('td', {}, p.method), h('td', {}, p.status),
        h('td', { class: 'mono' }, (p.changes || []).map((c) => c.path || '(whole)').join(', '))))))),
    details.length ? details : null));
  out.querySelector('#ss-diff-title').focus();
}

