// Tools, resources, resource templates and prompts of the chosen server:
// browse and search, forms from inputSchema, results by content type,
// completion, progress and cancel. Tool calls go through POST /mcp (the raw
// JSON-RPC path), so that the call has an id of ours to cancel and a
// progress token whose notifications arrive on /api/events.
// An App (apps.js) opens in a dock below the lists that re-rendering
// never touches, so it stays open while the lists reload (a list_changed,
// another tab, another item chosen) until it is closed or another opens.
import { api, cancelSentCall, enc } from './api.js';
import { store, on, currentServer } from './state.js';
import { h, clear, field, errorBox, pretty, toast, uid } from './util.js';
import { schemaForm } from './forms.js';
import { browse } from './skills.js';
import { appResourceUri, openApp, closeApps } from './apps.js';
import { ViewLoader } from './view_loader.js';

const KINDS = [
  { key: 'tools', label: 'Tools', path: 'tools', list: 'tools' },
  { key: 'resources', label: 'Resources', path: 'resources', list: 'resources' },
  { key: 'templates', label: 'Templates', path: 'resource-templates', list: 'resourceTemplates' },
  { key: 'prompts', label: 'Prompts', path: 'prompts', list: 'prompts' },
];

let root = null;
// What shell() redraws, and the App's dock beside it (see above).
let body = null;
let dock = null;
let kind = 'tools';
let items = [];
let selected = null;
let search = '';
let off = [];
let callSeq = 0;
const progressWaiters = new Map();  // progress token -> function(params)
const loader = new ViewLoader((content) => shell(content));

export function mount(container) {
  root = container;
  body = h('div', { class: 'explore-body' });
  dock = h('div', { class: 'app-dock' });
  root.append(body, dock);
  loader.attach(container);
  off = [
    on('current', () => { selected = null; load(); }),
    on('listChanged', (change) => {
      if (change.serverId === store.current) load();
    }),
    on('message', (event) => {
      const m = event.message;
      if (m.method !== 'notifications/progress' || m.kind !== 'notification') return;
      try {
        const params = JSON.parse(m.raw).params || {};
        const waiter = progressWaiters.get(String(params.progressToken));
        if (waiter) waiter(params);
      } catch { /* not ours */ }
    }),
  ];
  load();
}

export function unmount() {
  closeApps();
  loader.detach();
  off.forEach((f) => f());
  off = [];
  root = null;
}

function shell(content) {
  const server = currentServer();
  const tabs = h('div', { class: 'subtabs', role: 'tablist', 'aria-label': 'What to explore' },
    KINDS.map((k) => h('button', {
      type: 'button', role: 'tab', id: `tab-${k.key}`, 'aria-selected': String(k.key === kind),
      tabindex: k.key === kind ? '0' : '-1',
      onclick: () => { kind = k.key; selected = null; search = ''; load(); },
      onkeydown: (e) => {
        const i = KINDS.findIndex((x) => x.key === kind);
        const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
        if (!step) return;
        kind = KINDS[(i + step + KINDS.length) % KINDS.length].key;
        selected = null;
        load().then(() => root?.querySelector(`#tab-${kind}`)?.focus());
      },
    }, k.label)));
  clear(body,
    h('div', { class: 'view-head' },
      h('h2', { id: 'title-explore' }, server ? `Explore ${server.name}` : 'Explore'),
      tabs),
    content);
}

async function load() {
  const k = KINDS.find((x) => x.key === kind);
  const loaded = await loader.load((server) => `/api/servers/${enc(server.id)}/${k.path}?all=true`);
  if (!loaded) return;
  items = (loaded.answer && loaded.answer[k.list]) || [];
  render();
}

function itemName(item) {
  return item.name || item.uri || item.uriTemplate;
}

function render() {
  const filter = search.toLowerCase();
  const shown = items.filter((item) =>
    !filter || `${itemName(item)} ${item.title || ''} ${item.description || ''} ${item.uri || ''}`.toLowerCase().includes(filter));
  const searchBox = h('input', { type: 'search', value: search, placeholder: 'Filter by name or description', id: 'explore-search' });
  searchBox.addEventListener('input', () => {
    search = searchBox.value;
    const position = searchBox.selectionStart;
    render();
    const again = root.querySelector('#explore-search');
    again.focus();
    again.setSelectionRange(position, position);
  });
  const list = h('ul', { class: 'item-list', 'aria-label': KINDS.find((x) => x.key === kind).label },
    shown.map((item) => h('li', {},
      h('button', {
        type: 'button', class: 'item', 'aria-pressed': String(selected === item),
        onclick: () => { selected = item; render(); root.querySelector('.detail h3')?.focus(); },
      },
      h('span', { class: 'item-name' }, item.title || itemName(item)),
      item.description ? h('span', { class: 'item-desc' }, item.description) : null))));
  shell(h('div', { class: 'split' },
    h('div', { class: 'list-pane' }, field('Search', searchBox),
      shown.length ? list : h('p', { class: 'empty' }, items.length ? 'Nothing matches.' : `This server lists no ${kind}.`)),
    h('div', { class: 'detail', 'aria-live': 'polite' }, selected ? detail(selected) : h('p', { class: 'muted' }, 'Choose one on the left.'))));
}

function detail(item) {
  if (kind === 'tools') return toolDetail(item);
  if (kind === 'resources') return resourceDetail(item);
  if (kind === 'templates') return templateDetail(item);
  return promptDetail(item);
}

function heading(item) {
  return [h('h3', { tabindex: '-1' }, item.title || itemName(item)),
    item.description ? h('p', { class: 'desc' }, item.description) : null];
}

// --- tools -----------------------------------------------------------------

function toolDetail(tool) {
  const server = currentServer();
  const form = schemaForm(tool.inputSchema || { type: 'object' });
  const out = h('div', { class: 'result' });
  const progress = h('progress', { hidden: true, 'aria-label': 'Progress' });
  const progressText = h('span', { class: 'muted', role: 'status' });
  const cancel = h('button', { type: 'button', hidden: true, class: 'danger' }, 'Cancel');
  const run = h('button', { type: 'submit', class: 'primary' }, 'Run tool');
  // A tool with an App (MCP Apps): opened in the dock, see apps.js.
  const openAppButton = appResourceUri(tool) ? h('button', {
    type: 'button', id: 'open-app',
    onclick: () => {
      const { ok, value, errors } = form.value();
      if (!ok) clear(out, errorBox({ code: 'INVALID_ARGUMENTS', message: errors.join('; ') }));
      else openApp(dock, server, tool, value);
    },
  }, 'Open app') : null;
  const f = h('form', { class: 'tool-form', 'aria-label': `Arguments of ${tool.name}` }, form.element,
    h('div', { class: 'actions' }, run, openAppButton, cancel, progress, progressText));
  f.addEventListener('submit', async (e) => {
    e.preventDefault();
    const { ok, value, errors } = form.value();
    if (!ok) {
      clear(out, errorBox({ code: 'INVALID_ARGUMENTS', message: errors.join('; ') }));
      return;
    }
    callSeq += 1;
    const id = `ui-${Date.now().toString(36)}-${callSeq}`;
    const message = { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool.name, arguments: value, _meta: { progressToken: id } } };
    run.disabled = true;
    cancel.hidden = false;
    progress.hidden = false;
    progress.removeAttribute('value');
    progressText.textContent = 'running…';
    progressWaiters.set(id, (p) => {
      if (p.total) {
        progress.max = p.total;
        progress.value = p.progress;
      }
      progressText.textContent = p.message || `${p.progress}${p.total ? ` of ${p.total}` : ''}`;
    });
    let answered = false;
    cancel.onclick = async () => {
      cancel.disabled = true;
      progressText.textContent = 'cancelling…';
      try {
        const state = await cancelSentCall(server.id, id, 'cancelled from the web UI', () => !answered);
        if (!answered) {
          progressText.textContent = state === 'REQUEST_STATE_PENDING'
            ? 'cancelled before it was sent' : 'cancel sent to the server';
        }
      } catch (error) {
        toast(error.message, 'error');
      } finally {
        cancel.disabled = false;
      }
    };
    const started = performance.now();
    try {
      const answer = await api('POST', `/mcp?serverId=${enc(server.id)}`, JSON.stringify(message));
      const ms = Math.round(performance.now() - started);
      if (answer && answer.error) {
        clear(out, h('div', { class: 'error-box', role: 'alert' }, h('strong', {}, `JSON-RPC error ${answer.error.code}`), ' ', answer.error.message,
          answer.error.data !== undefined ? h('pre', {}, pretty(answer.error.data)) : null));
      } else {
        clear(out, renderToolResult(answer ? answer.result : null, tool, ms));
      }
    } catch (error) {
      clear(out, errorBox(error));
    } finally {
      answered = true;
      progressWaiters.delete(id);
      run.disabled = false;
      cancel.hidden = true;
      progress.hidden = true;
      progressText.textContent = '';
    }
  });
  return h('div', {}, heading(tool), f, out,
    h('details', {}, h('summary', {}, 'Tool definition'), h('pre', { class: 'json' }, pretty(tool.raw || tool))));
}

function renderContent(block) {
  switch (block.type) {
    case 'text':
      return h('pre', { class: 'text-content' }, block.text);
    case 'image':
      return h('img', { src: `data:${block.mimeType};base64,${block.data}`, alt: 'image result', class: 'media' });
    case 'audio':
      return h('audio', { controls: true, src: `data:${block.mimeType};base64,${block.data}`, 'aria-label': 'audio result' });
    case 'resource': {
      const r = block.resource || {};
      return h('div', { class: 'embedded' }, h('div', { class: 'muted' }, `Embedded resource ${r.uri || ''} ${r.mimeType || ''}`),
        r.text !== undefined ? h('pre', { class: 'text-content' }, r.text) : h('span', {}, `${(r.blob || '').length} base64 characters`));
    }
    case 'resource_link':
      return h('div', { class: 'embedded' }, 'Resource link: ',
        h('button', { type: 'button', class: 'link', onclick: () => { kind = 'resources'; selected = { uri: block.uri, name: block.name || block.uri }; render(); } }, block.uri),
        block.description ? h('span', { class: 'muted' }, ` — ${block.description}`) : null);
    default:
      return h('pre', { class: 'json' }, pretty(block));
  }
}

function renderToolResult(result, tool, ms) {
  if (!result) return h('p', { class: 'muted' }, 'No result.');
  const blocks = (result.content || []).map(renderContent);
  const structured = result.structuredContent !== undefined
    ? h('div', { class: 'side-by-side' },
      h('div', {}, h('h4', {}, 'Structured content'), h('pre', { class: 'json' }, pretty(result.structuredContent))),
      tool.outputSchema ? h('div', {}, h('h4', {}, 'Output schema'), h('pre', { class: 'json' }, pretty(tool.outputSchema))) : null)
    : null;
  return h('div', { class: result.isError ? 'tool-result is-error' : 'tool-result' },
    h('h4', {}, result.isError ? 'The tool reported an error' : 'Result', h('span', { class: 'muted' }, ` ${ms} ms`)),
    blocks, structured,
    h('details', {}, h('summary', {}, 'Raw result'), h('pre', { class: 'json' }, pretty(result))));
}

// --- resources -------------------------------------------------------------

async function readInto(out, uri) {
  const server = currentServer();
  clear(out, h('p', { class: 'muted' }, 'Reading…'));
  try {
    const answer = await api('GET', `/api/servers/${enc(server.id)}/resource?uri=${enc(uri)}`);
    const contents = (answer.result && answer.result.contents) || [];
    clear(out, contents.map((c) => c.text !== undefined
      ? h('div', {}, h('div', { class: 'muted' }, `${c.uri} ${c.mimeType || ''}`), h('pre', { class: 'text-content' }, c.text))
      : c.mimeType && c.mimeType.startsWith('image/')
        ? h('img', { src: `data:${c.mimeType};base64,${c.blob}`, alt: c.uri, class: 'media' })
        : h('div', {}, h('div', { class: 'muted' }, `${c.uri} ${c.mimeType || ''}`), `${(c.blob || '').length} base64 characters`)),
    h('details', {}, h('summary', {}, 'Raw result'), h('pre', { class: 'json' }, pretty(answer.result))));
  } catch (error) {
    clear(out, errorBox(error));
  }
}

function resourceDetail(resource) {
  const out = h('div', { class: 'result' });
  const server = currentServer();
  return h('div', {}, heading(resource), h('p', { class: 'mono' }, resource.uri),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', onclick: () => readInto(out, resource.uri) }, 'Read'),
      resource.mimeType === 'inode/directory' || resource.uri.endsWith('/')
        ? h('button', { type: 'button', onclick: () => browse(out, resource.uri) }, 'Browse directory') : null,
      h('button', {
        type: 'button',
        onclick: () => api('POST', `/api/servers/${enc(server.id)}/resource:subscribe`, { uri: resource.uri })
          .then(() => toast(`Subscribed to ${resource.uri}`), (e) => toast(e.message, 'error')),
      }, 'Subscribe')),
    out);
}

// Completion: a datalist filled from completion/complete as the user types.
function completing(input, ref) {
  const list = h('datalist', { id: uid('dl') });
  input.setAttribute('list', list.id);
  let timer = null;
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const server = currentServer();
      try {
        const answer = await api('POST', `/api/servers/${enc(server.id)}/complete`, { ...ref(), argumentValue: input.value });
        const values = (answer.result && answer.result.completion && answer.result.completion.values) || [];
        clear(list, values.map((v) => h('option', { value: v })));
      } catch {
        clear(list);
      }
    }, 150);
  });
  return list;
}

function templateDetail(template) {
  const vars = [...new Set([...template.uriTemplate.matchAll(/\{[+#./;?&]?([^}]+)\}/g)].flatMap((m) => m[1].split(',').map((v) => v.replace(/\*$/, ''))))];
  const inputs = vars.map((name) => {
    const input = h('input', { type: 'text', autocomplete: 'off' });
    const list = completing(input, () => ({ resourceTemplate: template.uriTemplate, argumentName: name }));
    return { name, input, element: h('div', {}, field(name, input), list) };
  });
  const out = h('div', { class: 'result' });
  const form = h('form', { 'aria-label': `Variables of ${template.name}` }, inputs.map((i) => i.element),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Read')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const uri = template.uriTemplate.replace(/\{[+#./;?&]?([^}]+)\}/g, (_, names) =>
      names.split(',').map((n) => encodeURIComponent(inputs.find((i) => i.name === n.replace(/\*$/, ''))?.input.value || '')).join(','));
    readInto(out, uri);
  });
  return h('div', {}, heading(template), h('p', { class: 'mono' }, template.uriTemplate), form, out);
}

// --- prompts ---------------------------------------------------------------

function promptDetail(prompt) {
  const inputs = (prompt.arguments || []).map((arg) => {
    const input = h('input', { type: 'text', autocomplete: 'off', 'aria-required': arg.required ? 'true' : null });
    const list = completing(input, () => ({ prompt: prompt.name, argumentName: arg.name }));
    return { arg, input, element: h('div', {}, field(`${arg.name}${arg.required ? ' *' : ''}`, input, arg.description), list) };
  });
  const out = h('div', { class: 'result' });
  const form = h('form', { 'aria-label': `Arguments of ${prompt.name}` },
    inputs.length ? inputs.map((i) => i.element) : h('p', { class: 'muted' }, 'No arguments.'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Get prompt')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const missing = inputs.filter((i) => i.arg.required && !i.input.value).map((i) => i.arg.name);
    if (missing.length) {
      clear(out, errorBox({ code: 'INVALID_ARGUMENTS', message: `required: ${missing.join(', ')}` }));
      return;
    }
    const args = {};
    for (const i of inputs) if (i.input.value !== '') args[i.arg.name] = i.input.value;
    try {
      const answer = await api('POST', `/api/servers/${enc(currentServer().id)}/prompts/${enc(prompt.name)}:get`, { arguments: args });
      const messages = (answer.result && answer.result.messages) || [];
      clear(out, messages.map((m) => h('div', { class: `message role-${m.role}` }, h('div', { class: 'role' }, m.role), renderContent(m.content || {}))),
        h('details', {}, h('summary', {}, 'Raw result'), h('pre', { class: 'json' }, pretty(answer.result))));
    } catch (error) {
      clear(out, errorBox(error));
    }
  });
  return h('div', {}, heading(prompt), form, out);
}
