// Pending requests: what servers ask their client (sampling, elicitation,
// roots), answered or declined from the page as they arrive. Elicitation
// forms come from requestedSchema and are checked before they are sent
// (the daemon checks them again).
import { api, enc } from './api.js';
import { store, on, serverName, loadPending, currentServer } from './state.js';
import { h, clear, field, errorBox, pretty, actionButton, toast, dateTimeOf, webLink } from './util.js';
import { schemaForm } from './forms.js';

let root = null;
let off = [];
// The card of each request still waiting, kept across renders so that what
// a person is typing into one survives another request arriving.
const cards = new Map();

export function mount(container) {
  root = container;
  off = [on('pending', render), on('current', render)];
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
  return h('article', { class: 'pending-card', 'aria-label': title },
    h('header', {}, h('h3', {}, title), h('span', { class: 'muted' }, `received ${dateTimeOf(item.receivedAt)} · ${timeLeft(item)}`)),
    body);
}

function elicitation(item, params) {
  if (params.mode === 'url') {
    return h('div', {}, h('p', {}, params.message || ''),
      h('p', {}, webLink(params.url)),
      h('div', { class: 'actions' },
        actionButton('Done', () => done(api('POST', `/api/pending/${enc(item.id)}:resolve`, { result: { action: 'accept' } }), 'Answered')),
        actionButton('Decline', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_DECLINE' }), 'Declined'))));
  }
  const form = schemaForm(params.requestedSchema || { type: 'object' });
  const errors = h('div', {});
  const f = h('form', { class: 'elicit-form', 'aria-label': `Answer ${serverName(item.serverId)}` },
    h('p', { class: 'question' }, params.message || 'The server asks for input.'), form.element, errors,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Send'),
      actionButton('Decline', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_DECLINE' }), 'Declined')),
      actionButton('Cancel', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_CANCEL' }), 'Cancelled'))));
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
  const messages = (params.messages || []).map((m) => {
    const c = Array.isArray(m.content) ? m.content : [m.content || {}];
    return h('div', { class: `message role-${m.role}` }, h('div', { class: 'role' }, m.role),
      c.map((x) => (x.type === 'text' ? h('pre', { class: 'text-content' }, x.text) : h('pre', { class: 'json' }, pretty(x)))));
  });
  const reply = h('textarea', { rows: 4 });
  const model = h('input', { type: 'text', value: 'web-ui' });
  const errors = h('div', {});
  const f = h('form', { 'aria-label': `Answer the sampling request of ${serverName(item.serverId)}` },
    params.systemPrompt ? h('p', { class: 'muted' }, `System prompt: ${params.systemPrompt}`) : null,
    messages,
    h('p', { class: 'muted' }, `maxTokens ${params.maxTokens ?? '—'}`),
    field('Reply (assistant text)', reply), field('Model name', model), errors,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Send reply'),
      actionButton('Reject', () => done(api('POST', `/api/pending/${enc(item.id)}:reject`, { action: 'REJECT_ACTION_ERROR', reason: 'Rejected in the web UI' }), 'Rejected'))));
  f.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await done(api('POST', `/api/pending/${enc(item.id)}:resolve`, {
        result: { role: 'assistant', content: { type: 'text', text: reply.value }, model: model.value || 'web-ui', stopReason: 'endTurn' },
      }), 'Reply sent');
    } catch (error) {
      clear(errors, errorBox(error));
    }
  });
  return f;
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
