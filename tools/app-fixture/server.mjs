#!/usr/bin/env node
// A tiny MCP App server (the io.modelcontextprotocol/ui extension) for the
// web UI's Apps tests, on stdio, built on the official TypeScript SDK
// (pinned in tools/npm):
//
//   node server.mjs --allowed ORIGIN --forbidden URL [--daemon ORIGIN]
//
// It offers one tool, `probe`, whose `_meta.ui.resourceUri` names
// ui://probe/app.html, and that resource: an App written without the Apps
// SDK (the handshake by hand) that, once initialized, tries what a hostile
// or careless App might and reports each outcome to its host as a
// notifications/message (logger "probe"):
//   - fetch(`--forbidden` URL): an origin its CSP does not list;
//   - fetch(ORIGIN of `--allowed`): listed in connectDomains, so allowed;
//   - document.cookie and the daemon's REST API (`--daemon`, which it also
//     lists in connectDomains: the host must leave it out);
// every securitypolicyviolation it sees; the host's tool-input,
// tool-result and tool-cancelled notifications; and then calls `probe`
// itself (tools/call from inside the App). `probe` answers after
// `delayMs` (an argument), or when cancelled. Two buttons make the App
// call `probe` slowly (60 s) and cancel that call itself.
//
// A second tool, `studio`, names ui://probe/studio.html: an App that asks
// for a dedicated origin (`_meta.ui.domain` "studio.example.test", in its
// resources/list entry only, not in what resources/read answers) and
// reports the origin it got (window.studioOrigin); the test drives it
// through window.studio: download() asks the host to save
// ../report.json (ui/download-file), sample() asks for a completion
// (sampling/createMessage), openLink(url) asks to open a link
// (ui/open-link), touchTools() calls `touch-tools`, after which
// the server lists one more tool, `touched`, and sends
// notifications/tools/list_changed. Each answer lands in
// window.studioResults.
// It exits 0 when stdin closes or on SIGTERM.
import process from 'node:process';

import { sdkRequire as findSdk } from '../npm/mcp-sdk.mjs';

const sdkRequire = findSdk('app-fixture', 'FIXTURE_NODE_MODULES');
const { Server } = sdkRequire('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = sdkRequire('@modelcontextprotocol/sdk/server/stdio.js');
const {
  CallToolRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema, ReadResourceRequestSchema,
} = sdkRequire('@modelcontextprotocol/sdk/types.js');

const option = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : '';
};
const allowed = option('allowed');
const forbidden = option('forbidden');
const daemon = option('daemon');

const APP_URI = 'ui://probe/app.html';
const APP_MIME = 'text/html;profile=mcp-app';
const uiMeta = {
  csp: { connectDomains: [allowed, daemon].filter(Boolean) },
  prefersBorder: true,
};

// The App: plain script, JSON-RPC over postMessage with window.parent.
const appHtml = `<!doctype html>
<html><head><meta charset="utf-8"><title>probe</title>
<style>body{font:15px system-ui;margin:12px;background:#fffbe6;color:#222}h1{font-size:18px;color:#8a5a00}</style>
</head><body><h1>Probe App</h1><p id="state">starting</p>
<button id="slow-call">Slow call</button> <button id="cancel-slow">Cancel slow call</button><ul id="out"></ul>
<script>
const config = ${JSON.stringify({ allowed, forbidden, daemon })};
let next = 1;
const waiting = new Map();
const send = (m) => window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
const request = (method, params) => new Promise((resolve) => {
  const id = next++;
  waiting.set(id, resolve);
  send({ id, method, params });
});
const report = (data) => {
  const li = document.createElement('li');
  li.textContent = JSON.stringify(data);
  document.getElementById('out').append(li);
  send({ method: 'notifications/message', params: { level: 'info', logger: 'probe', data } });
};
document.addEventListener('securitypolicyviolation', (e) => {
  report({ probe: 'violation', directive: e.effectiveDirective, blocked: e.blockedURI });
});
window.addEventListener('message', (event) => {
  if (event.source !== window.parent) return;
  const m = event.data;
  if (m && m.id !== undefined && !m.method && waiting.has(m.id)) {
    waiting.get(m.id)(m);
    waiting.delete(m.id);
  }
  // What the host says of the tool call the App belongs to.
  if (m && m.id === undefined && typeof m.method === 'string' && m.method.startsWith('ui/notifications/tool-')) {
    report({ probe: m.method.slice('ui/notifications/'.length), params: m.params });
  }
});
const attempt = async (name, url, init) => {
  try {
    const response = await fetch(url, init);
    report({ probe: name, reached: true, status: response.status });
  } catch (error) {
    report({ probe: name, reached: false, error: String(error && error.message || error) });
  }
};
// Driven by the test, in the frame, by its two buttons: a slow call of
// \`probe\` from the App, and the App's own notifications/cancelled for it.
let slowId = null;
document.getElementById('slow-call').onclick = () => {
  slowId = next;
  request('tools/call', { name: 'probe', arguments: { from: 'app', delayMs: 60000 } })
    .then((answer) => report({ probe: 'slow-call', id: slowId, error: answer.error || null, result: answer.result || null }));
};
document.getElementById('cancel-slow').onclick = () => {
  send({ method: 'notifications/cancelled', params: { requestId: slowId, reason: 'the App changed its mind' } });
};
(async () => {
  const init = await request('ui/initialize', {
    protocolVersion: '2026-01-26', appInfo: { name: 'probe-app', version: '1.0.0' }, appCapabilities: {},
  });
  send({ method: 'ui/notifications/initialized', params: {} });
  document.getElementById('state').textContent = 'initialized: ' + (init.result ? init.result.hostInfo.name : 'error');
  report({ probe: 'initialize', ok: !!init.result, theme: init.result && init.result.hostContext.theme });
  let cookie;
  try { cookie = { readable: true, value: document.cookie }; } catch (error) { cookie = { readable: false, error: error.name }; }
  report(Object.assign({ probe: 'cookie' }, cookie));
  await attempt('forbidden', config.forbidden);
  await attempt('allowed', config.allowed + '/allowed');
  await attempt('rest-api', config.daemon + '/api/servers', { credentials: 'include' });
  const call = await request('tools/call', { name: 'probe', arguments: { from: 'app' } });
  report({ probe: 'tools/call', ok: !!call.result, text: call.result && call.result.content[0].text });
  report({ probe: 'done' });
})();
</script></body></html>`;

const STUDIO_URI = 'ui://probe/studio.html';
const studioMeta = { domain: 'studio.example.test', prefersBorder: true };
const studioHtml = `<!doctype html>
<html><head><meta charset="utf-8"><title>studio</title>
<style>body{font:15px system-ui;margin:12px;background:#eef6ff;color:#123}</style>
</head><body><h1>Studio App</h1><p id="state">starting</p>
<script>
let next = 1;
const waiting = new Map();
window.studioResults = {};
window.studioOrigin = location.origin;
const send = (m) => window.parent.postMessage(Object.assign({ jsonrpc: '2.0' }, m), '*');
const request = (method, params) => new Promise((resolve) => {
  const id = next++;
  waiting.set(id, resolve);
  send({ id, method, params });
});
window.addEventListener('message', (event) => {
  if (event.source !== window.parent) return;
  const m = event.data;
  if (m && m.id !== undefined && !m.method && waiting.has(m.id)) {
    waiting.get(m.id)(m);
    waiting.delete(m.id);
  }
});
const keep = (name) => (answer) => { window.studioResults[name] = answer; return answer; };
window.studio = {
  download: () => request('ui/download-file', { contents: [{ type: 'resource',
    resource: { uri: 'file:///exports/../report.json', mimeType: 'application/json', text: '{"report":"from the studio"}' } }] })
    .then(keep('download')),
  sample: () => request('sampling/createMessage', {
    messages: [{ role: 'user', content: { type: 'text', text: 'Say hello to the studio' } }], maxTokens: 20 })
    .then(keep('sample')),
  touchTools: () => request('tools/call', { name: 'touch-tools', arguments: {} }).then(keep('touchTools')),
  openLink: (url) => request('ui/open-link', { url }).then(keep('openLink')),
};
(async () => {
  const init = await request('ui/initialize', {
    protocolVersion: '2026-01-26', appInfo: { name: 'studio-app', version: '1.0.0' }, appCapabilities: {},
  });
  window.studioResults.init = init;
  send({ method: 'ui/notifications/initialized', params: {} });
  let stored = false;
  try { localStorage.setItem('studio', 'kept'); stored = localStorage.getItem('studio') === 'kept'; } catch { stored = false; }
  window.studioResults.storage = stored;
  document.getElementById('state').textContent = 'initialized in ' + location.origin;
})();
</script></body></html>`;

let touched = false;
const server = new Server({ name: 'app-fixture', version: '1.0.0' },
  { capabilities: { tools: { listChanged: true }, resources: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{
    name: 'probe',
    description: 'Answers where it was called from; its App probes the sandbox.',
    inputSchema: { type: 'object', properties: { from: { type: 'string' }, delayMs: { type: 'number' } } },
    _meta: { ui: { resourceUri: APP_URI } },
  }, {
    name: 'studio',
    description: 'An App with a dedicated origin that downloads and samples.',
    inputSchema: { type: 'object', properties: {} },
    _meta: { ui: { resourceUri: STUDIO_URI } },
  }, {
    name: 'touch-tools',
    description: 'Adds the tool touched and says the tools changed.',
    inputSchema: { type: 'object', properties: {} },
  }, ...(touched ? [{ name: 'touched', description: 'Listed once touch-tools ran.', inputSchema: { type: 'object' } }] : [])],
}));
server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  if (request.params.name === 'studio') return { content: [{ type: 'text', text: 'studio opened' }] };
  if (request.params.name === 'touched') return { content: [{ type: 'text', text: 'touched' }] };
  if (request.params.name === 'touch-tools') {
    touched = true;
    await server.sendToolListChanged();
    return { content: [{ type: 'text', text: 'the tools changed' }] };
  }
  const delayMs = Number(request.params.arguments?.delayMs || 0);
  if (delayMs > 0) {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      extra.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); });
    });
  }
  return { content: [{ type: 'text', text: `probe called from ${request.params.arguments?.from || 'the host'}` }] };
});
server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: [{ uri: APP_URI, name: 'probe app', mimeType: APP_MIME, _meta: { ui: uiMeta } },
    { uri: STUDIO_URI, name: 'studio app', mimeType: APP_MIME, _meta: { ui: studioMeta } }],
}));
server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  if (request.params.uri === STUDIO_URI) {
    // Its _meta.ui only in resources/list: the host must look there.
    return { contents: [{ uri: STUDIO_URI, mimeType: APP_MIME, text: studioHtml }] };
  }
  if (request.params.uri !== APP_URI) throw new Error(`no resource ${request.params.uri}`);
  return { contents: [{ uri: APP_URI, mimeType: APP_MIME, text: appHtml, _meta: { ui: uiMeta } }] };
});

const transport = new StdioServerTransport();
await server.connect(transport);
process.stdin.on('end', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
