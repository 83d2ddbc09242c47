// Servers: the list with each one's connection state, protocol, capabilities,
// process id and last error; add, edit, delete, import, export, connect,
// disconnect.
import { api, enc } from './api.js';
import { store, on, loadServers, loadStatus, setCurrent } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, HELP_BASE, kebab } from './util.js';

// The reference MCP server, one click away for a first look.
const EVERYTHING = {
  name: 'everything', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'],
};

let off = [];
let root = null;
let listBox = null;

export function mount(container) {
  root = container;
  listBox = h('div', {});
  // The list is redrawn on every change; the panel below it (a form being
  // filled, an import's outcome) stays.
  clear(root,
    h('div', { class: 'view-head' },
      h('h2', { id: 'title-servers' }, 'Servers'),
      h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => openEditor(null) }, 'Add server'),
        h('button', { type: 'button', onclick: openImport }, 'Import'),
        h('button', { type: 'button', onclick: openExport }, 'Export'))),
    listBox,
    h('div', { id: 'server-panel' }));
  render();
  off = [on('servers', render), on('status', render)];
}

export function unmount() {
  off.forEach((f) => f());
  off = [];
}

function stateBadge(status) {
  const state = (status && status.state) || 'DISCONNECTED';
  return h('span', { class: `state state-${state.toLowerCase()}` }, state.toLowerCase());
}

function era(status) {
  if (!status || !status.protocolVersion) return '';
  return status.protocolVersion >= '2026-07-28' ? `${status.protocolVersion} (stateless)` : status.protocolVersion;
}

function capabilityList(status) {
  const caps = status && status.capabilities ? Object.keys(status.capabilities) : [];
  return caps.length ? caps.join(', ') : '—';
}

function target(server) {
  if (server.transport === 'stdio') return [server.command, ...(server.args || [])].join(' ');
  return server.url || '';
}

function render() {
  if (!root) return;
  const list = store.servers.length === 0
    ? h('div', { class: 'empty' },
      h('p', {}, 'No servers yet. Add one with "Add server", import a Claude Desktop, Cursor or VS Code file, or start with the reference server:'),
      actionButton('Add server-everything', async () => {
        const saved = await api('POST', '/config', EVERYTHING);
        toast(`Added ${saved.name}; Connect starts it (npx fetches it the first time)`);
        setCurrent(saved.id);
        await loadServers();
      }, { class: 'primary' }),
      h('span', { class: 'hint' }, ' runs ', h('code', {}, 'npx -y @modelcontextprotocol/server-everything')))
    : h('div', { class: 'table-wrap' }, h('table', { class: 'servers' },
      h('caption', { class: 'offscreen' }, 'Configured servers'),
      h('thead', {}, h('tr', {}, ['Name', 'Transport', 'Command or URL', 'State', 'Protocol', 'Capabilities', 'PID', 'Last error', 'Actions']
        .map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, store.servers.map(serverRow))));
  clear(listBox, list);
}

function serverRow(server) {
  const status = store.statuses.get(server.id);
  const connected = status && (status.state === 'CONNECTED' || status.state === 'CONNECTING');
  const error = status && status.errorCode
    ? h('span', { class: 'err' }, `${status.errorCode}: ${status.errorMessage || ''} `,
      h('a', { href: HELP_BASE + kebab(status.errorCode), target: '_blank', rel: 'noopener noreferrer' }, 'help'))
    : '—';
  return h('tr', { dataset: { server: server.name } },
    h('th', { scope: 'row' }, h('a', { href: '#/explore', onclick: () => setCurrent(server.id) }, server.name)),
    h('td', {}, server.transport),
    h('td', { class: 'mono clip', title: target(server) }, target(server)),
    h('td', {}, stateBadge(status)),
    h('td', {}, era(status)),
    h('td', {}, capabilityList(status)),
    h('td', {}, status && status.pid ? String(status.pid) : '—'),
    h('td', {}, error),
    h('td', { class: 'row-actions' },
      connected
        ? actionButton('Disconnect', () => sessionCall(server, 'disconnect'), { 'aria-label': `Disconnect ${server.name}` })
        : actionButton('Connect', () => sessionCall(server, 'connect'), { 'aria-label': `Connect ${server.name}` }),
      h('button', { type: 'button', onclick: () => openEditor(server), 'aria-label': `Edit ${server.name}` }, 'Edit'),
      h('button', { type: 'button', onclick: () => { location.hash = `#/doctor/${encodeURIComponent(server.id)}`; }, 'aria-label': `Run the doctor on ${server.name}` }, 'Doctor'),
      actionButton('Delete', async () => {
        if (!confirm(`Delete the server ${server.name}?`)) return;
        await api('DELETE', `/config/${enc(server.id)}`);
        toast(`Deleted ${server.name}`);
        await loadServers();
      }, { 'aria-label': `Delete ${server.name}`, class: 'danger' })));
}

async function sessionCall(server, what) {
  try {
    const status = await api('POST', `/api/servers/${enc(server.id)}/${what}`, {});
    store.statuses.set(server.id, status);
    render();
  } catch (error) {
    await loadStatus(server.id);
    showPanel(h('div', {}, h('h3', {}, `${what === 'connect' ? 'Connecting' : 'Disconnecting'} ${server.name} failed`), errorBox(error)));
  }
}

function showPanel(content) {
  const panel = root.querySelector('#server-panel');
  clear(panel, h('div', { class: 'panel' }, content));
  const first = panel.querySelector('input, select, textarea, button');
  if (first) first.focus();
}

function lines(text) {
  return text.split('\n').map((l) => l.trim()).filter(Boolean);
}

function pairs(text, separator) {
  const out = {};
  for (const line of lines(text)) {
    const at = line.indexOf(separator);
    if (at <= 0) throw new Error(`"${line}" has no ${separator.trim()}`);
    out[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  }
  return out;
}

function openEditor(server) {
  const editing = Boolean(server);
  const s = server || { transport: 'stdio', args: [], env: {}, headers: {} };
  const name = h('input', { type: 'text', value: s.name || '', required: true, autocomplete: 'off' });
  const transport = h('select', {},
    [['stdio', 'stdio (a command)'], ['streamableHttp', 'Streamable HTTP'], ['sse', 'SSE (legacy)']]
      .map(([v, l]) => h('option', { value: v, selected: s.transport === v }, l)));
  const command = h('input', { type: 'text', value: s.command || '', class: 'mono', placeholder: 'npx' });
  const args = h('textarea', { rows: 3, class: 'mono', placeholder: '-y\n@modelcontextprotocol/server-everything' }, (s.args || []).join('\n'));
  const env = h('textarea', { rows: 2, class: 'mono', placeholder: 'KEY=value' },
    Object.entries(s.env || {}).map(([k, v]) => `${k}=${v}`).join('\n'));
  const cwd = h('input', { type: 'text', value: s.cwd || '', class: 'mono' });
  const url = h('input', { type: 'url', value: s.url || '', class: 'mono', placeholder: 'http://localhost:8080/mcp' });
  const headers = h('textarea', { rows: 2, class: 'mono', placeholder: 'Authorization: Bearer …' },
    Object.entries(s.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\n'));
  const stdioFields = h('div', {}, field('Command', command), field('Arguments (one per line)', args),
    field('Environment (KEY=value per line)', env), field('Working directory', cwd));
  const httpFields = h('div', {}, field('URL', url), field('Headers (Name: value per line)', headers));
  const sync = () => {
    stdioFields.hidden = transport.value !== 'stdio';
    httpFields.hidden = transport.value === 'stdio';
  };
  // A server moved from stdio to HTTP (or back) keeps nothing of the other
  // transport: its command, arguments, environment and directory (or URL
  // and headers) are emptied here, and the save clears them in the config.
  transport.addEventListener('change', () => {
    const stdio = transport.value === 'stdio';
    for (const input of stdio ? [url, headers] : [command, args, env, cwd]) input.value = '';
    sync();
  });
  sync();
  const errors = h('div', {});
  const form = h('form', { class: 'editor', 'aria-label': editing ? `Edit ${s.name}` : 'Add a server' },
    h('h3', {}, editing ? `Edit ${s.name}` : 'Add a server'),
    field('Name', name), field('Transport', transport), stdioFields, httpFields, errors,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, editing ? 'Save' : 'Add'),
      h('button', { type: 'button', onclick: () => clear(root.querySelector('#server-panel')) }, 'Cancel')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(errors);
    let body;
    try {
      body = { name: name.value.trim(), transport: transport.value };
      if (transport.value === 'stdio') {
        Object.assign(body, { command: command.value.trim(), args: lines(args.value), env: pairs(env.value, '=') });
        if (cwd.value.trim()) body.cwd = cwd.value.trim();
      } else {
        Object.assign(body, { url: url.value.trim(), headers: pairs(headers.value, ':') });
      }
    } catch (error) {
      clear(errors, errorBox({ code: 'INVALID_CONFIG', message: error.message }));
      return;
    }
    try {
      let saved;
      if (editing) {
        // Replace exactly what the form shows.
        const mask = transport.value === 'stdio' ? 'name,transport,command,args,env,cwd,url,headers' : 'name,transport,url,headers,command,args,env,cwd';
        saved = await api('PUT', `/config/${enc(s.id)}?updateMask=${mask}`, body);
      } else {
        saved = await api('POST', '/config', body);
      }
      toast(`${editing ? 'Saved' : 'Added'} ${saved.name}`);
      clear(root.querySelector('#server-panel'));
      setCurrent(saved.id);
      await loadServers();
    } catch (error) {
      clear(errors, errorBox(error));
    }
  });
  showPanel(form);
}

function openImport() {
  const content = h('textarea', { rows: 10, class: 'mono', placeholder: '{"mcpServers": {"name": {"command": "npx", "args": ["…"]}}}' });
  const file = h('input', { type: 'file', accept: '.json,application/json' });
  file.addEventListener('change', async () => {
    if (file.files[0]) content.value = await file.files[0].text();
  });
  const format = h('select', {},
    [['auto', 'Detect'], ['mcp-servers', 'Claude Desktop / Cursor (mcpServers)'], ['vscode', 'VS Code (servers)'], ['inspector', 'Inspector mcp.json']]
      .map(([v, l]) => h('option', { value: v }, l)));
  const conflict = h('select', {},
    [['fail', 'Stop (import nothing)'], ['skip', 'Skip those servers'], ['replace', 'Replace them']]
      .map(([v, l]) => h('option', { value: v }, l)));
  const result = h('div', { role: 'status' });
  const form = h('form', { class: 'editor', 'aria-label': 'Import servers' },
    h('h3', {}, 'Import servers'),
    h('p', { class: 'hint' }, 'Paste or upload a Claude Desktop, Cursor, VS Code or mcp.json file. All or nothing: one bad entry imports none.'),
    field('Upload a file', file), field('File content', content), field('Format', format),
    field('When a name already exists', conflict), result,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'primary' }, 'Import'),
      h('button', { type: 'button', onclick: () => clear(root.querySelector('#server-panel')) }, 'Cancel')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(result);
    try {
      const body = { content: content.value, onConflict: conflict.value.toUpperCase() === 'FAIL' ? 'CONFLICT_POLICY_FAIL' : `CONFLICT_POLICY_${conflict.value.toUpperCase()}` };
      if (format.value !== 'auto') body.format = format.value;
      const answer = await api('POST', '/config/import', body);
      const created = (answer.created || []).map((s) => s.name);
      const replaced = (answer.replaced || []).map((s) => s.name);
      const skipped = answer.skipped || [];
      clear(result, h('p', { class: 'ok' },
        `Imported: ${created.length} created${created.length ? ` (${created.join(', ')})` : ''}, ` +
        `${replaced.length} replaced, ${skipped.length} skipped.`));
      await loadServers();
    } catch (error) {
      clear(result, errorBox(error));
    }
  });
  showPanel(form);
}

function openExport() {
  const format = h('select', {},
    [['inspector', 'Inspector mcp.json'], ['claude', 'Claude Desktop'], ['cursor', 'Cursor'], ['vscode', 'VS Code']]
      .map(([v, l]) => h('option', { value: v }, l)));
  const out = h('textarea', { rows: 12, class: 'mono', readonly: true, 'aria-label': 'Exported file' });
  const download = h('a', { class: 'button', download: 'mcp.json', href: '#', hidden: true }, 'Download');
  const run = async () => {
    const answer = await api('GET', `/config/export?format=${enc(format.value)}`);
    out.value = answer.content;
    download.href = URL.createObjectURL(new Blob([answer.content], { type: 'application/json' }));
    download.download = format.value === 'vscode' ? 'mcp.json' : format.value === 'claude' ? 'claude_desktop_config.json' : 'mcp.json';
    download.hidden = false;
  };
  format.addEventListener('change', () => run().catch((e) => toast(e.message, 'error')));
  showPanel(h('div', { class: 'editor' }, h('h3', {}, 'Export servers'), field('Format', format), out,
    h('div', { class: 'actions' }, download,
      h('button', { type: 'button', onclick: () => clear(root.querySelector('#server-panel')) }, 'Close'))));
  run().catch((e) => toast(e.message, 'error'));
}
