// A desktop MCP client as the stdio proxy sees it: the MCP TypeScript SDK's
// Client over StdioClientTransport launches `inspectorctl proxy NAME` (or
// whatever a Claude Desktop file's entry says, --claude-config) and:
//   1. lists the tools and calls echo;
//   2. calls sample, elicit and roots, so the server asks its client for
//      sampling, elicitation and roots through the proxy, and answers them
//      with this client's handlers;
//   3. closes: stdin ends, and the proxy must exit 0 by itself (the SDK
//      signals it after 2 s otherwise).
// Prints one JSON line on stdout ({"ok": true, "exitCode": 0, ...}); each
// check also goes to stderr. Exits 0 when every check passed, 1 otherwise.
//
//   node proxy_client.mjs --node-modules DIR
//        (--command PATH --args JSON | --claude-config FILE --server NAME)
import path from 'node:path';
import fs from 'node:fs';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, arg, i, all) => {
    if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
    return pairs;
  }, []));
if (!args['node-modules'] || !(args.command || args['claude-config'])) {
  console.error('usage: proxy_client.mjs --node-modules DIR (--command PATH --args JSON | --claude-config FILE --server NAME)');
  process.exit(2);
}
const sdk = (file) => import(pathToFileURL(path.join(
  args['node-modules'], '@modelcontextprotocol', 'sdk', 'dist', 'esm', file)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const {
  CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema,
} = await sdk('types.js');

let command = args.command;
let commandArgs = args.args ? JSON.parse(args.args) : [];
if (args['claude-config']) {
  const file = JSON.parse(fs.readFileSync(args['claude-config'], 'utf8'));
  const entry = file.mcpServers?.[args.server];
  if (!entry) {
    console.error(`no entry ${args.server} in ${args['claude-config']}`);
    process.exit(1);
  }
  command = entry.command;
  commandArgs = entry.args ?? [];
}

let failures = 0;
const seen = { sampling: 0, elicitation: 0, roots: 0 };
function check(ok, what) {
  if (ok) {
    console.error(`ok: ${what}`);
  } else {
    console.error(`FAILED: ${what}`);
    failures++;
  }
}
const textOf = (result) => result?.content?.find((c) => c.type === 'text')?.text;

const client = new Client(
  { name: 'proxy-e2e-client', version: '1.0.0' },
  { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  seen.sampling++;
  const last = request.params.messages.at(-1);
  return {
    role: 'assistant',
    content: { type: 'text', text: `sampled: ${last?.content?.text}` },
    model: 'proxy-e2e', stopReason: 'endTurn',
  };
});
client.setRequestHandler(ElicitRequestSchema, async () => {
  seen.elicitation++;
  return { action: 'accept', content: { name: 'Ada', age: 36, color: 'green' } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  seen.roots++;
  return { roots: [{ uri: 'file:///tmp/proxy-e2e-root', name: 'proxy-e2e-root' }] };
});

// Launched from a client's file, the command gets no inspector settings
// from the environment: the entry must say everything.
const env = { ...process.env };
if (args['claude-config']) {
  for (const name of ['INSPECTOR_ADDR', 'INSPECTOR_TOKEN', 'INSPECTOR_TOKEN_FILE']) delete env[name];
}
const transport = new StdioClientTransport({
  command, args: commandArgs, env, stderr: 'pipe',
});
let proxyStderr = '';
transport.stderr?.on('data', (chunk) => { proxyStderr += chunk; });
let exitCode = null;
let exitSignal = null;
try {
  await client.connect(transport);
  const child = transport._process;
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    exitCode = code;
    exitSignal = signal;
    resolve();
  }));
  check(client.getServerVersion()?.name === 'inspectord-fixture',
    `initialize through the proxy: server ${JSON.stringify(client.getServerVersion())}`);

  const tools = await client.listTools();
  check(tools.tools.some((t) => t.name === 'echo'), `tools/list has echo (${tools.tools.length} tools)`);

  const echo = await client.callTool({ name: 'echo', arguments: { message: 'through the proxy' } });
  check(textOf(echo) === 'through the proxy', `echo answered ${JSON.stringify(textOf(echo))}`);

  // Requests in flight together: their answers may come in any order.
  const [sample, elicit, roots] = await Promise.all([
    client.callTool({ name: 'sample', arguments: { prompt: 'hello proxy' } }),
    client.callTool({ name: 'elicit', arguments: { message: 'who?' } }),
    client.callTool({ name: 'roots', arguments: {} }),
  ]);
  check(textOf(sample) === 'sampled: hello proxy', `sample answered ${JSON.stringify(textOf(sample))}`);
  const elicited = JSON.parse(textOf(elicit) ?? '{}');
  check(elicited.action === 'accept' && elicited.content?.name === 'Ada',
    `elicit answered ${textOf(elicit)}`);
  check((textOf(roots) ?? '').includes('proxy-e2e-root'), `roots answered ${textOf(roots)}`);
  check(seen.sampling === 1 && seen.elicitation === 1 && seen.roots >= 1,
    `the client answered the server's requests ${JSON.stringify(seen)}`);

  // An unknown tool is the server's JSON-RPC error, passed through as is.
  let unknownError = null;
  try {
    await client.callTool({ name: 'no-such-tool', arguments: {} });
  } catch (error) {
    unknownError = error;
  }
  check(unknownError?.code === -32602, `unknown tool gives the server's error ${unknownError?.code}`);

  await client.close();
  await exited;
  check(exitCode === 0, `the proxy exited ${exitCode} (signal ${exitSignal}) after stdin closed`);
} catch (error) {
  check(false, `unexpected error: ${error?.stack ?? error}`);
  await client.close().catch(() => {});
}
if (failures > 0 && proxyStderr) console.error(`proxy stderr:\n${proxyStderr}`);
console.log(JSON.stringify({ ok: failures === 0, exitCode, exitSignal, seen, proxyStderr }));
process.exit(failures === 0 ? 0 : 1);
