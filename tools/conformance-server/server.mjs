#!/usr/bin/env node
// inspectord's conformance server: a stdio MCP server that answers what the
// server scenarios of the official conformance suite
// (@modelcontextprotocol/conformance, pinned in tools/npm) call, so that the
// suite can grade inspectord's HTTP front door with this server behind it.
//
//   node tools/conformance-server/server.mjs
//
// Newline-delimited JSON-RPC on stdin/stdout; stderr carries diagnostics
// only. It exits 0 when stdin closes and on SIGTERM/SIGINT.
//
// What it offers (names and texts are the ones the scenarios ask for):
//   tools      test_simple_text, test_image_content, test_audio_content,
//              test_embedded_resource, test_multiple_content_types,
//              test_tool_with_logging (3 log notifications, 50 ms apart),
//              test_tool_with_progress (0, 50, 100 of 100), test_error_handling
//              (isError result), test_sampling, test_elicitation,
//              test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums
//              (these four ask the client), json_schema_2020_12_tool (a 2020-12
//              input schema kept verbatim), test_reconnection (answers after a
//              short pause, long enough for a front door to end the stream),
//              and for the 2026-07-28 scenarios: test_missing_capability (asks
//              to sample), test_streaming_elicitation, test_logging_tool,
//              test_trigger_tool_change and test_trigger_prompt_change (add or
//              remove test_dynamic_tool / test_dynamic_prompt and say so),
//              test_header_param (its argument has an x-mcp-header)
//   resources  test://static-text, test://static-binary, test://watched-resource
//              (subscribable), template test://template/{id}/data
//   prompts    test_simple_prompt, test_prompt_with_arguments (arg1, arg2, with
//              completion), test_prompt_with_embedded_resource, test_prompt_with_image
//   logging    logging/setLevel filters the tools' log notifications
//
// It uses the SDK's low-level `Server` so that every answer, schemas
// included, goes out exactly as written here.
//
//   node tools/conformance-server/server.mjs --modern
//
// speaks MCP 2026-07-28 instead (no initialize: server/discover, _meta on
// every request, subscriptions/listen with list changes and resource
// subscriptions, input_required results), with the
// same tools, resources and prompts (those that ask the client do it with
// input_required results), plus the tools and the prompt that the
// revision's input-required-result scenarios call (test_input_required_*).

import { createRequire } from 'node:module';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

// The SDK lives in tools/npm/node_modules (or $CONFORMANCE_NODE_MODULES).
const nodeModules = path.resolve(process.env.CONFORMANCE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'npm', 'node_modules'));
if (!fs.existsSync(path.join(nodeModules, '@modelcontextprotocol', 'sdk'))) {
  process.stderr.write(`conformance-server: the MCP SDK is not in ${nodeModules}; run tools/npm/install.sh\n`);
  process.exit(1);
}
const sdkRequire = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const { Server } = sdkRequire('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = sdkRequire('@modelcontextprotocol/sdk/server/stdio.js');
const {
  CallToolRequestSchema, CompleteRequestSchema, CreateMessageResultSchema, ElicitResultSchema,
  ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema,
} = sdkRequire('@modelcontextprotocol/sdk/types.js');

// ---------------------------------------------------------------------------
// Media: a 2x2 PNG, and a WAV of 20 ms of a 440 Hz tone built at start.

const PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGNgYPgPBCACyAIANdgH+Vq2rHoAAAAASUVORK5CYII=';

function wavBase64() {
  const rate = 8000;
  const samples = rate / 50;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);      // fmt chunk size
  header.writeUInt16LE(1, 20);       // PCM
  header.writeUInt16LE(1, 22);       // mono
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28); // bytes per second
  header.writeUInt16LE(2, 32);       // block align
  header.writeUInt16LE(16, 34);      // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]).toString('base64');
}
const WAV_BASE64 = wavBase64();

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (value) => ({ type: 'text', text: value });
const NO_ARGUMENTS = { type: 'object', properties: {} };

// ---------------------------------------------------------------------------
// The server

const server = new Server(
  { name: 'inspectord-conformance-server', version: '1.0.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
    instructions: 'Test server for the MCP conformance scenarios.',
  },
);

// Every request handler, by method, for the 2026-07-28 mode to call too.
const HANDLERS = {};
function on(schema, handler) {
  server.setRequestHandler(schema, handler);
  HANDLERS[schema.shape.method.value] = handler;
}

// Sends a log notification unless logging/setLevel asked for less.
async function log(extra, level, data) {
  if (server.isMessageIgnored(level, extra.sessionId)) return;
  await extra.sendNotification({
    method: 'notifications/message',
    params: { level, logger: 'conformance-server', data },
  });
}

// The capabilities the client declared: at initialize, or (2026-07-28) in
// the request's _meta.
function requireClientCapability(name, extra) {
  const capabilities = extra?.clientCapabilities ?? server.getClientCapabilities() ?? {};
  if (!capabilities[name]) {
    return { isError: true, content: [text(`The client did not declare the ${name} capability`)] };
  }
  return undefined;
}

async function elicit(extra, message, requestedSchema) {
  const missing = requireClientCapability('elicitation', extra);
  if (missing) return missing;
  const answer = await extra.sendRequest(
    { method: 'elicitation/create', params: { message, requestedSchema } }, ElicitResultSchema);
  return {
    content: [text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)],
  };
}

// A JSON Schema 2020-12 document with the keywords the suite checks are
// kept: $schema, $defs with an $anchor, additionalProperties, allOf/anyOf,
// if/then/else.
const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: {
    address: {
      $anchor: 'addressDef',
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' } },
    },
  },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

// name -> { description, inputSchema, run(args, extra) }
const TOOLS = {
  test_simple_text: {
    description: 'Answers with one text block',
    run: async () => ({ content: [text('This is a simple text response for testing.')] }),
  },
  test_image_content: {
    description: 'Answers with one PNG image',
    run: async () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }),
  },
  test_audio_content: {
    description: 'Answers with one WAV clip',
    run: async () => ({ content: [{ type: 'audio', data: WAV_BASE64, mimeType: 'audio/wav' }] }),
  },
  test_embedded_resource: {
    description: 'Answers with an embedded text resource',
    run: async () => ({
      content: [{
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain',
                    text: 'This is an embedded resource content.' },
      }],
    }),
  },
  test_multiple_content_types: {
    description: 'Answers with text, an image and an embedded resource',
    run: async () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
        {
          type: 'resource',
          resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json',
                      text: JSON.stringify({ test: 'data', value: 123 }) },
        },
      ],
    }),
  },
  test_tool_with_logging: {
    description: 'Sends three info log notifications while it runs',
    run: async (args, extra) => {
      await log(extra, 'info', 'Tool execution started');
      await sleep(50);
      await log(extra, 'info', 'Tool processing data');
      await sleep(50);
      await log(extra, 'info', 'Tool execution completed');
      return { content: [text('Tool with logging executed successfully')] };
    },
  },
  test_tool_with_progress: {
    description: 'Reports progress 0, 50 and 100 of 100 when given a progress token',
    run: async (args, extra) => {
      const token = extra._meta?.progressToken;
      for (const progress of [0, 50, 100]) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress, total: 100, message: `${progress}%` },
          });
        }
        if (progress < 100) await sleep(50);
      }
      return { content: [text(`Tool with progress executed (token ${JSON.stringify(token ?? null)})`)] };
    },
  },
  // The 2026-07-28 scenarios' diagnostic tools, for a client of that
  // revision reaching this server through the front door's translation.
  test_missing_capability: {
    description: 'Needs the client\'s sampling capability: asks it to sample a message',
    run: async (args, extra) => {
      const answer = await extra.sendRequest({
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: text('Say hello') }], maxTokens: 20 },
      }, CreateMessageResultSchema);
      return { content: [text(`Sampled: ${JSON.stringify(answer.content)}`)] };
    },
  },
  test_streaming_elicitation: {
    description: 'Reports progress when given a token, then asks the client for a name',
    run: async (args, extra) => {
      const token = extra._meta?.progressToken;
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress', params: { progressToken: token, progress: 1, total: 2 },
        });
      }
      return elicit(extra, 'What is your name?', {
        type: 'object', properties: { name: { type: 'string' } }, required: ['name'],
      });
    },
  },
  test_logging_tool: {
    description: 'Sends two log notifications (at the level logging/setLevel allows)',
    run: async (args, extra) => {
      await log(extra, 'info', 'test_logging_tool started');
      await log(extra, 'info', 'test_logging_tool finished');
      return { content: [text('Logged twice')] };
    },
  },
  test_trigger_tool_change: {
    description: 'Adds or removes the tool test_dynamic_tool, then says the tool list changed',
    run: async () => {
      if (TOOLS.test_dynamic_tool) {
        delete TOOLS.test_dynamic_tool;
      } else {
        TOOLS.test_dynamic_tool = {
          description: 'Exists between two calls of test_trigger_tool_change',
          run: async () => ({ content: [text('dynamic')] }),
        };
      }
      await server.sendToolListChanged();
      return { content: [text('Tool list changed')] };
    },
  },
  test_trigger_prompt_change: {
    description: 'Adds or removes the prompt test_dynamic_prompt, then says the prompt list changed',
    run: async () => {
      if (PROMPTS.test_dynamic_prompt) {
        delete PROMPTS.test_dynamic_prompt;
      } else {
        PROMPTS.test_dynamic_prompt = {
          description: 'Exists between two calls of test_trigger_prompt_change',
          get: () => [{ role: 'user', content: text('dynamic') }],
        };
      }
      await server.sendPromptListChanged();
      return { content: [text('Prompt list changed')] };
    },
  },
  test_header_param: {
    description: 'Answers with its region argument, which clients mirror in the Mcp-Param-Region header',
    inputSchema: {
      type: 'object',
      properties: { region: { type: 'string', description: 'A region name', 'x-mcp-header': 'Region' } },
      required: ['region'],
    },
    run: async (args) => ({ content: [text(`Region: ${args.region}`)] }),
  },
  test_error_handling: {
    description: 'Always fails with an error result',
    run: async () => ({
      isError: true,
      content: [text('This tool intentionally returns an error for testing')],
    }),
  },
  test_sampling: {
    description: 'Asks the client to sample a message for the prompt',
    inputSchema: {
      type: 'object',
      properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } },
      required: ['prompt'],
    },
    run: async (args, extra) => {
      const missing = requireClientCapability('sampling', extra);
      if (missing) return missing;
      const answer = await extra.sendRequest({
        method: 'sampling/createMessage',
        params: {
          messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }],
          maxTokens: 100,
        },
      }, CreateMessageResultSchema);
      const content = answer.content;
      const said = content && content.type === 'text' ? content.text : JSON.stringify(content);
      return { content: [text(`LLM response: ${said}`)] };
    },
  },
  test_elicitation: {
    description: 'Asks the client for a username and an email address',
    inputSchema: {
      type: 'object',
      properties: { message: { type: 'string', description: 'The message to show the user' } },
      required: ['message'],
    },
    run: async (args, extra) => {
      const result = await elicit(extra, String(args.message ?? ''), {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      });
      if (result.isError) return result;
      return { content: [text(result.content[0].text.replace(/^Elicitation completed: /, 'User response: '))] };
    },
  },
  test_elicitation_sep1034_defaults: {
    description: 'Asks the client for values of every primitive type, each with a default',
    run: async (args, extra) => elicit(extra, 'Please review these values', {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Name', default: 'John Doe' },
        age: { type: 'integer', description: 'Age', default: 30 },
        score: { type: 'number', description: 'Score', default: 95.5 },
        status: { type: 'string', description: 'Status', enum: ['active', 'inactive', 'pending'],
                  default: 'active' },
        verified: { type: 'boolean', description: 'Verified', default: true },
      },
    }),
  },
  test_elicitation_sep1330_enums: {
    description: 'Asks the client to choose from the five kinds of enum schema',
    run: async (args, extra) => elicit(extra, 'Please choose', {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Pick one',
                          enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string', description: 'Pick one (titled)',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: { type: 'string', description: 'Pick one (legacy titles)',
                      enum: ['opt1', 'opt2', 'opt3'],
                      enumNames: ['Option One', 'Option Two', 'Option Three'] },
        untitledMulti: {
          type: 'array', description: 'Pick several',
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array', description: 'Pick several (titled)',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    }),
  },
  json_schema_2020_12_tool: {
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: SCHEMA_2020_12,
    run: async (args) => ({ content: [text(`Received ${JSON.stringify(args)}`)] }),
  },
  test_reconnection: {
    description: 'Answers after 400 ms, so that an HTTP front door can end the stream first',
    run: async () => {
      await sleep(400);
      return { content: [text('Reconnection test completed successfully')] };
    },
  },
};

on(ListToolsRequestSchema, async () => ({
  tools: Object.entries(TOOLS).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: tool.inputSchema ?? NO_ARGUMENTS,
  })),
}));

on(CallToolRequestSchema, async (request, extra) => {
  const tool = TOOLS[request.params.name];
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
  return tool.run(request.params.arguments ?? {}, { ...extra, _meta: request.params._meta });
});

// ---------------------------------------------------------------------------
// Resources

const RESOURCES = {
  'test://static-text': {
    name: 'static-text', description: 'A fixed text', mimeType: 'text/plain',
    read: (uri) => ({ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }),
  },
  'test://static-binary': {
    name: 'static-binary', description: 'A fixed PNG image', mimeType: 'image/png',
    read: (uri) => ({ uri, mimeType: 'image/png', blob: PNG_BASE64 }),
  },
  'test://watched-resource': {
    name: 'watched-resource', description: 'A resource clients may subscribe to', mimeType: 'text/plain',
    read: (uri) => ({ uri, mimeType: 'text/plain', text: `Watched resource, ${subscriptions.size} subscription(s)` }),
  },
};
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;
const subscriptions = new Set();

on(ListResourcesRequestSchema, async () => ({
  resources: Object.entries(RESOURCES).map(([uri, r]) => ({
    uri, name: r.name, description: r.description, mimeType: r.mimeType,
  })),
}));

on(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{
    uriTemplate: 'test://template/{id}/data',
    name: 'template-data',
    description: 'JSON data for the id in the URI',
    mimeType: 'application/json',
  }],
}));

on(ReadResourceRequestSchema, async (request) => {
  const { uri } = request.params;
  if (RESOURCES[uri]) return { contents: [RESOURCES[uri].read(uri)] };
  const match = TEMPLATE.exec(uri);
  if (match) {
    const id = decodeURIComponent(match[1]);
    return {
      contents: [{
        uri, mimeType: 'application/json',
        text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
      }],
    };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
});

on(SubscribeRequestSchema, async (request) => {
  subscriptions.add(request.params.uri);
  return {};
});

on(UnsubscribeRequestSchema, async (request) => {
  subscriptions.delete(request.params.uri);
  return {};
});

// ---------------------------------------------------------------------------
// Prompts and completion

const PROMPTS = {
  test_simple_prompt: {
    description: 'A prompt without arguments',
    get: () => [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  },
  test_prompt_with_arguments: {
    description: 'A prompt that quotes its two arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: (args) => [{
      role: 'user',
      content: text(`Prompt with arguments: arg1='${args.arg1 ?? ''}', arg2='${args.arg2 ?? ''}'`),
    }],
  },
  test_prompt_with_embedded_resource: {
    description: 'A prompt that embeds the resource named by its argument',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: (args) => [
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: String(args.resourceUri ?? 'test://embedded-resource'), mimeType: 'text/plain',
                      text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user', content: text('Please process the embedded resource above.') },
    ],
  },
  test_prompt_with_image: {
    description: 'A prompt holding an image',
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  },
};

on(ListPromptsRequestSchema, async () => ({
  prompts: Object.entries(PROMPTS).map(([name, p]) => ({
    name, description: p.description, ...(p.arguments ? { arguments: p.arguments } : {}),
  })),
}));

on(GetPromptRequestSchema, async (request) => {
  const prompt = PROMPTS[request.params.name];
  if (!prompt) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
  return { description: prompt.description, messages: prompt.get(request.params.arguments ?? {}) };
});

// Completion offers a few fixed words that start with what was typed.
const WORDS = ['paris', 'park', 'party', 'test', 'testing', 'template'];
on(CompleteRequestSchema, async (request) => {
  const typed = String(request.params.argument?.value ?? '');
  const values = WORDS.filter((word) => word.startsWith(typed));
  return { completion: { values, total: values.length, hasMore: false } };
});


// ---------------------------------------------------------------------------
// MCP 2026-07-28 (--modern): requests are read here, not by the SDK, and
// answered from the same tables.

const MODERN = process.argv.includes('--modern');
const VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';
const SERVER_INFO = { name: 'inspectord-conformance-server', version: '1.0.0' };
const CACHEABLE = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list',
  'resources/read']);
// A tool written for the handshake era that asks the client (sendRequest)
// is run again on each retry: its N-th question is answered by
// inputResponses["input-N"] when the retry carries it, else the run stops
// there and the question becomes an input_required result.
class NeedInput extends Error {
  constructor(key, request) {
    super(`needs ${key}`);
    this.key = key;
    this.request = request;
  }
}

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

// requestState: the state, signed with a key of this process's, expiring.
const STATE_KEY = crypto.randomBytes(32);
function signState(payload) {
  const body = Buffer.from(JSON.stringify({ ...payload, exp: Date.now() + 600_000 })).toString('base64url');
  return `${body}.${crypto.createHmac('sha256', STATE_KEY).update(body).digest('base64url')}`;
}
function readState(state, tool) {
  if (typeof state !== 'string') throw new RpcError(-32602, 'requestState is missing');
  const [body, mac] = state.split('.');
  const want = crypto.createHmac('sha256', STATE_KEY).update(body ?? '').digest('base64url');
  if (!mac || mac.length !== want.length || !crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(want))) {
    throw new RpcError(-32602, 'requestState failed its integrity check');
  }
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  if (payload.exp < Date.now()) throw new RpcError(-32602, 'requestState has expired');
  if (payload.tool !== tool) throw new RpcError(-32602, 'requestState belongs to another request');
  return payload;
}

// params.inputResponses: absent ({}), or an object of objects.
function inputResponses(params) {
  if (!('inputResponses' in params)) return {};
  const responses = params.inputResponses;
  if (responses === null || typeof responses !== 'object' || Array.isArray(responses)) {
    throw new RpcError(-32602, 'inputResponses must be an object');
  }
  for (const [key, value] of Object.entries(responses)) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new RpcError(-32602, `inputResponses.${key} must be an object`);
    }
  }
  return responses;
}

function inputRequired(inputRequests, requestState) {
  return {
    resultType: 'input_required',
    ...(inputRequests ? { inputRequests } : {}),
    ...(requestState ? { requestState } : {}),
  };
}

const ASK = {
  user_name: { method: 'elicitation/create', params: {
    message: 'What is your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
  capital_question: { method: 'sampling/createMessage', params: {
    messages: [{ role: 'user', content: text('What is the capital of France?') }], maxTokens: 100 } },
  client_roots: { method: 'roots/list', params: {} },
  confirm: { method: 'elicitation/create', params: {
    message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
  greeting: { method: 'sampling/createMessage', params: {
    messages: [{ role: 'user', content: text('Generate a greeting') }], maxTokens: 50 } },
  step1: { method: 'elicitation/create', params: {
    message: 'Step 1: What is your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
  step2: { method: 'elicitation/create', params: {
    message: 'Step 2: What is your favorite color?',
    requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] } } },
  user_context: { method: 'elicitation/create', params: {
    message: 'What context should the prompt use?',
    requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] } } },
};
function pick(...keys) {
  return Object.fromEntries(keys.map((key) => [key, ASK[key]]));
}
const sampledText = (answer) => (answer.content?.type === 'text' ? answer.content.text : JSON.stringify(answer.content));

// name -> { description, run(params, context) } for tools/call here.
const MODERN_TOOLS = {
  test_input_required_result_elicitation: {
    description: 'Asks for a name (input_required), then greets',
    run: (params) => {
      const answer = inputResponses(params).user_name;
      if (!answer) return inputRequired(pick('user_name'));
      return { content: [text(`Hello, ${answer.content?.name ?? 'stranger'}!`)] };
    },
  },
  test_input_required_result_sampling: {
    description: 'Asks for a sampled answer (input_required), then quotes it',
    run: (params) => {
      const answer = inputResponses(params).capital_question;
      if (!answer) return inputRequired(pick('capital_question'));
      return { content: [text(`The model said: ${sampledText(answer)}`)] };
    },
  },
  test_input_required_result_list_roots: {
    description: 'Asks for the client\'s roots (input_required), then lists them',
    run: (params) => {
      const answer = inputResponses(params).client_roots;
      if (!answer) return inputRequired(pick('client_roots'));
      const roots = Array.isArray(answer.roots) ? answer.roots.map((root) => root.uri) : [];
      return { content: [text(`Roots: ${roots.join(', ') || '(none)'}`)] };
    },
  },
  test_input_required_result_request_state: {
    description: 'Asks for a confirmation with a signed requestState, checked on the retry',
    run: (params) => {
      const answer = inputResponses(params).confirm;
      if (!answer) return inputRequired(pick('confirm'), signState({ tool: 'request_state' }));
      readState(params.requestState, 'request_state');
      return { content: [text(`state-ok: confirmed=${answer.content?.ok}`)] };
    },
  },
  test_input_required_result_multiple_inputs: {
    description: 'Asks for a name, a sampled greeting and the roots at once',
    run: (params) => {
      const responses = inputResponses(params);
      const keys = ['user_name', 'greeting', 'client_roots'];
      const missing = keys.filter((key) => !responses[key]);
      if (missing.length === keys.length || !('requestState' in params)) {
        return inputRequired(pick(...missing), signState({ tool: 'multiple_inputs' }));
      }
      readState(params.requestState, 'multiple_inputs');
      if (missing.length > 0) return inputRequired(pick(...missing), params.requestState);
      return { content: [text(`${sampledText(responses.greeting)}, ${responses.user_name.content?.name}`)] };
    },
  },
  test_input_required_result_multi_round: {
    description: 'Asks for a name, then a colour, then answers',
    run: (params) => {
      const responses = inputResponses(params);
      if (!('requestState' in params)) return inputRequired(pick('step1'), signState({ tool: 'multi_round', step: 1 }));
      const state = readState(params.requestState, 'multi_round');
      if (state.step === 1) {
        if (!responses.step1) return inputRequired(pick('step1'), params.requestState);
        return inputRequired(pick('step2'),
          signState({ tool: 'multi_round', step: 2, name: responses.step1.content?.name }));
      }
      if (!responses.step2) return inputRequired(pick('step2'), params.requestState);
      return { content: [text(`${state.name} likes ${responses.step2.content?.color}`)] };
    },
  },
  test_input_required_result_capabilities: {
    description: 'Asks only for what the client declared it can give',
    run: (params, context) => {
      const responses = inputResponses(params);
      const wanted = [];
      if (context.capabilities.elicitation) wanted.push('user_name');
      if (context.capabilities.sampling) wanted.push('capital_question');
      if (context.capabilities.roots) wanted.push('client_roots');
      const missing = wanted.filter((key) => !responses[key]);
      if (missing.length > 0) return inputRequired(pick(...missing));
      return { content: [text(`Had ${wanted.length} input(s)`)] };
    },
  },
  test_input_required_result_tampered_state: {
    description: 'Asks for a confirmation with a signed requestState; a changed one is refused',
    run: (params) => {
      if (!('requestState' in params)) return inputRequired(pick('confirm'), signState({ tool: 'tampered_state' }));
      readState(params.requestState, 'tampered_state');
      return { content: [text('state-ok')] };
    },
  },
  test_missing_capability: {
    description: 'Needs the client\'s sampling capability',
    run: (params, context) => {
      if (!context.capabilities.sampling) {
        throw new RpcError(-32021, 'This tool requires the sampling capability',
          { requiredCapabilities: { sampling: {} } });
      }
      const answer = inputResponses(params).capital_question;
      if (!answer) return inputRequired(pick('capital_question'));
      return { content: [text(`Sampled: ${sampledText(answer)}`)] };
    },
  },
  test_streaming_elicitation: {
    description: 'Reports progress when given a token, then asks for a name',
    run: (params, context) => {
      const answer = inputResponses(params).user_name;
      if (!answer) {
        if (context.progressToken !== undefined) {
          context.notify({ method: 'notifications/progress',
            params: { progressToken: context.progressToken, progress: 1, total: 2 } });
        }
        return inputRequired(pick('user_name'));
      }
      return { content: [text(`Hello, ${answer.content?.name}!`)] };
    },
  },
  test_logging_tool: {
    description: 'Logs twice when the request sets a log level',
    run: (params, context) => {
      for (const data of ['test_logging_tool started', 'test_logging_tool finished']) {
        context.notify({ method: 'notifications/message', params: { level: 'info', logger: 'conformance-server', data } });
      }
      return { content: [text('Logged twice (if asked to)')] };
    },
  },
  test_trigger_tool_change: {
    description: 'Adds or removes test_dynamic_tool and tells the listeners',
    run: () => {
      if (TOOLS.test_dynamic_tool) delete TOOLS.test_dynamic_tool;
      else TOOLS.test_dynamic_tool = { description: 'Comes and goes', run: async () => ({ content: [text('dynamic')] }) };
      tellListeners('toolsListChanged', 'notifications/tools/list_changed');
      return { content: [text('Tool list changed')] };
    },
  },
  test_trigger_prompt_change: {
    description: 'Adds or removes test_dynamic_prompt and tells the listeners',
    run: () => {
      if (PROMPTS.test_dynamic_prompt) delete PROMPTS.test_dynamic_prompt;
      else PROMPTS.test_dynamic_prompt = { description: 'Comes and goes', get: () => [{ role: 'user', content: text('dynamic') }] };
      tellListeners('promptsListChanged', 'notifications/prompts/list_changed');
      return { content: [text('Prompt list changed')] };
    },
  },
};

const INPUT_PROMPT = 'test_input_required_result_prompt';

// subscriptions/listen requests open now: JSON id -> { id, granted }.
const listeners = new Map();
function tellListeners(filter, method) {
  for (const { id, granted } of listeners.values()) {
    if (granted[filter]) send({ method, params: { _meta: { [SUBSCRIPTION_KEY]: id } } });
  }
}

async function modernRequest(method, params, context) {
  switch (method) {
    case 'server/discover':
      return {
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: { listChanged: true }, resources: { subscribe: true }, prompts: { listChanged: true },
          completions: {}, logging: {} },
        instructions: 'Test server for the MCP conformance scenarios (2026-07-28).',
        ttlMs: 0, cacheScope: 'public',
      };
    case 'subscriptions/listen': {
      const wanted = params.notifications ?? {};
      const granted = {};
      if (wanted.toolsListChanged) granted.toolsListChanged = true;
      if (wanted.promptsListChanged) granted.promptsListChanged = true;
      if (Array.isArray(wanted.resourceSubscriptions) && wanted.resourceSubscriptions.length > 0) {
        granted.resourceSubscriptions = wanted.resourceSubscriptions.filter((uri) => typeof uri === 'string');
      }
      listeners.set(JSON.stringify(context.id), { id: context.id, granted });
      send({ method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { [SUBSCRIPTION_KEY]: context.id }, notifications: granted } });
      return undefined;  // answered when cancelled
    }
    case 'tools/list': {
      const listed = await HANDLERS['tools/list']({ method, params });
      const tools = listed.tools.filter((tool) => !MODERN_TOOLS[tool.name]);
      for (const [name, tool] of Object.entries(MODERN_TOOLS)) {
        tools.push({ name, description: tool.description, inputSchema: NO_ARGUMENTS });
      }
      return { tools };
    }
    case 'tools/call': {
      const tool = MODERN_TOOLS[params.name];
      if (tool) return tool.run(params, context);
      const responses = inputResponses(params);
      let asked = 0;
      try {
        return await HANDLERS['tools/call']({ method, params }, {
          _meta: params._meta,
          clientCapabilities: context.capabilities,
          sendNotification: async (notification) => context.notify(notification),
          sendRequest: async (request) => {
            const key = `input-${++asked}`;
            if (responses[key]) return responses[key];
            throw new NeedInput(key, request);
          },
        });
      } catch (error) {
        if (!(error instanceof NeedInput)) throw error;
        return inputRequired({ [error.key]: { method: error.request.method, params: error.request.params ?? {} } });
      }
    }
    case 'prompts/list': {
      const listed = await HANDLERS['prompts/list']({ method, params });
      listed.prompts.push({ name: INPUT_PROMPT, description: 'Asks for context (input_required) first' });
      return listed;
    }
    case 'prompts/get': {
      if (params.name === INPUT_PROMPT) {
        const answer = inputResponses(params).user_context;
        if (!answer) return inputRequired(pick('user_context'));
        return { description: 'A prompt built from the context given',
          messages: [{ role: 'user', content: text(`Context: ${answer.content?.context}`) }] };
      }
      return HANDLERS['prompts/get']({ method, params });
    }
    case 'resources/list':
    case 'resources/templates/list':
    case 'resources/read':
    case 'completion/complete':
      return HANDLERS[method]({ method, params });
    default:
      throw new RpcError(-32601, `Method not found: ${method}`);
  }
}

async function modernMessage(message) {
  if (message.id === undefined) {
    // notifications/cancelled ends a subscriptions/listen request.
    if (message.method === 'notifications/cancelled') {
      const key = JSON.stringify(message.params?.requestId);
      const listener = listeners.get(key);
      if (listener) {
        listeners.delete(key);
        send({ id: listener.id, result: { resultType: 'complete', _meta: { [SUBSCRIPTION_KEY]: listener.id } } });
      }
    }
    return;
  }
  const { id, method } = message;
  const params = message.params ?? {};
  const meta = params._meta ?? {};
  try {
    if (method !== 'server/discover' && (typeof meta[VERSION_KEY] !== 'string' ||
        typeof meta[CAPABILITIES_KEY] !== 'object' || meta[CAPABILITIES_KEY] === null)) {
      throw new RpcError(-32602, '_meta must carry the protocol version and the client capabilities');
    }
    if (meta[VERSION_KEY] !== undefined && meta[VERSION_KEY] !== '2026-07-28') {
      throw new RpcError(-32022, 'Unsupported protocol version',
        { supported: ['2026-07-28'], requested: meta[VERSION_KEY] });
    }
    const context = {
      id,
      capabilities: meta[CAPABILITIES_KEY] ?? {},
      progressToken: meta.progressToken,
      notify: (notification) => {
        if (notification.method === 'notifications/message' && meta[LOG_LEVEL_KEY] === undefined) return;
        send(notification);
      },
    };
    const result = await modernRequest(method, params, context);
    if (result === undefined) return;
    const complete = result.resultType === undefined || result.resultType === 'complete';
    const answer = { resultType: 'complete', ...result };
    answer._meta = { ...(result._meta ?? {}), [SERVER_INFO_KEY]: SERVER_INFO };
    if (complete && CACHEABLE.has(method)) {
      answer.ttlMs ??= 0;
      answer.cacheScope ??= 'public';
    }
    send({ id, result: answer });
  } catch (error) {
    let code = Number.isInteger(error.code) ? error.code : -32603;
    if (code === -32002) code = -32602;  // resource not found, as of 2026-07-28
    send({ id, error: { code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) } });
  }
}

function serveModern() {
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      send({ id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    modernMessage(message).catch((error) => process.stderr.write(`conformance-server: ${error.stack}\n`));
  });
  lines.on('close', () => process.exit(0));
}

// ---------------------------------------------------------------------------
// Start and stop

function stop() {
  if (MODERN) process.exit(0);
  server.close().finally(() => process.exit(0));
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);

if (MODERN) {
  serveModern();
  process.stderr.write('conformance-server: serving MCP 2026-07-28 on stdio\n');
} else {
  await server.connect(new StdioServerTransport());
  process.stderr.write('conformance-server: serving on stdio\n');
}
