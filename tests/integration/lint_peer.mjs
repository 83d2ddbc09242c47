// A stdio MCP server whose tools break clients in known ways, for
// lint_e2e_test.cc: a name with a space, a oneOf and a $ref in an input
// schema, a 150-value enum, a required argument that is not a property, a
// tool with no description, and `count`, whose result does not satisfy
// its own output schema. It also lists `echo`, as the fixture server does.
// Newline-delimited JSON-RPC on stdin/stdout; exits when stdin closes.
import readline from 'node:readline';

const tools = [
  { name: 'bad name', description: 'A name with a space', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'choose',
    description: 'Arguments in shapes clients drop',
    inputSchema: {
      type: 'object',
      properties: {
        choice: { description: 'a or b', oneOf: [{ type: 'string' }, { type: 'number' }] },
        level: { description: 'one of many', enum: Array.from({ length: 150 }, (_, i) => `level-${i}`) },
        ref: { description: 'by reference', $ref: '#/$defs/thing' },
      },
      required: ['choice', 'missing'],
      $defs: { thing: { type: 'string' } },
    },
  },
  { name: 'quiet', inputSchema: { type: 'object' } },
  {
    name: 'count',
    description: 'Counts, but answers a string',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { count: { type: 'integer' } }, required: ['count'] },
  },
  { name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'what to echo' } } } },
];

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined || message.method === undefined) return;
  const { id, method, params } = message;
  if (method === 'initialize') {
    send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'lint-peer', version: '1.0.0' } } });
  } else if (method === 'tools/list') {
    send({ id, result: { tools } });
  } else if (method === 'tools/call' && params.name === 'count') {
    send({ id, result: { content: [{ type: 'text', text: 'three' }], structuredContent: { count: 'three' } } });
  } else if (method === 'tools/call' && params.name === 'echo') {
    send({ id, result: { content: [{ type: 'text', text: String(params.arguments?.message ?? '') }] } });
  } else if (method === 'ping') {
    send({ id, result: {} });
  } else {
    send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
});
