// Intercept: the mode (PASSTHROUGH holds what a breakpoint matches,
// INTERCEPT holds everything), the hold timeout, the breakpoints (every key
// of `inspectorctl break add`, enable, disable, reset hits, remove) and the
// messages held now, live from the HELD events, grouped by session and
// direction (a held message holds back the ones behind it there), each
// forwarded, dropped or modified in a JSON editor that checks the edit and
// shows its diff before it is sent. A banner on every view says when
// something is held.
import { api, enc } from './api.js';
import { store, on, serverName } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, timeOf, pretty, uid } from './util.js';
import { jsonTree } from './jsonview.js';
import { diffView, jsonDiff } from './diff.js';

const DIRECTIONS = [['', 'Either direction'], ['CLIENT_TO_SERVER', 'Client → server (c2s)'], ['SERVER_TO_CLIENT', 'Server → client (s2c)']];
const KINDS = [['', 'Any kind'], ['request', 'request'], ['response', 'response'], ['error', 'error'], ['notification', 'notification']];

// The messages held now (hold id -> HeldMessage), kept for every view.
const held = new Map();
const resolvedAt = new Map();  // hold id -> when its release was seen
let state = null;          // InterceptState
let root = null;
let off = [];
let banner = null;
let prefill = null;        // a breakpoint to put in the form ("break on this")
const editing = new Map(); // hold id -> the editor's element, kept across renders
let refreshTimer = 0;
let modeKey = '';          // the mode and timeout the mode panel shows
// The card of each held message, kept across renders (its tree stays as
// opened, its editor as typed); only its "behind" line is updated.
const cards = new Map();

function dirText(d) {
  return d === 'CLIENT_TO_SERVER' ? 'client → server' : d === 'SERVER_TO_CLIENT' ? 'server → client' : 'either direction';
}

// Replaces what the list knew before the call started; what the HELD
// events said meanwhile (held, or resolved) stands.
async function loadHeld() {
  const asked = Date.now();
  const answer = await api('GET', '/api/intercept/held');
  const listed = new Map(((answer && answer.held) || []).map((item) => [item.id, item]));
  for (const [id, item] of held) if (!listed.has(id) && item.seenAt < asked) held.delete(id);
  for (const [id, item] of listed) if (!(resolvedAt.get(id) >= asked)) held.set(id, { ...item, seenAt: asked });
  for (const [id, at] of resolvedAt) if (at < asked - 60000) resolvedAt.delete(id);
  paintBanner();
}

// Every read or change of the intercept state goes through here. Answers
// can arrive out of order (a GET sent before a PUT may be answered after
// it); an answer to an older request never replaces a newer one's state.
let stateAsked = 0;
let stateTaken = 0;
async function askState(method, body) {
  const n = ++stateAsked;
  const answer = await api(method, '/api/intercept', body);
  if (n > stateTaken) {
    stateTaken = n;
    state = answer;
  }
  return state;
}

function loadState() {
  return askState('GET');
}

function paintBanner() {
  if (!banner) return;
  const n = held.size;
  banner.hidden = n === 0;
  if (n) {
    clear(banner, h('strong', {}, `${n} message${n === 1 ? ' is' : 's are'} held`),
      ' — each waits (with what is behind it in its session and direction) until it is forwarded, modified or dropped. ',
      h('a', { href: '#/intercept' }, 'Open Intercept'));
  }
}

// Called once by the shell: follows the HELD events for the banner.
export function startHeldTracking() {
  banner = h('div', { class: 'held-banner', role: 'alert', id: 'held-banner', hidden: true });
  document.getElementById('main').before(banner);
  on('held', (item) => {
    if (item.action && item.action !== 'INTERCEPT_ACTION_UNSPECIFIED') {
      held.delete(item.id);
      editing.delete(item.id);
      resolvedAt.set(item.id, Date.now());
    } else {
      held.set(item.id, { ...item, seenAt: Date.now() });
    }
    paintBanner();
    if (root) {
      renderHeld();
      // A hit counts on its breakpoint; the mode may have changed elsewhere.
      loadState().then(() => {
        renderMode();
        renderBreakpoints();
      }, () => {});
    }
  });
  loadHeld().catch(() => {});
}

// "Break on this": the intercept view opens with the form filled in from a
// message (McpMessage fields, or a timeline row).
export function breakOn(message) {
  prefill = {
    serverId: message.serverId || '',
    direction: message.direction || message.dir || '',
    kind: message.kind === 'response' || message.kind === 'error' ? '' : (message.kind || ''),
    method: message.method || '',
    target: message.target || '',
  };
  if (location.hash === '#/intercept' && root) render();
  else location.hash = '#/intercept';
}

export function breakOnButton(message) {
  return h('button', { type: 'button', onclick: () => breakOn(message) }, 'Break on this');
}

export function mount(container) {
  root = container;
  off = [on('servers', () => render())];
  clear(root, h('div', { class: 'view-head' }, h('h2', { id: 'title-intercept' }, 'Intercept')), h('p', { class: 'muted' }, 'Loading…'));
  refresh();
  // What waits behind a held message changes without an event: look again
  // while something is held.
  refreshTimer = setInterval(() => {
    if (held.size && root) loadHeld().then(renderHeld, () => {});
  }, 2000);
}

export function unmount() {
  off.forEach((f) => f());
  off = [];
  clearInterval(refreshTimer);
  root = null;
  cards.clear();
  modeKey = '';
}

async function refresh() {
  try {
    await Promise.all([loadState(), loadHeld()]);
    render();
  } catch (error) {
    if (root) clear(root, h('div', { class: 'view-head' }, h('h2', { id: 'title-intercept' }, 'Intercept')), errorBox(error));
  }
}

function render() {
  if (!root || !state) return;
  const active = /** @type {HTMLElement|null} */ (document.activeElement);
  const focused = active && root.contains(active) ? active : null;
  const focusKey = focused && focused.dataset.key;
  // Forms keep what is being typed: they are built once per mount.
  if (!root.querySelector('.bp-form')) {
    clear(root,
      h('div', { class: 'view-head' }, h('h2', { id: 'title-intercept' }, 'Intercept')),
      h('div', { id: 'ic-mode' }),
      h('section', { class: 'panel', 'aria-labelledby': 'ic-held-title' }, h('h3', { id: 'ic-held-title' }, 'Held messages'), h('div', { id: 'ic-held' })),
      h('section', { class: 'panel', 'aria-labelledby': 'ic-bp-title' }, h('h3', { id: 'ic-bp-title' }, 'Breakpoints'),
        h('div', { id: 'ic-bps' }), breakpointForm()));
  }
  // Servers added since: the form's server list follows.
  const serverSelect = root.querySelector('#bp-server');
  if (serverSelect && serverSelect.options.length !== store.servers.length + 1) {
    const keep = serverSelect.value;
    clear(serverSelect, h('option', { value: '' }, 'Any server'), store.servers.map((s) => h('option', { value: s.id, selected: s.id === keep }, s.name)));
  }
  if (prefill) {
    fillForm(prefill);
    prefill = null;
  }
  renderMode();
  renderBreakpoints();
  renderHeld();
  if (focusKey && !root.contains(focused)) root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
}

// The mode panel, rebuilt only when the mode or the timeout changed.
function renderMode() {
  if (!root || !state || !root.querySelector('#ic-mode')) return;
  const key = `${state.mode}|${state.holdTimeoutMs || 0}`;
  if (key === modeKey) return;
  modeKey = key;
  keepFocus(() => clear(root.querySelector('#ic-mode'), modePanel()));
}

function keepFocus(paint) {
  const active = /** @type {HTMLElement|null} */ (document.activeElement);
  const focused = active && root.contains(active) ? active : null;
  const focusKey = focused && focused.dataset.key;
  paint();
  if (focusKey && !root.contains(focused)) root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
}

function renderBreakpoints() {
  if (!root || !state || !root.querySelector('#ic-bps')) return;
  keepFocus(() => clear(root.querySelector('#ic-bps'), breakpointTable()));
}

function renderHeld() {
  if (!root || !state || !root.querySelector('#ic-held')) return;
  const box = root.querySelector('#ic-held');
  for (const id of [...cards.keys()]) if (!held.has(id)) cards.delete(id);
  keepFocus(() => clear(box, heldList()));
}

// --- mode and timeout ------------------------------------------------------

function modePanel() {
  const intercepting = state.mode === 'INTERCEPT';
  const timeout = h('input', { type: 'number', min: '0', step: '1000', value: String(state.holdTimeoutMs || 0), id: 'ic-timeout' });
  const setMode = (mode) => async () => {
    await askState('PUT', { mode });
    if (mode === 'PASSTHROUGH') await loadHeld();
    toast(mode === 'INTERCEPT' ? 'INTERCEPT: every message is held' : 'PASSTHROUGH: messages flow on; what was held was forwarded in order');
    render();
  };
  const form = h('form', { class: 'ic-timeout', 'aria-label': 'Hold timeout' },
    field('Hold timeout (ms; 0: never)', timeout, 'A message held this long is forwarded unchanged.'),
    h('button', { type: 'submit', 'data-key': 'save-timeout' }, 'Save timeout'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const ms = Number(timeout.value);
    if (!Number.isInteger(ms) || ms < 0) {
      toast('The hold timeout is a whole number of milliseconds, 0 or more', 'error');
      return;
    }
    try {
      await askState('PUT', { holdTimeoutMs: ms });
      toast(ms ? `Held messages are forwarded after ${ms} ms` : 'Held messages wait until someone acts');
      render();
    } catch (error) {
      toast(error.message, 'error');
    }
  });
  return h('section', { class: `panel ic-mode ${intercepting ? 'is-intercepting' : ''}`, 'aria-labelledby': 'ic-mode-title' },
    h('h3', { id: 'ic-mode-title' }, 'Mode: ', h('span', { class: 'ic-mode-name', id: 'ic-mode-name' }, intercepting ? 'INTERCEPT' : 'PASSTHROUGH')),
    h('p', { class: 'hint' }, intercepting
      ? 'Every message, both directions, is held until you act on it.'
      : 'Messages flow on; only what an enabled breakpoint matches is held.'),
    h('div', { class: 'actions', role: 'group', 'aria-label': 'Mode' },
      actionButton('Passthrough', setMode('PASSTHROUGH'), { 'aria-pressed': String(!intercepting), 'data-key': 'mode-passthrough' }),
      actionButton('Intercept everything', setMode('INTERCEPT'), { 'aria-pressed': String(intercepting), 'data-key': 'mode-intercept' })),
    form);
}

// --- breakpoints -----------------------------------------------------------

function condition(bp) {
  const parts = [];
  if (bp.serverId) parts.push(`server=${serverName(bp.serverId) || bp.serverId}`);
  if (bp.sessionId) parts.push(`session=${bp.sessionId}`);
  if (bp.direction && bp.direction !== 'DIRECTION_UNSPECIFIED') parts.push(`direction=${bp.direction === 'CLIENT_TO_SERVER' ? 'c2s' : 's2c'}`);
  for (const [key, name] of [['kind', 'kind'], ['method', 'method'], ['target', 'target'], ['pattern', 'pattern'], ['jsonPointer', 'pointer'], ['value', 'value'], ['valuePattern', 'value_pattern']]) {
    if (bp[key]) parts.push(`${name}=${bp[key]}`);
  }
  if (bp.once) parts.push('once');
  if (bp.leaveUnanswered) parts.push('unanswered');
  return parts.join(', ') || '(every message)';
}

function breakpointTable() {
  const bps = state.breakpoints || [];
  if (!bps.length) return h('p', { class: 'empty' }, 'No breakpoints. Add one below, or use "Break on this" on a message in Live traffic.');
  return h('div', { class: 'table-wrap' }, h('table', { class: 'bp-table' },
    h('caption', { class: 'offscreen' }, 'Breakpoints'),
    h('thead', {}, h('tr', {}, ['Id', 'Condition', 'Hits', 'State', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, bps.map((bp) => h('tr', { dataset: { bp: bp.id }, class: bp.enabled ? '' : 'bp-off' },
      h('th', { scope: 'row', class: 'mono' }, bp.id),
      h('td', { class: 'mono' }, condition(bp)),
      h('td', { class: 'bp-hits' }, String(bp.hits || 0)),
      h('td', {}, bp.enabled ? 'enabled' : 'disabled'),
      h('td', { class: 'row-actions' },
        actionButton(bp.enabled ? 'Disable' : 'Enable', async () => {
          await api('PATCH', `/api/intercept/breakpoints/${enc(bp.id)}`, { enabled: !bp.enabled });
          await loadState();
          render();
        }, { 'aria-label': `${bp.enabled ? 'Disable' : 'Enable'} ${bp.id}`, 'data-key': `toggle-${bp.id}` }),
        actionButton('Reset hits', async () => {
          await api('PATCH', `/api/intercept/breakpoints/${enc(bp.id)}`, { resetHits: true });
          await loadState();
          render();
        }, { 'aria-label': `Reset the hits of ${bp.id}`, 'data-key': `reset-${bp.id}` }),
        actionButton('Remove', async () => {
          await api('DELETE', `/api/intercept/breakpoints/${enc(bp.id)}`);
          await loadState();
          toast(`Removed ${bp.id}`);
          render();
        }, { class: 'danger', 'aria-label': `Remove ${bp.id}`, 'data-key': `remove-${bp.id}` })))))));
}

const formControls = {};

function fillForm(values) {
  for (const [key, value] of Object.entries(values)) {
    const control = formControls[key];
    if (!control) continue;
    if (control.type === 'checkbox') control.checked = Boolean(value);
    else control.value = value;
  }
  formControls.method?.focus();
  root.querySelector('.bp-form')?.scrollIntoView({ block: 'nearest' });
}

function breakpointForm() {
  const server = h('select', { id: 'bp-server' }, h('option', { value: '' }, 'Any server'),
    store.servers.map((s) => h('option', { value: s.id }, s.name)));
  const text = (id, placeholder) => h('input', { type: 'text', id, placeholder, autocomplete: 'off' });
  const c = {
    serverId: server,
    sessionId: text('bp-session', 'a session id'),
    direction: h('select', { id: 'bp-direction' }, DIRECTIONS.map(([v, l]) => h('option', { value: v }, l))),
    kind: h('select', { id: 'bp-kind' }, KINDS.map(([v, l]) => h('option', { value: v }, l))),
    method: text('bp-method', 'tools/call'),
    target: text('bp-target', 'tool name, resource URI or prompt name'),
    pattern: text('bp-pattern', 'RE2 expression searched in the raw JSON'),
    jsonPointer: text('bp-pointer', '/params/arguments/path'),
    value: text('bp-value', 'JSON, e.g. "x" or 3'),
    valuePattern: text('bp-value-pattern', 'RE2, e.g. ^/etc/'),
    once: h('input', { type: 'checkbox', id: 'bp-once' }),
    leaveUnanswered: h('input', { type: 'checkbox', id: 'bp-unanswered' }),
    disabled: h('input', { type: 'checkbox', id: 'bp-disabled' }),
  };
  Object.assign(formControls, c);
  const errors = h('div', {});
  const form = h('form', { class: 'bp-form', 'aria-label': 'Add a breakpoint' },
    h('h4', {}, 'Add a breakpoint'),
    h('p', { class: 'hint' }, 'Every condition given must match; leave a field empty to match anything.'),
    h('div', { class: 'bp-grid' },
      field('Server', c.serverId), field('Session', c.sessionId), field('Direction', c.direction), field('Kind', c.kind),
      field('Method', c.method, 'A response or error matches its request\'s method.'), field('Target', c.target),
      field('Pattern', c.pattern), field('JSON Pointer', c.jsonPointer, 'Alone: matches when it resolves.'),
      field('Value at the pointer', c.value, 'JSON the value there equals.'), field('Value pattern', c.valuePattern, 'RE2 the value there matches.')),
    h('div', {},
      h('label', { class: 'check', for: 'bp-once' }, c.once, ' Once (disable after the first hit)'),
      h('label', { class: 'check', for: 'bp-unanswered' }, c.leaveUnanswered, ' Unanswered (a dropped request gets no answer)'),
      h('label', { class: 'check', for: 'bp-disabled' }, c.disabled, ' Add it disabled')),
    errors,
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Add breakpoint')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    const bp = { enabled: !c.disabled.checked, once: c.once.checked, leaveUnanswered: c.leaveUnanswered.checked };
    for (const key of ['serverId', 'sessionId', 'direction', 'kind', 'method', 'target', 'pattern', 'jsonPointer', 'value', 'valuePattern']) {
      const v = c[key].value.trim();
      if (v) bp[key] = v;
    }
    if ((bp.value || bp.valuePattern) && !bp.jsonPointer) {
      clear(errors, errorBox({ code: 'INVALID_REQUEST', message: 'a value or value pattern needs a JSON Pointer' }));
      return;
    }
    if (bp.value) {
      try {
        JSON.parse(bp.value);
      } catch {
        clear(errors, errorBox({ code: 'INVALID_REQUEST', message: 'the value is JSON: a string needs quotes ("x")' }));
        return;
      }
    }
    try {
      const added = await api('POST', '/api/intercept/breakpoints', bp);
      toast(`Added ${added.id}`);
      for (const control of Object.values(c)) {
        if (control.type === 'checkbox') control.checked = false;
        else control.value = '';
      }
      await loadState();
      render();
    } catch (error) {
      clear(errors, errorBox(error));
    }
  });
  return form;
}

// --- held messages ---------------------------------------------------------

function heldList() {
  const items = [...held.values()].sort((a, b) => a.heldAt - b.heldAt);
  if (!items.length) {
    return h('p', { class: 'empty', id: 'ic-held-empty' }, state.mode === 'INTERCEPT'
      ? 'Nothing is held yet; every message will be.'
      : 'Nothing is held. A message an enabled breakpoint matches waits here.');
  }
  // One group per session and direction: what the first holds back.
  const groups = new Map();
  for (const item of items) {
    const m = item.message || {};
    const key = `${m.sessionId}|${m.direction}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(item);
  }
  return [...groups.values()].map((group) => {
    const m = group[0].message || {};
    const behind = group.reduce((n, item) => n + (item.queuedBehind || 0), 0);
    return h('section', { class: 'held-group', 'aria-label': `Held in session ${m.sessionId || ''} ${dirText(m.direction)}` },
      h('h4', {}, `${serverName(m.serverId)} · ${dirText(m.direction)}`,
        h('span', { class: 'muted mono' }, ` session ${(m.sessionId || '').slice(0, 12)}`)),
      h('p', { class: behind ? 'held-behind' : 'muted' }, behind
        ? `${behind} more message${behind === 1 ? ' waits' : 's wait'} in this session and direction until the ones held are resolved; other sessions and the other direction flow on.`
        : 'Nothing else waits behind in this session and direction.'),
      group.map(heldCard));
  });
}

function heldCard(item) {
  let entry = cards.get(item.id);
  if (!entry) {
    entry = buildCard(item);
    cards.set(item.id, entry);
  }
  entry.behind.textContent = item.queuedBehind ? ` · ${item.queuedBehind} behind it` : '';
  const edit = editing.get(item.id) || null;
  if (edit && edit.parentElement !== entry.card) entry.card.append(edit);
  if (!edit) entry.card.querySelector('.held-editor')?.remove();
  return entry.card;
}

function buildCard(item) {
  const m = item.message || {};
  const behind = h('span', { class: 'held-behind-count' });
  const title = `${m.kind || 'message'} ${m.method || ''}${m.target ? ` ${m.target}` : ''}`;
  const unanswered = h('input', { type: 'checkbox', id: `un-${item.id}` });
  const card = h('article', { class: 'held-card', 'aria-label': `Held ${item.id}: ${title}`, dataset: { held: item.id } },
    h('header', {},
      h('h5', {}, h('span', { class: 'mono' }, item.id), ' ', title, m.jsonrpcId ? h('span', { class: 'muted' }, ` #${m.jsonrpcId}`) : null),
      h('span', { class: 'muted' }, `held ${timeOf(item.heldAt)}`, item.breakpointId ? ` by ${item.breakpointId}` : ' (INTERCEPT mode)', behind)),
    jsonTree(m.raw, { label: `Message ${item.id}`, open: 3 }),
    h('div', { class: 'actions' },
      actionButton('Forward', async () => {
        await api('POST', `/api/intercept/held/${enc(item.id)}`, { action: 'FORWARD' });
        toast(`Forwarded ${item.id}`);
      }, { class: 'primary', 'aria-label': `Forward ${item.id}`, 'data-key': `fwd-${item.id}` }),
      h('button', {
        type: 'button', 'aria-label': `Modify ${item.id}`, 'data-key': `mod-${item.id}`,
        onclick: () => { if (!editing.has(item.id)) editing.set(item.id, editor(item)); renderHeld(); editing.get(item.id).querySelector('textarea')?.focus(); },
      }, 'Modify…'),
      actionButton('Drop', async () => {
        await api('POST', `/api/intercept/held/${enc(item.id)}`, unanswered.checked ? { action: 'DROP', leaveUnanswered: true } : { action: 'DROP' });
        toast(`Dropped ${item.id}`);
      }, { class: 'danger', 'aria-label': `Drop ${item.id}`, 'data-key': `drop-${item.id}` }),
      m.kind === 'request' ? h('label', { class: 'check', for: unanswered.id }, unanswered, ' Drop without answering the caller') : null));
  return { card, behind };
}

// The JSON editor of a held message: checked as it is typed (JSON, JSON-RPC
// 2.0, the same kind and id, as the daemon will check), with the diff
// against the message as received; Send only when it passes.
function checkEdit(original, text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, problem: `not JSON: ${error.message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, problem: 'a JSON-RPC message is a JSON object' };
  if (value.jsonrpc !== '2.0') return { ok: false, problem: '"jsonrpc" must be "2.0"' };
  const kindOf = (v) => ('method' in v ? ('id' in v ? 'request' : 'notification') : ('result' in v || 'error' in v) ? 'answer' : 'unknown');
  if (kindOf(value) !== kindOf(original)) return { ok: false, problem: `a ${kindOf(original)} must stay a ${kindOf(original)}` };
  if (JSON.stringify(value.id) !== JSON.stringify(original.id)) return { ok: false, problem: `the id must stay ${JSON.stringify(original.id)}` };
  return { ok: true, value };
}

function editor(item) {
  const raw = (item.message || {}).raw || '';
  let original;
  try {
    original = JSON.parse(raw);
  } catch {
    original = null;
  }
  const areaId = uid('edit');
  const area = h('textarea', { id: areaId, class: 'mono held-edit', rows: 12, spellcheck: 'false', 'aria-describedby': `${areaId}-check` });
  area.value = pretty(raw);
  const checkLine = h('div', { id: `${areaId}-check`, role: 'status', class: 'edit-check' });
  const diffBox = h('div', { class: 'edit-diff' });
  const errors = h('div', {});
  const send = h('button', { type: 'submit', class: 'primary', 'aria-label': `Send the modified ${item.id}` }, 'Send modified');
  const validate = () => {
    const result = original ? checkEdit(original, area.value) : { ok: false, problem: 'the held message is not JSON' };
    send.disabled = !result.ok;
    area.setAttribute('aria-invalid', String(!result.ok));
    checkLine.className = `edit-check ${result.ok ? 'ok' : 'err'}`;
    if (!result.ok) {
      checkLine.textContent = `Cannot send: ${result.problem}`;
      return result;
    }
    const changes = jsonDiff(original, result.value);
    checkLine.textContent = changes.length ? `Valid; ${changes.length} change${changes.length === 1 ? '' : 's'}` : 'Valid; unchanged (Forward sends it as it is)';
    clear(diffBox, changes.length ? diffView(original, result.value, { changes, labelA: 'As received', labelB: 'As it will be sent' }) : null);
    return result;
  };
  area.addEventListener('input', validate);
  const form = h('form', { class: 'held-editor', 'aria-label': `Modify ${item.id}` },
    field(`Message ${item.id} as it will be sent (JSON)`, area), checkLine, errors,
    h('div', { class: 'actions' }, send,
      h('button', { type: 'button', onclick: () => { editing.delete(item.id); renderHeld(); } }, 'Cancel edit')),
    diffBox);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const result = validate();
    if (!result.ok) return;
    send.disabled = true;
    try {
      await api('POST', `/api/intercept/held/${enc(item.id)}`, { action: 'MODIFY', modified: JSON.stringify(result.value) });
      toast(`Sent the modified ${item.id}`);
      editing.delete(item.id);
    } catch (error) {
      clear(errors, errorBox(error));
      send.disabled = false;
    }
  });
  validate();
  return form;
}
