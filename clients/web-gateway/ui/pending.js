// Pending requests: what servers ask their client (sampling, elicitation,
// roots), answered or declined from the page as they arrive. Elicitation
// forms come from requestedSchema and are checked before they are sent
// (the daemon checks them again).
import { api, enc } from './api.js';
import { store, on, serverName, loadPending, currentServer } from './state.js';
import { h, clear, field, errorBox, pretty, actionButton, toast, dateTimeOf, webLink } from './util.js';
import { schemaForm } from './forms.js';
import { findRaw } from './timeline.js';
import { samplingForm } from './sampling_form.js';

let root = null;
let off = [];
// The card of each request still waiting, kept across renders so that what
// a person is typing into one survives another request arriving.
const cards = new Map();

export function mount(container) {
  root = container;
  off = [on('pending', render), on('current', render), on('message', reorderLate)];
  loadPending().catch(() => {});
  render();
}

export function unmount() {
  off.forEach((f) => f());
  off = [];
  root = null;
  cards.clear();
}

function render() {
  if (!root) return;
  const items = [...store.pending.values()].sort((a, b) => a.receivedAt - b.receivedAt);
  const waiting = new Set(items.map((item) => item.id));
  for (const id of [...cards.keys()]) if (!waiting.has(id)) cards.delete(id);
  const cardOf = (item) => {
    if (!cards.has(item.id)) cards.set(item.id, card(item));
    return cards.get(item.id);
  };
  const focused = document.activeElement && root.contains(document.activeElement)
    ? document.activeElement : null;
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-pending' }, 'Pending requests'),
      h('span', { class: 'muted' }, items.length ? `${items.length} waiting` : '')),
    items.length === 0
      ? h('p', { class: 'empty' }, 'Nothing waits for you. When a server asks for sampling, an elicitation form or roots, it appears here at once.')
      : h('div', { class: 'pending-list' }, items.map(cardOf)),
    rootsEditor());
  // The field being typed in keeps the focus when its card stays.
  if (focused) (root.contains(focused) ? focused : root.querySelector('input, textarea, select, button'))?.focus();
}

// The daemon hands pending params over as a google.protobuf.Struct, whose
// keys come sorted; the server's own order of an elicitation's fields is in
// the raw JSON text of its request, recorded in the traffic. Returns the
// schema with its properties in that order, or null while the request's
// text has not been seen.
function keysOf(o) {
  return Object.keys(o || {}).sort().join('\u0000');
}
function findSchema(node, keys) {
  if (!node || typeof node !== 'object') return null;
  if (node.requestedSchema && node.requestedSchema.properties && keysOf(node.requestedSchema.properties) === keys) return node.requestedSchema;
  for (const value of Object.values(node)) {
    const found = findSchema(value, keys);
    if (found) return found;
  }
  return null;
}
export function serverOrdered(item, schema) {
  if (!schema || !schema.properties || Object.keys(schema.properties).length < 2) return schema;
  const keys = keysOf(schema.properties);
  let original = null;
  findRaw((row) => {
    if (row.serverId !== item.serverId || !row.raw.includes('requestedSchema')) return false;
    try {
      original = findSchema(JSON.parse(row.raw), keys);
    } catch {
      original = null;
    }
    return Boolean(original);
  });
  if (!original) return null;
  const properties = {};
  for (const key of Object.keys(original.properties)) properties[key] = schema.properties[key];
  return { ...schema, properties };
}

// An elicitation card drawn before its request's text arrived is drawn
// again, in the server's order, unless someone is already typing in it.
function reorderLate(event) {
  if (!root || !event.message || !String(event.message.raw || '').includes('requestedSchema')) return;
  let changed = false;
  for (const [id, element] of cards) {
    if (element.dataset.unordered && !element.contains(document.activeElement)) {
      cards.delete(id);
      changed = true;
    }
  }
  if (changed) render();
}

function timeLeft(item) {
  if (!item.deadline) return '';
  const s = Math.max(0, Math.round((item.deadline - Date.now()) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')} left`;
}

async function done(promise, what) {
  await promise;
  toast(what);
  await loadPending();
}

function card(item) {
  const params = item.params || {};
  const title = `${serverName(item.serverId)}: ${item.method}`;
  let body;
  if (item.kind === 'ELICITATION') body = elicitation(item, params);
  else if (item.kind === 'SAMPLING') body = sampling(item, params);
  else body = h('pre', { class: 'json' }, pretty(params));
  const element = h('article', { class: 'pending-card', 'aria-label': title },
    h('header', {}, h('h3', {}, title), h('span', { class: 'muted' }, `received ${dateTimeOf(item.receivedAt)} · ${timeLeft(item)}`)),
    body);
  if (body.dataset && body.dataset.unordered) element.dataset.unordered = '1';
  return element;
}

function elicitation(item, params) {
  if (params.mode === 'url') {
    // The URL is shown as text, in full; only an http(s) URL gets an
    // explicit button that opens it in a new tab.
    const open = webLink(params.url, 'Open in a new tab');
    if (open.tagName === 'A') {
      open.classList.add('button');
      open.setAttribute('aria-label', `Open ${params.url} in a new tab`);
    }
    return h('div', {}, h('p', {}, params.message || ''),
      h('p', { class: 'elicit-url' }, h('code', { class: 'mono' }, String(params.url ?? ''))),
      h('div', { class: 'actions' },
        open.tagName === 'A' ? open : h('span', { class: 'muted' }, 'Not an http(s) URL: it is not opened from here.'),
        actionButton('Done', () => done(api('POST', `/api/pending/${enc(item.id)}:resolve`, { result: { action: 'accept' } }), 'Answered')),
        actionButton('Decline', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_DECLINE' }), 'Declined'))));
  }
  const asked = params.requestedSchema || { type: 'object' };
  const ordered = serverOrdered(item, asked);
  const form = schemaForm(ordered || asked);
  const errors = h('div', {});
  const f = h('form', { class: 'elicit-form', 'aria-label': `Answer ${serverName(item.serverId)}` },
    h('p', { class: 'question' }, params.message || 'The server asks for input.'), form.element, errors,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Send'),
      actionButton('Decline', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_DECLINE' }), 'Declined')),
      actionButton('Cancel', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_CANCEL' }), 'Cancelled'))));
  if (!ordered) f.dataset.unordered = '1';
  f.addEventListener('submit', async (e) => {
    e.preventDefault();
    const { ok, value, errors: problems } = form.value();
    if (!ok) {
      clear(errors, errorBox({ code: 'INVALID_REQUEST', message: problems.join('; ') }));
      return;
    }
    try {
      await done(api('POST', `/api/pending/${enc(item.id)}:resolve`, { result: { action: 'accept', content: value } }), 'Answer sent');
    } catch (error) {
      clear(errors, errorBox(error));
    }
  });
  return f;
}

function sampling(item, params) {
  return samplingForm(`Answer the sampling request of ${serverName(item.serverId)}`, params, {
    reply: (result) => done(api('POST', `/api/pending/${enc(item.id)}:resolve`, { result }), 'Reply sent'),
    reject: () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_ERROR', reason: 'Rejected in the web UI' }), 'Rejected'),
  });
}

// The roots the chosen server is given (answered at once on roots/list).
function rootsEditor() {
  const server = currentServer();
  if (!server) return null;
  const area = h('textarea', { rows: 3, class: 'mono', placeholder: 'file:///home/me/project = project' });
  const box = h('section', { class: 'panel', 'aria-labelledby': 'roots-title' },
    h('h3', { id: 'roots-title' }, `Roots given to ${server.name}`),
    h('p', { class: 'hint' }, 'One file:// URI per line, optionally "= name". roots/list is answered from these at once; a change notifies the server.'),
    field('Roots', area),
    h('div', { class: 'actions' }, actionButton('Save roots', async () => {
      const roots = area.value.split('\n').map((l) => l.trim()).filter(Boolean).map((l) => {
        const [uri, name] = l.split(/\s*=\s*/);
        return name ? { uri, name } : { uri };
      });
      await api('PUT', `/api/servers/${enc(server.id)}/roots`, { roots });
      toast('Roots saved');
    })));
  api('GET', `/api/servers/${enc(server.id)}/roots`).then((answer) => {
    area.value = (answer.roots || []).map((r) => (r.name ? `${r.uri} = ${r.name}` : r.uri)).join('\n');
  }, () => {});
  return box;
}
