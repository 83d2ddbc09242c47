#!/usr/bin/env node
// A standard MCP client logging in to OAuth-protected MCP endpoints with
// nothing but their URLs: the TypeScript SDK 1.x client with its OAuth
// client provider. For each URL it connects, meets the 401, lets the SDK
// discover the Protected Resource Metadata and the authorization server,
// register itself (dynamic client registration) and start PKCE; the
// "browser" is this script, which follows the authorization URL's redirects
// with a cookie jar (the provider approves at once) up to the redirect URI,
// hands the code to the SDK, connects again, lists the tools and calls the
// tool `echo`. Then it prints one JSON line:
//   {"doors": [{"url": "...", "tools": [names], "token": "...",
//               "text": "<echo's answer>" | "error": {code, message, data}}]}
//
//   node team_login_peer.mjs MESSAGE URL [URL ...]
//
// Exits 0 when it printed that line, 1 otherwise (the reason on stderr).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '..', '..', 'tools', 'npm', 'package.json'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { UnauthorizedError } = require('@modelcontextprotocol/sdk/client/auth.js');

const [message, ...urls] = process.argv.slice(2);
if (!message || urls.length === 0) {
  console.error('usage: team_login_peer.mjs MESSAGE URL [URL ...]');
  process.exit(1);
}

// Never listened on: the "browser" stops at this URL and reads the code.
const REDIRECT = 'http://127.0.0.1:9/callback';

// An OAuthClientProvider that keeps everything in memory.
class MemoryProvider {
  constructor() { this.authorizationUrl = undefined; }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return {
      client_name: 'team-login-peer',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() { return this.client; }
  saveClientInformation(info) { this.client = info; }
  tokens() { return this.saved; }
  saveTokens(tokens) { this.saved = tokens; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }
}

// Follows `start` through its redirects, with cookies, until the redirect
// URI; the authorization code it carries.
async function followToCode(start) {
  const jar = new Map();
  let url = new URL(start);
  for (let hop = 0; hop < 10; hop++) {
    if (url.href.startsWith(REDIRECT)) {
      const code = url.searchParams.get('code');
      if (!code) throw new Error(`no code at the redirect URI: ${url.href}`);
      return code;
    }
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    const setCookies = response.headers.getSetCookie?.() ?? [];
    for (const line of setCookies) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq > 0) jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) {
      throw new Error(`${url.href} answered ${response.status}: ${(await response.text()).slice(0, 500)}`);
    }
    url = new URL(location, url);
  }
  throw new Error('too many redirects');
}

async function callThrough(url) {
  const provider = new MemoryProvider();
  const first = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const client = new Client({ name: 'team-login-peer', version: '1.0.0' });
  try {
    await client.connect(first);
    throw new Error(`${url} let the client in without logging in`);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  if (!provider.authorizationUrl) throw new Error('the SDK did not start an authorization');
  await first.finishAuth(await followToCode(provider.authorizationUrl));

  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  const logged = new Client({ name: 'team-login-peer', version: '1.0.0' });
  await logged.connect(transport);
  const tools = (await logged.listTools()).tools.map((tool) => tool.name);
  const door = { url, tools, token: provider.tokens()?.access_token ?? '' };
  try {
    const result = await logged.callTool({ name: 'echo', arguments: { message } });
    door.text = result.content?.map((part) => part.text ?? '').join('') ?? '';
  } catch (error) {
    // A JSON-RPC error (a policy's denial): its code, message and data.
    door.error = { code: error?.code, message: error?.message, data: error?.data };
  }
  await transport.terminateSession().catch(() => {});
  await logged.close();
  return door;
}

try {
  const doors = [];
  for (const url of urls) doors.push(await callThrough(url));
  console.log(JSON.stringify({ doors }));
  process.exit(0);
} catch (error) {
  console.error(`team_login_peer: ${error?.stack ?? error}`);
  process.exit(1);
}
