// The conformance server's MCP 2026-07-28 mode (server.mjs --modern):
// requests are read from stdin here, not by the SDK, and answered from the
// same tables (catalog.mjs): no initialize but server/discover, _meta on
// every request, subscriptions/listen with list changes and resource
// subscriptions, and input_required results, both for the tools of the
// handshake era that ask the client and for the tools and the prompt of
// the revision's input-required-result scenarios (MODERN_TOOLS).

import crypto from 'node:crypto';
import process from 'node:process';
import readline from 'node:readline';

import { HANDLERS, PROMPTS, TOOLS } from './catalog.mjs';
import { NO_ARGUMENTS, text } from './media.mjs';

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

export function serveModern() {
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
