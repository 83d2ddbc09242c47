// An MCP client made with the MCP TypeScript SDK (1.x, tools/npm) against a
// conversion's endpoint: connects over Streamable HTTP (or the legacy SSE
// transport with --sse), lists the tools and calls `echo`, then prints one
// JSON line {"tools": [...names], "echo": "text of the result"} on stdout.
// Exits 1 with the error on stderr if anything fails.
//
//   node bridge_sdk_client.mjs URL [--sse] [--token TOKEN] [--message TEXT]
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools', 'npm', 'node_modules'));
const sdkRequire = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/sse.js');

const args = process.argv.slice(2);
const url = new URL(args[0]);
const sse = args.includes('--sse');
const tokenAt = args.indexOf('--token');
const token = tokenAt >= 0 ? args[tokenAt + 1] : '';
const messageAt = args.indexOf('--message');
const message = messageAt >= 0 ? args[messageAt + 1] : 'hello through the bridge';

const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
const transport = sse
  ? new SSEClientTransport(url, { requestInit, eventSourceInit: token ? {
      fetch: (u, init) => fetch(u, { ...init, headers: { ...(init?.headers || {}), Authorization: `Bearer ${token}` } }),
    } : undefined })
  : new StreamableHTTPClientTransport(url, { requestInit });
const client = new Client({ name: 'bridge-sdk-client', version: '1.0.0' });

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const result = await client.callTool({ name: 'echo', arguments: { message } });
  const text = (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), echo: text }) + '\n');
  await client.close();
  process.exit(0);
} catch (error) {
  process.stderr.write(`bridge-sdk-client: ${error?.stack || error}\n`);
  process.exit(1);
}
