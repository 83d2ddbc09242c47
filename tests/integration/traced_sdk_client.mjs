// An MCP client made with the MCP TypeScript SDK (1.x, tools/npm) that
// starts a trace: connects over Streamable HTTP to URL, calls `echo` with
// a W3C traceparent, and prints one JSON line {"structured": ...} with the
// result's structuredContent (the fixture's FIXTURE_ECHO_META puts the
// _meta the server received there). Exits 1 with the error on stderr if
// anything fails.
//
//   node traced_sdk_client.mjs URL [--meta TRACEPARENT]
//                                  [--header TRACEPARENT] [--token TOKEN]
//
// --meta puts the traceparent in the call's params._meta (the MCP semantic
// conventions' propagation); --header sends it as the HTTP traceparent
// header of every request instead.
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tools', 'npm', 'node_modules'));
const sdkRequire = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/streamableHttp.js');

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : '';
};
const url = new URL(args[0]);
const meta = option('--meta');
const header = option('--header');
const token = option('--token');

const headers = {};
if (header) headers.traceparent = header;
if (token) headers.Authorization = `Bearer ${token}`;
const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
const client = new Client({ name: 'traced-sdk-client', version: '1.0.0' });

try {
  await client.connect(transport);
  const params = { name: 'echo', arguments: { message: 'traced' } };
  if (meta) params._meta = { traceparent: meta };
  const result = await client.callTool(params);
  process.stdout.write(JSON.stringify({ structured: result.structuredContent ?? null }) + '\n');
  await client.close();
  process.exit(0);
} catch (error) {
  process.stderr.write(`traced-sdk-client: ${error?.stack || error}\n`);
  process.exit(1);
}
