// Drift: what changed in the servers' catalogs (GET /api/catalog/changes,
// or /api/servers/{id}/catalog/changes for one server), newest first: each
// change with its changed fields side by side (diff.js) and, while its
// version is the item's current one and not approved, an Approve button
// (POST /api/servers/{id}/catalog:approve). A server that pins its catalog
// ("pinCatalog": true) withholds such items from its callers until then.
// Refreshed when the daemon reports a catalog change (Watch's
// catalogChanged).
import { api, enc, query } from './api.js';
import { store, on, serverName, onServerListChange } from './state.js';
import { h, clear, errorBox, actionButton, dateTimeOf, toast } from './util.js';
import { diffView } from './diff.js';

let root = null;
let offServers = null;
let offChanges = null;
let server = '';       // the chosen server's id; '' for all
let pendingOnly = false;

export function mount(container) {
  unmount();
  root = container;
  offServers = onServerListChange(() => { if (root) mount(root); });
  offChanges = on('catalogChanged', () => { if (root) load(); });
  const choose = h('select', { id: 'drift-server' },
    h('option', { value: '' }, 'All servers'),
    store.servers.map((s) => h('option', { value: s.id, selected: s.id === server }, s.name)));
  choose.addEventListener('change', () => { server = choose.value; load(); });
  const pending = h('input', { type: 'checkbox', id: 'drift-pending', checked: pendingOnly });
  pending.addEventListener('change', () => { pendingOnly = pending.checked; load(); });
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-drift' }, 'Catalog drift')),
    h('p', { class: 'hint' }, 'Tools, prompts and resources that came back different or appeared after a server\'s first listing. A server with "pinCatalog": true in its configuration withholds them from its callers until their current version is approved.'),
    h('div', { class: 'toolbar' },
      h('label', { for: 'drift-server' }, 'Server '), choose,
      h('label', { for: 'drift-pending' }, pending, ' Only not yet approved')),
    h('div', { id: 'drift-list', 'aria-live': 'polite' }));
  load();
}

export function unmount() {
  if (offServers) offServers();
  if (offChanges) offChanges();
  offServers = null;
  offChanges = null;
  root = null;
}

async function load() {
  const out = root && root.querySelector('#drift-list');
  if (!out) return;
  try {
    const path = server ? `/api/servers/${enc(server)}/catalog/changes` : '/api/catalog/changes';
    const answer = await api('GET', path + query({ pendingOnly: pendingOnly ? 'true' : '' }));
    if (!root) return;
    show(out, answer);
  } catch (error) {
    if (root) clear(out, errorBox(error));
  }
}

/** @param {any} change */
function stateOf(change) {
  if (!change.current) return ['superseded', 'Superseded'];
  if (change.withheld) return ['withheld', 'Withheld'];
  return change.approved ? ['approved', 'Approved'] : ['pending', 'Not approved'];
}

/** @param {string} text */
function parsed(text) {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// The changed fields of `object` only (all of them for an added item).
/** @param {any} object @param {string[]} fields */
function pick(object, fields) {
  if (!object || !fields.length) return object;
  const out = {};
  for (const f of fields) if (f in object) out[f] = object[f];
  return out;
}

/** @param {HTMLElement} out @param {any} answer */
function show(out, answer) {
  const changes = answer.changes || [];
  if (!changes.length) {
    clear(out, h('p', { class: 'empty' }, pendingOnly ? 'Nothing waits for approval.' : 'No catalog changes.'));
    return;
  }
  clear(out, h('ol', { class: 'drift-changes' }, changes.map((c) => {
    const [cls, text] = stateOf(c);
    const name = c.serverName || serverName(c.serverId);
    const fields = c.fields || [];
    const approve = c.current && !c.approved
      ? actionButton('Approve', async () => {
        const done = await api('POST', `/api/servers/${enc(c.serverId)}/catalog:approve`, { itemKeys: [c.itemKey] });
        toast(`Approved ${(done.approved || []).map((a) => a.itemKey).join(', ') || 'nothing new'} of ${name}`);
        await load();
      }, { class: 'drift-approve', 'aria-label': `Approve ${c.itemKey} of ${name}` })
      : null;
    return h('li', { class: `panel drift-change drift-${cls}`, dataset: { item: c.itemKey, server: name } },
      h('div', { class: 'drift-head' },
        h('strong', { class: 'mono drift-item' }, c.itemKey),
        h('span', { class: 'hint' }, ` ${c.list} of ${name} · ${c.change}${fields.length ? ` (${fields.join(', ')})` : ''} · ${dateTimeOf(Number(c.seenAt))}`),
        h('span', { class: `check drift-state drift-state-${cls}` }, text),
        approve),
      diffView(pick(parsed(c.beforeJson), fields), pick(parsed(c.afterJson), fields),
        { labelA: 'Before', labelB: 'After' }));
  })));
}
