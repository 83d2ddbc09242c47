// What the conformance server offers, as the SDK's low-level `Server`
// (server.mjs connects it to stdio): the tools, resources, prompts and
// completion the server scenarios call, each handler also kept in HANDLERS
// by method so that the 2026-07-28 mode (modern.mjs) answers from the same
// tables. TOOLS and PROMPTS change at run time (test_trigger_*_change).

import { sdkRequire } from '../npm/mcp-sdk.mjs';
import { NO_ARGUMENTS, PNG_BASE64, WAV_BASE64, sleep, text } from './media.mjs';

const sdk = sdkRequire('conformance-server', 'CONFORMANCE_NODE_MODULES');
const { Server } = sdk('@modelcontextprotocol/sdk/server/index.js');
const {
  CallToolRequestSchema, CompleteRequestSchema, CreateMessageResultSchema, ElicitResultSchema,
  ErrorCode, GetPromptRequestSchema, ListPromptsRequestSchema, ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError, ReadResourceRequestSchema,
  SubscribeRequestSchema, UnsubscribeRequestSchema,
} = sdk('@modelcontextprotocol/sdk/types.js');

export const server = new Server(
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
export const HANDLERS = {};
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
export const TOOLS = {
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

export const PROMPTS = {
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
