#!/usr/bin/env node
// inspectord's fixture MCP server: a small, deterministic peer for end-to-end
// tests, built on the official TypeScript SDK (pinned in tools/npm).
//
//   node server.mjs stdio            [--garbage] [--crash-after N] [--never-answer]
//   node server.mjs streamableHttp   [--json-response] [--crash-after N] [--never-answer]
//   node server.mjs sse              [--crash-after N] [--never-answer]
//
// The HTTP modes bind 127.0.0.1 only, on $PORT (a free port when PORT is unset
// or 0), and print one line `{"listening": <port>}` on stderr once they accept
// connections (with FIXTURE_HEADER_LOG=FILE, they note in FILE whether each
// request carried an Authorization header). Every mode exits 0 on SIGTERM/SIGINT and when stdin (a pipe)
// is closed. See README.md beside this file for what each tool does.
//
// It uses the SDK's low-level `Server` rather than `McpServer` on purpose:
// McpServer turns every exception into an `isError` tool result and cannot
// paginate, and this peer must be able to produce both on demand.

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import process from 'node:process';

import { sdkRequire as findSdk } from '../npm/mcp-sdk.mjs';

// The SDK lives in tools/npm/node_modules (or $FIXTURE_NODE_MODULES), not
// beside this file.
const sdkRequire = findSdk('fixture-server', 'FIXTURE_NODE_MODULES');
const { Server } = sdkRequire('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = sdkRequire('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = sdkRequire('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { SSEServerTransport } = sdkRequire('@modelcontextprotocol/sdk/server/sse.js');
const { AjvJsonSchemaValidator } = sdkRequire('@modelcontextprotocol/sdk/validation/ajv');
const {
  CallToolRequestSchema, CompleteRequestSchema, CreateMessageResultSchema, ElicitResultSchema,
  ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListRootsResultSchema, ListToolsRequestSchema,
  ReadResourceRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema, isJSONRPCRequest,
} = sdkRequire('@modelcontextprotocol/sdk/types.js');

// ---------------------------------------------------------------------------
// Command line

const USAGE = 'usage: server.mjs stdio|streamableHttp|sse [--garbage] [--crash-after N] ' +
  '[--never-answer] [--json-response]';

function parseArgs(argv) {
  const options = { mode: argv[0], garbage: false, crashAfter: undefined, neverAnswer: false,
                    jsonResponse: false };
  if (!['stdio', 'streamableHttp', 'sse'].includes(options.mode)) usageError(`unknown mode ${argv[0]}`);
  for (let i = 1; i < argv.length; i++) {
    switch (argv[i]) {
      case '--garbage': options.garbage = true; break;
      case '--never-answer': options.neverAnswer = true; break;
      case '--json-response': options.jsonResponse = true; break;
      case '--crash-after':
        options.crashAfter = Number(argv[++i]);
        if (!Number.isInteger(options.crashAfter) || options.crashAfter < 0) {
          usageError('--crash-after needs a non-negative integer');
        }
        break;
      default: usageError(`unknown argument ${argv[i]}`);
    }
  }
  if (options.garbage && options.mode !== 'stdio') usageError('--garbage is for stdio mode only');
  if (options.jsonResponse && options.mode !== 'streamableHttp') {
    usageError('--json-response is for streamableHttp mode only');
  }
  return options;
}

function usageError(message) {
  process.stderr.write(`fixture-server: ${message}\n${USAGE}\n`);
  process.exit(2);
}

const options = parseArgs(process.argv.slice(2));

// Page size for tools/list, resources/list, resources/templates/list and
// prompts/list; 0 returns everything in one page.
const pageSize = Number.parseInt(process.env.FIXTURE_PAGE_SIZE ?? '0', 10) || 0;

// The name of the field `add` returns its sum in ("sum"; FIXTURE_ADD_FIELD
// renames it, in the result and the output schema alike): a server whose
// answers changed, for checks of a recording against a live server.
function addResultField() {
  return process.env.FIXTURE_ADD_FIELD || 'sum';
}
const ADD_FIELD = addResultField();

// How long sample/elicit/roots wait for the client (a person may be answering).
const CLIENT_REQUEST_TIMEOUT_MS = 10 * 60 * 1000;

// ---------------------------------------------------------------------------
// Helpers

// A JSON-RPC error with exactly this code and message (McpError would prefix
// the message with "MCP error <code>:").
function rpcError(code, message, data) {
  return Object.assign(new Error(message), { code, data });
}

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const toolError = (value) => ({ content: [{ type: 'text', text: value }], isError: true });
const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
});

// Returns one page of `items` for a list request's cursor. Cursors are the
// decimal offset of the page's first item.
function paginate(items, cursor, key) {
  let start = 0;
  if (cursor !== undefined) {
    start = /^\d+$/.test(cursor) ? Number(cursor) : -1;
    if (start < 0 || start > items.length) throw rpcError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  }
  if (pageSize <= 0) return { [key]: items.slice(start) };
  const end = start + pageSize;
  return { [key]: items.slice(start, end), ...(end < items.length && { nextCursor: String(end) }) };
}

const validator = new AjvJsonSchemaValidator();

// Process-wide state, shared by every session.
const sessions = new Set(); // live Session objects
const COUNTER_URI = 'fixture://counter';
let counter = 0;            // its value

// ---------------------------------------------------------------------------
// Tools. Each entry is the tool definition sent in tools/list plus `run`,
// called with (arguments, session, extra) where `extra` is the SDK's
// per-request context (progress token, cancellation signal, ...). Messages a
// tool sends to the client go through session.notify/session.request.

const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

const TOOLS = [
  {
    name: 'echo',
    // FIXTURE_ECHO_DESCRIPTION: another description (a server whose tool
    // changed under its users).
    description: process.env.FIXTURE_ECHO_DESCRIPTION || 'Returns the message it was given.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    // FIXTURE_ECHO_META: the request's params._meta as it arrived comes
    // back as structuredContent.receivedMeta (trace context propagation).
    // FIXTURE_ECHO_SAMPLES=1: echo first asks the client to sample
    // (sampling/createMessage) and ignores the answer (a server that asks
    // something new, for `inspectorctl sessions verify`).
    run: async ({ message }, session, extra) => {
      if (process.env.FIXTURE_ECHO_SAMPLES === '1') {
        await session.request(extra, {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: message } }], maxTokens: 10 },
        }, CreateMessageResultSchema, { timeout: CLIENT_REQUEST_TIMEOUT_MS });
      }
      return process.env.FIXTURE_ECHO_META
        ? { ...text(message), structuredContent: { receivedMeta: extra._meta ?? null } }
        : text(message);
    },
  },
  {
    name: 'add',
    description: 'Adds two numbers; the sum is also returned as structured content.',
    inputSchema: {
      type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'],
    },
    outputSchema: { type: 'object', properties: { [ADD_FIELD]: { type: 'number' } }, required: [ADD_FIELD] },
    run: ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { [ADD_FIELD]: a + b } }),
  },
  {
    name: 'slow',
    description: 'Waits delayMs per step, sending notifications/progress after each step when the ' +
      'request carries a progressToken.',
    inputSchema: {
      type: 'object',
      properties: {
        steps: { type: 'integer', minimum: 0, maximum: 10000, default: 5 },
        delayMs: { type: 'integer', minimum: 0, maximum: 600000, default: 100 },
      },
    },
    run: async ({ steps = 5, delayMs = 100 }, session, extra) => {
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step++) {
        await sleep(delayMs, extra.signal);
        if (extra.signal.aborted) return text(`cancelled after ${step - 1} steps`);
        if (progressToken !== undefined) {
          await session.notify(extra, {
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps, message: `step ${step} of ${steps}` },
          });
        }
      }
      return text(`done after ${steps} steps`);
    },
  },
  {
    name: 'fail',
    description: 'Always returns a tool result with isError: true.',
    inputSchema: { type: 'object', properties: {} },
    run: () => toolError('failure requested'),
  },
  {
    name: 'throw',
    description: 'Always throws, so the call gets a JSON-RPC error (-32603).',
    inputSchema: { type: 'object', properties: {} },
    run: () => { throw rpcError(ErrorCode.InternalError, 'throw requested'); },
  },
  {
    name: 'large',
    description: "Returns one text content of `bytes` 'x' characters.",
    inputSchema: {
      type: 'object', properties: { bytes: { type: 'integer', minimum: 0, maximum: 256 * 1024 * 1024 } },
      required: ['bytes'],
    },
    run: ({ bytes }) => text('x'.repeat(bytes)),
  },
  {
    name: 'sample',
    description: 'Asks the client to sample (sampling/createMessage) with the prompt; returns its text.',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string' }, maxTokens: { type: 'integer', minimum: 1, default: 100 } },
      required: ['prompt'],
    },
    run: async ({ prompt, maxTokens = 100 }, session, extra) => {
      if (!session.server.getClientCapabilities()?.sampling) {
        return toolError('the client did not declare the sampling capability');
      }
      const result = await session.request(extra, {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
      }, CreateMessageResultSchema, { timeout: CLIENT_REQUEST_TIMEOUT_MS });
      const content = Array.isArray(result.content) ? result.content[0] : result.content;
      return text(content?.type === 'text' ? content.text : JSON.stringify(result.content));
    },
  },
  {
    name: 'elicit',
    description: 'Asks the client for a form (elicitation/create); returns {action, content} as JSON text.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
    run: async ({ message = 'Please tell us about yourself.' }, session, extra) => {
      if (!session.server.getClientCapabilities()?.elicitation) {
        return toolError('the client did not declare the elicitation capability');
      }
      const result = await session.request(extra, {
        method: 'elicitation/create',
        params: {
          message,
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', title: 'Name' },
              age: { type: 'integer', title: 'Age', default: 30 },
              color: { type: 'string', title: 'Favourite colour', enum: ['red', 'green', 'blue'] },
            },
            required: ['name'],
          },
        },
      }, ElicitResultSchema, { timeout: CLIENT_REQUEST_TIMEOUT_MS });
      return text(JSON.stringify({ action: result.action, content: result.content ?? null }));
    },
  },
  {
    name: 'elicit_url',
    description: 'Asks the client to send the user to URL (URL-mode elicitation/create); returns {action} as JSON text, or the client\'s JSON-RPC error as a tool error.',
    inputSchema: { type: 'object', properties: { url: { type: 'string' }, message: { type: 'string' } }, required: ['url'] },
    run: async ({ url, message = 'Please continue in your browser.' }, session, extra) => {
      if (!session.server.getClientCapabilities()?.elicitation?.url) {
        return toolError('the client did not declare URL-mode elicitation');
      }
      try {
        const result = await session.request(extra, {
          method: 'elicitation/create',
          params: { mode: 'url', message, url, elicitationId: randomUUID() },
        }, ElicitResultSchema, { timeout: CLIENT_REQUEST_TIMEOUT_MS });
        return text(JSON.stringify({ action: result.action }));
      } catch (error) {
        return toolError(`client error ${error?.code}: ${error?.message}`);
      }
    },
  },
  {
    name: 'roots',
    description: "Asks the client for its roots (roots/list); returns them as JSON text.",
    inputSchema: { type: 'object', properties: {} },
    run: async (args, session, extra) => {
      if (!session.server.getClientCapabilities()?.roots) {
        return toolError('the client did not declare the roots capability');
      }
      const result = await session.request(extra, { method: 'roots/list' }, ListRootsResultSchema,
                                             { timeout: CLIENT_REQUEST_TIMEOUT_MS });
      return text(JSON.stringify(result.roots));
    },
  },
  {
    name: 'notify_tools_changed',
    description: 'Adds the tool `dynamic` to this session and sends notifications/tools/list_changed.',
    inputSchema: { type: 'object', properties: {} },
    run: async (args, session, extra) => {
      session.dynamicTool = true;
      await session.notify(extra, { method: 'notifications/tools/list_changed' });
      return text('tool dynamic added');
    },
  },
  {
    name: 'log',
    description: 'Sends notifications/message at the given level (unless logging/setLevel filters it).',
    inputSchema: {
      type: 'object',
      properties: { level: { type: 'string', enum: LOG_LEVELS }, message: { type: 'string' } },
      required: ['level', 'message'],
    },
    run: async ({ level, message }, session, extra) => {
      if (session.server.isMessageIgnored(level, extra.sessionId)) return text(`filtered: ${level}`);
      await session.notify(extra, {
        method: 'notifications/message', params: { level, logger: 'fixture', data: message },
      });
      return text(`logged: ${level}`);
    },
  },
  {
    name: 'bump',
    description: 'Increments fixture://counter and notifies its subscribers; returns the new value.',
    inputSchema: { type: 'object', properties: {} },
    run: async (args, session, extra) => {
      counter += 1;
      const updated = { method: 'notifications/resources/updated', params: { uri: COUNTER_URI } };
      for (const other of sessions) {
        if (!other.subscriptions.has(COUNTER_URI)) continue;
        // The caller gets it with its request; other sessions on their
        // standalone streams.
        if (other === session) await session.notify(extra, updated);
        else await other.server.notification(updated).catch(() => {});
      }
      return text(String(counter));
    },
  },
];

// Added per session by notify_tools_changed.
const DYNAMIC_TOOL = {
  name: 'dynamic',
  description: 'Exists only after notify_tools_changed was called in this session.',
  inputSchema: { type: 'object', properties: {} },
  run: () => text('dynamic tool called'),
};

for (const tool of [...TOOLS, DYNAMIC_TOOL]) tool.validate = validator.getValidator(tool.inputSchema);

// ---------------------------------------------------------------------------
// Resources

const ITEM_IDS = Array.from({ length: 20 }, (_, i) => `item-${i + 1}`);
const BINARY = Buffer.from(Array.from({ length: 256 }, (_, i) => i)); // bytes 0x00..0xff

const RESOURCES = [
  { uri: 'fixture://static/hello', name: 'hello', mimeType: 'text/plain', description: 'The text "hello".' },
  { uri: 'fixture://static/binary', name: 'binary', mimeType: 'application/octet-stream',
    description: 'The 256 bytes 0x00..0xff.' },
  { uri: COUNTER_URI, name: 'counter', mimeType: 'text/plain',
    description: 'A number that tool bump increments; subscribe to be told.' },
];

const RESOURCE_TEMPLATES = [
  { uriTemplate: 'fixture://items/{id}', name: 'item', mimeType: 'text/plain',
    description: 'Items item-1 .. item-20 (id completes).' },
];

function readResource(uri) {
  switch (uri) {
    case 'fixture://static/hello': return { uri, mimeType: 'text/plain', text: 'hello' };
    case 'fixture://static/binary':
      return { uri, mimeType: 'application/octet-stream', blob: BINARY.toString('base64') };
    case COUNTER_URI: return { uri, mimeType: 'text/plain', text: String(counter) };
  }
  const item = /^fixture:\/\/items\/(.+)$/.exec(uri);
  if (item && ITEM_IDS.includes(item[1])) return { uri, mimeType: 'text/plain', text: `this is ${item[1]}` };
  throw rpcError(-32002, `Resource not found: ${uri}`, { uri });
}

// ---------------------------------------------------------------------------
// Prompts

const GREETING_NAMES = ['Alice', 'Bob', 'Carol'];

const PROMPTS = [
  {
    name: 'greeting',
    description: 'Asks for a greeting for `name`, optionally in a `style`.',
    arguments: [
      { name: 'name', description: 'who to greet (completes)', required: true },
      { name: 'style', description: 'for example formal or pirate', required: false },
    ],
  },
  { name: 'plain', description: 'A prompt without arguments.' },
];

function getPrompt(name, args = {}) {
  switch (name) {
    case 'greeting': {
      if (typeof args.name !== 'string' || args.name === '') {
        throw rpcError(ErrorCode.InvalidParams, 'Missing required argument: name');
      }
      const style = args.style ? ` in a ${args.style} style` : '';
      return {
        description: `A greeting for ${args.name}`,
        messages: [{ role: 'user', content: { type: 'text', text: `Please greet ${args.name}${style}.` } }],
      };
    }
    case 'plain':
      return { messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }] };
  }
  throw rpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
}

function complete({ ref, argument }) {
  let candidates = [];
  if (ref.type === 'ref/prompt' && ref.name === 'greeting' && argument.name === 'name') {
    candidates = GREETING_NAMES;
  } else if (ref.type === 'ref/resource' && ref.uri === 'fixture://items/{id}' && argument.name === 'id') {
    candidates = ITEM_IDS;
  }
  const prefix = (argument.value ?? '').toLowerCase();
  const values = candidates.filter((value) => value.toLowerCase().startsWith(prefix));
  return { completion: { values, total: values.length, hasMore: false } };
}

// ---------------------------------------------------------------------------
// Skills (the io.modelcontextprotocol/skills extension, SEP-2640) and
// directory resources, only with FIXTURE_SKILLS=1 (so that every other test
// sees the server it always saw): the skills git-workflow (its manifest
// matches its files) and tampered (its script's digest and text disagree),
// the tool add_skill, and the directories of DIRECTORIES.

const skillsEnabled = process.env.FIXTURE_SKILLS === '1';
const { createHash } = process.getBuiltinModule('node:crypto');
const { z } = sdkRequire('zod');

const skillDigest = (text) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

// The files the skills serve, by URI: what resources/read returns.
const SKILL_FILES = new Map([
  ['skill://fixture/git-workflow/SKILL.md',
   '---\nname: git-workflow\ndescription: Commit, branch and review with git.\n---\n\n' +
   'Use `git switch -c` for a branch; see references/commands.md.\n'],
  ['skill://fixture/git-workflow/references/commands.md', '# Commands\n\ngit status\ngit log --oneline\n'],
  ['skill://fixture/tampered/SKILL.md',
   '---\nname: tampered\ndescription: A skill whose script changed after its manifest was made.\n---\n\n' +
   'Run scripts/run.sh.\n'],
  ['skill://fixture/tampered/scripts/run.sh', '#!/bin/sh\necho changed\n'],
  ['skill://fixture/release-notes/SKILL.md',
   '---\nname: release-notes\ndescription: Write release notes from the history.\n---\n\nRead the log.\n'],
]);

function skillManifestEntry(uri, text = SKILL_FILES.get(uri)) {
  return { uri, digest: skillDigest(text), size: Buffer.byteLength(text, 'utf8') };
}

const SKILLS = [
  {
    uri: 'skill://fixture/git-workflow/SKILL.md',
    frontmatter: { name: 'git-workflow', description: 'Commit, branch and review with git.' },
    resources: [skillManifestEntry('skill://fixture/git-workflow/SKILL.md'),
                skillManifestEntry('skill://fixture/git-workflow/references/commands.md')],
  },
  {
    // The manifest was made from the script's old text: its digest and size
    // no longer match what resources/read returns.
    uri: 'skill://fixture/tampered/SKILL.md',
    frontmatter: { name: 'tampered', description: 'A skill whose script changed after its manifest was made.' },
    resources: [skillManifestEntry('skill://fixture/tampered/SKILL.md'),
                skillManifestEntry('skill://fixture/tampered/scripts/run.sh', '#!/bin/sh\necho earlier\n')],
  },
];

// Added to every session's catalog by the tool add_skill.
const ADDED_SKILL = {
  uri: 'skill://fixture/release-notes/SKILL.md',
  frontmatter: { name: 'release-notes', description: 'Write release notes from the history.' },
  resources: 'dynamic',
};
let skillAdded = false;
const skillCatalog = () => (skillAdded ? [...SKILLS, ADDED_SKILL] : SKILLS);

// Directories for resources/directory/read (URIs without a trailing slash,
// as the SDK's catalogs name them), children in URI order; pages of
// DIRECTORY_PAGE_SIZE with the offset as the cursor.
const DIRECTORY_PAGE_SIZE = 3;
const DIRECTORY_MIME_TYPE = 'inode/directory';
const DIRECTORIES = new Map([
  ['skill://fixture/git-workflow', [
    { uri: 'skill://fixture/git-workflow/SKILL.md', name: 'SKILL.md', mimeType: 'text/markdown' },
    { uri: 'skill://fixture/git-workflow/references', name: 'references', mimeType: DIRECTORY_MIME_TYPE },
  ]],
  ['skill://fixture/git-workflow/references', [
    { uri: 'skill://fixture/git-workflow/references/commands.md', name: 'commands.md', mimeType: 'text/markdown' },
  ]],
  ['fixture://tree', Array.from({ length: 7 }, (_, i) => (
    { uri: `fixture://tree/file-${i + 1}.txt`, name: `file-${i + 1}.txt`, mimeType: 'text/plain' }))],
]);

const SKILL_TOOLS = [
  {
    name: 'add_skill',
    description: 'Adds the skill release-notes (resources "dynamic") and sends notifications/resources/list_changed.',
    inputSchema: { type: 'object', properties: {} },
    run: async (args, session, extra) => {
      skillAdded = true;
      await session.notify(extra, { method: 'notifications/resources/list_changed' });
      return text('skill release-notes added');
    },
  },
];
for (const tool of SKILL_TOOLS) tool.validate = validator.getValidator(tool.inputSchema);

const paramsOf = (fields) => z.object(fields).passthrough().optional();
const ListSkillsSchema = z.object({ method: z.literal('skills/list'),
                                    params: paramsOf({ cursor: z.string().optional() }) });
const GetSkillSchema = z.object({ method: z.literal('skills/get'), params: z.object({ uri: z.string() }).passthrough() });
const DirectoryReadSchema = z.object({ method: z.literal('resources/directory/read'),
                                       params: z.object({ uri: z.string(), cursor: z.string().optional() }).passthrough() });

// Serves the skills and directories on `server` (before it connects):
// declares the extension with directoryRead, answers skills/list (one page,
// with a ttlMs so that clients may cache it), skills/get,
// resources/directory/read, and resources/read of the skills' files (other
// URIs go to `readOther`).
function installSkills(server, readOther) {
  server.registerCapabilities({ extensions: { 'io.modelcontextprotocol/skills': { directoryRead: true } } });
  server.setRequestHandler(ListSkillsSchema, () => ({ skills: skillCatalog(), ttlMs: 60000, cacheScope: 'public' }));
  server.setRequestHandler(GetSkillSchema, (request) => {
    const skill = skillCatalog().find((candidate) => candidate.uri === request.params.uri);
    if (!skill) throw rpcError(ErrorCode.InvalidParams, `No skill is served at ${request.params.uri}`);
    return { skill };
  });
  server.setRequestHandler(DirectoryReadSchema, (request) => {
    const { uri, cursor } = request.params;
    const children = DIRECTORIES.get(uri);
    if (!children) throw rpcError(ErrorCode.InvalidParams, `${uri} is not a directory resource`);
    let start = 0;
    if (cursor !== undefined) {
      start = /^\d+$/.test(cursor) ? Number(cursor) : -1;
      if (start < 0 || start > children.length) throw rpcError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
    }
    const end = start + DIRECTORY_PAGE_SIZE;
    return { resources: children.slice(start, end), ...(end < children.length && { nextCursor: String(end) }) };
  });
  // The directory fixture://tree is listed among the resources too.
  server.setRequestHandler(ListResourcesRequestSchema, (request) => paginate(
    [...RESOURCES, { uri: 'fixture://tree', name: 'tree', mimeType: DIRECTORY_MIME_TYPE }],
    request.params?.cursor, 'resources'));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { uri } = request.params;
    if (SKILL_FILES.has(uri)) {
      return { contents: [{ uri, mimeType: uri.endsWith('.md') ? 'text/markdown' : 'text/plain', text: SKILL_FILES.get(uri) }] };
    }
    return readOther(uri);
  });
}

// ---------------------------------------------------------------------------
// One MCP session: an SDK Server with every handler, plus its own state.

class Session {
  constructor() {
    this.subscriptions = new Set(); // resource URIs this client subscribed to
    this.dynamicTool = false;       // set by notify_tools_changed
    this.server = new Server(
      { name: 'inspectord-fixture', version: '1.0.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
          prompts: { listChanged: false },
          logging: {},
          completions: {},
        },
        instructions: 'Fixture server for inspectord tests. See tools/fixture-server/README.md.',
      });
    const server = this.server;

    // FIXTURE_LIST_LOG=FILE: one line per list request received (its
    // method), for tests that count who listed.
    const logList = (method) => {
      if (process.env.FIXTURE_LIST_LOG) fs.appendFileSync(process.env.FIXTURE_LIST_LOG, `${method}\n`);
    };
    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      logList('tools/list');
      // FIXTURE_HOLD_TOOLS_LIST=FILE: while FILE exists, tools/list is not
      // answered (a test holds the answer back, then removes FILE).
      const hold = process.env.FIXTURE_HOLD_TOOLS_LIST;
      while (hold && fs.existsSync(hold)) await new Promise((resolve) => setTimeout(resolve, 20));
      const tools = this.tools().map(({ run, validate, ...definition }) => definition);
      return paginate(tools, request.params?.cursor, 'tools');
    });
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args = {} } = request.params;
      // FIXTURE_CALL_LOG=FILE: one line per tools/call received (the tool's
      // name), for tests that a call was or was not forwarded.
      if (process.env.FIXTURE_CALL_LOG) fs.appendFileSync(process.env.FIXTURE_CALL_LOG, `${name}\n`);
      const tool = this.tools().find((candidate) => candidate.name === name);
      if (!tool) throw rpcError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      const check = tool.validate(args);
      if (!check.valid) return toolError(`Invalid arguments for tool ${name}: ${check.errorMessage}`);
      return tool.run(args, this, extra);
    });

    server.setRequestHandler(ListResourcesRequestSchema, (request) => {
      logList('resources/list');
      return paginate(RESOURCES, request.params?.cursor, 'resources');
    });
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (request) => {
      logList('resources/templates/list');
      return paginate(RESOURCE_TEMPLATES, request.params?.cursor, 'resourceTemplates');
    });
    server.setRequestHandler(ReadResourceRequestSchema,
      (request) => ({ contents: [readResource(request.params.uri)] }));
    server.setRequestHandler(SubscribeRequestSchema, (request) => {
      readResource(request.params.uri); // unknown URIs get -32002
      this.subscriptions.add(request.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      this.subscriptions.delete(request.params.uri);
      return {};
    });

    server.setRequestHandler(ListPromptsRequestSchema, (request) => {
      logList('prompts/list');
      return paginate(PROMPTS, request.params?.cursor, 'prompts');
    });
    server.setRequestHandler(GetPromptRequestSchema,
      (request) => getPrompt(request.params.name, request.params.arguments));
    server.setRequestHandler(CompleteRequestSchema, (request) => complete(request.params));
    // logging/setLevel is handled by the SDK because the capability is set.
    if (skillsEnabled) installSkills(server, (uri) => ({ contents: [readResource(uri)] }));
  }

  tools() {
    const tools = this.dynamicTool ? [...TOOLS, DYNAMIC_TOOL] : TOOLS;
    return skillsEnabled ? [...tools, ...SKILL_TOOLS] : tools;
  }

  // Sends a notification or request to the client while handling the request
  // that `extra` belongs to. They travel with that request (on its SSE reply
  // in streamableHttp), except with --json-response, where a reply is one
  // JSON body: then they take the session's standalone GET stream.
  notify(extra, notification) {
    return options.jsonResponse ? this.server.notification(notification) : extra.sendNotification(notification);
  }

  request(extra, request, resultSchema, requestOptions) {
    return options.jsonResponse ? this.server.request(request, resultSchema, requestOptions)
                                : extra.sendRequest(request, resultSchema, requestOptions);
  }

  // Connects to `transport`, applying --crash-after, --never-answer and
  // --garbage between the transport and the SDK.
  async connect(transport) {
    sessions.add(this);
    this.server.onclose = () => sessions.delete(this);
    this.server.onerror = (error) => process.stderr.write(`fixture-server: ${error?.message ?? error}\n`);
    await this.server.connect(transport);

    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (crash.pending) return; // about to exit: ignore everything
      if (isJSONRPCRequest(message)) {
        crash.requestsSeen += 1;
        if (options.crashAfter !== undefined && crash.requestsSeen > options.crashAfter) {
          crash.pending = true;
          crashWhenAnswered();
          return;
        }
        if (options.neverAnswer && message.method !== 'initialize') return;
        crash.unanswered += 1;
      }
      deliver(message, extra);
    };

    const send = transport.send.bind(transport);
    transport.send = async (message, sendOptions) => {
      const isResponse = 'result' in message || 'error' in message;
      if (isResponse && options.garbage) process.stdout.write('this line is not JSON\n');
      try {
        await send(message, sendOptions);
      } finally {
        if (isResponse) {
          crash.unanswered -= 1;
          if (crash.pending) crashWhenAnswered();
        }
      }
    };
  }
}

// --crash-after N: requests 1..N (from every session, initialize included)
// are answered; when request N+1 arrives it is dropped, and the process exits
// with code 3 as soon as the requests before it have been answered.
const crash = { requestsSeen: 0, unanswered: 0, pending: false };

function crashWhenAnswered() {
  if (crash.unanswered > 0) return;
  process.stderr.write(`fixture-server: exiting with code 3 on request ${crash.requestsSeen} ` +
                       `(--crash-after ${options.crashAfter})\n`);
  process.exit(3);
}

// ---------------------------------------------------------------------------
// Transports

async function runStdio() {
  await new Session().connect(new StdioServerTransport());
}

// Streamable HTTP on /mcp: one Session per Mcp-Session-Id, with an in-memory
// event store so clients can resume a stream with Last-Event-ID.
function streamableHttpHandler(allowedHosts) {
  const transports = new Map(); // Mcp-Session-Id -> transport
  return async (req, res, url) => {
    if (url.pathname !== '/mcp') return notFound(res);
    const sessionId = req.headers['mcp-session-id'];
    let transport = sessionId === undefined ? undefined : transports.get(sessionId);
    if (sessionId !== undefined && !transport) {
      return jsonRpcError(res, 404, -32001, 'Session not found');
    }
    if (!transport) {
      // No session yet: a new transport, which accepts only an initialize
      // request; it is kept once the SDK has assigned the session id.
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: options.jsonResponse,
        eventStore: new EventStore(),
        enableDnsRebindingProtection: true,
        allowedHosts,
        onsessioninitialized: (id) => transports.set(id, transport),
        onsessionclosed: (id) => transports.delete(id),
      });
      const created = transport;
      created.onclose = () => transports.delete(created.sessionId);
      await new Session().connect(created);
    }
    await transport.handleRequest(req, res);
    // A first request that was not a valid initialize left no session behind.
    if (transport.sessionId === undefined) await transport.close();
  };
}

// Legacy HTTP+SSE: GET /sse opens a session whose `endpoint` event names
// /messages?sessionId=...; POSTs there are answered on the GET stream.
function sseHandler(allowedHosts) {
  const transports = new Map(); // sessionId -> transport
  return async (req, res, url) => {
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res,
        { enableDnsRebindingProtection: true, allowedHosts });
      transports.set(transport.sessionId, transport);
      res.on('close', () => transports.delete(transport.sessionId));
      await new Session().connect(transport);
      return;
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = transports.get(url.searchParams.get('sessionId'));
      if (!transport) return jsonRpcError(res, 404, -32001, 'Session not found');
      await transport.handlePostMessage(req, res);
      return;
    }
    notFound(res);
  };
}

async function runHttp(makeHandler) {
  const httpServer = http.createServer();
  let handler;
  httpServer.on('request', (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    // FIXTURE_HEADER_LOG: one line per request saying whether it carried an
    // Authorization header (for tests that a proxy does not forward one).
    if (process.env.FIXTURE_HEADER_LOG) {
      fs.appendFileSync(process.env.FIXTURE_HEADER_LOG,
        `${req.method} ${url.pathname} authorization=${req.headers.authorization === undefined ? 'none' : 'present'}\n`);
    }
    if (serveCardFile(req, res, url)) return;
    handler(req, res, url).catch((error) => {
      process.stderr.write(`fixture-server: ${req.method} ${req.url}: ${error?.stack ?? error}\n`);
      if (!res.headersSent) jsonRpcError(res, 500, ErrorCode.InternalError, 'Internal error');
      else res.end();
    });
  });
  const requestedPort = Number.parseInt(process.env.PORT ?? '0', 10) || 0;
  await new Promise((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(requestedPort, '127.0.0.1', resolve);
  });
  const { port } = httpServer.address();
  handler = makeHandler([`127.0.0.1:${port}`, `localhost:${port}`]);
  process.stderr.write(`${JSON.stringify({ listening: port })}\n`);
}

// FIXTURE_SERVER_CARD=FILE: GET /.well-known/mcp/server-card answers the
// file as it is (a server card, for the doctor's card check).
function serveCardFile(req, res, url) {
  const file = process.env.FIXTURE_SERVER_CARD;
  if (!file || req.method !== 'GET' || url.pathname !== '/.well-known/mcp/server-card') return false;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' })
    .end(fs.readFileSync(file));
  return true;
}

function notFound(res) {
  res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
}

function jsonRpcError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

// The SDK's EventStore interface, in memory. Event ids are "<n>" with n
// increasing; each remembers its stream.
class EventStore {
  constructor() { this.events = []; }

  async storeEvent(streamId, message) {
    const eventId = String(this.events.length);
    this.events.push({ eventId, streamId, message });
    return eventId;
  }

  async getStreamIdForEventId(eventId) { return this.events[Number(eventId)]?.streamId; }

  async replayEventsAfter(lastEventId, { send }) {
    const last = this.events[Number(lastEventId)];
    if (!last) throw new Error(`unknown event id ${lastEventId}`);
    for (const event of this.events.slice(Number(lastEventId) + 1)) {
      if (event.streamId === last.streamId) await send(event.eventId, event.message);
    }
    return last.streamId;
  }
}

// ---------------------------------------------------------------------------
// Start and stop

function shutdown() {
  // Nothing to flush: state is in memory. Exit without waiting for open streams.
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

// stdin closing means the parent is gone. In the HTTP modes stdin carries
// nothing else, so it is watched only when it is a pipe or socket: started
// with stdin from /dev/null or a file, they keep running until signalled.
const stdinStat = fs.fstatSync(0);
if (options.mode === 'stdio' || stdinStat.isFIFO() || stdinStat.isSocket()) {
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  if (options.mode !== 'stdio') process.stdin.resume(); // read (and drop) only to see the end
}

try {
  switch (options.mode) {
    case 'stdio': await runStdio(); break;
    case 'streamableHttp': await runHttp(streamableHttpHandler); break;
    case 'sse': await runHttp(sseHandler); break;
  }
} catch (error) {
  process.stderr.write(`fixture-server: cannot start ${options.mode}: ${error?.message ?? error}\n`);
  process.exit(1);
}
