#!/usr/bin/env node
// A protected MCP server and its authorization server, for inspectord's
// OAuth end-to-end tests. Both listen on 127.0.0.1 with ports chosen by the
// system, and the process prints one line on stderr once both accept
// connections:
//
//   {"listening": <mcp port>, "mcp": "<mcp url>", "issuer": "<issuer>"}
//
//   node server.mjs [--access-ttl SECONDS] [--resource-scopes-only]
//
// The authorization server is `oidc-provider` (pinned in tools/npm) with
// dynamic client registration, PKCE required, resource indicators (RFC 8707:
// tokens are issued for http://127.0.0.1:<port>/mcp and only for it),
// refresh token rotation, revocation (RFC 7009) and RFC 9207 `iss`. Its
// interaction step approves at once (user "alice") and grants exactly the
// scopes asked for, so a client can follow the redirects without a person.
//
// Two configurations of its scopes:
//  - by default the MCP scopes are also among the provider's own `scopes`
//    (its metadata's scopes_supported lists them, and a client may register
//    with them);
//  - --resource-scopes-only: the usual setup of oidc-provider in front of an
//    API: its `scopes` are openid and offline_access, and the MCP scopes
//    exist only for the resource (getResourceServerInfo), so a registration
//    naming them is refused with invalid_client_metadata.
//
// The MCP server (/mcp, Streamable HTTP, stateless; /sse and /messages,
// the legacy HTTP+SSE transport, a resource of its own at /sse) accepts only access
// tokens of that authorization server issued for its own URL: without one it
// answers 401 with `WWW-Authenticate: Bearer resource_metadata=...,
// scope="mcp:read"`; its RFC 9728 metadata is at
// /.well-known/oauth-protected-resource/mcp. Tools: `whoami` (scope
// mcp:read) and `admin_report`, which needs mcp:admin: without it the HTTP
// answer is 403 `insufficient_scope` (step up).
//
// For the tests, on the MCP port:
//   GET  /_fixture/state   tokens issued so far (every access and refresh
//                          token value, to look for them in logs) and
//                          counters (registrations made and refused,
//                          grants per type, revocations, rejected bearer
//                          tokens)
//   POST /_fixture/expire  ends every access token issued so far, as if
//                          they had expired (the next request gets 401)
//   GET  /_fixture/big     a 2 MiB JSON document
//   GET  /_fixture/stream  an event stream: one JSON event, then it stays
//                          open
//   POST /_fixture/drop-sse  ends every open legacy SSE stream (the client
//                          reconnects); counters.sseStreams counts the SSE
//                          streams opened
// Exits 0 on SIGTERM/SIGINT and when stdin (a pipe) closes.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'npm', 'node_modules'));
for (const pkg of ['oidc-provider', '@modelcontextprotocol/sdk']) {
  if (!fs.existsSync(path.join(nodeModules, pkg))) {
    process.stderr.write(`oauth-fixture: ${pkg} is not in ${nodeModules}; run tools/npm/install.sh\n`);
    process.exit(1);
  }
}
const fixtureRequire = createRequire(path.join(path.dirname(nodeModules), 'package.json'));
const { default: Provider, errors } = await import(
  path.join(nodeModules, 'oidc-provider', 'lib', 'index.js'));
const { Server } = fixtureRequire('@modelcontextprotocol/sdk/server/index.js');
const { StreamableHTTPServerTransport } = fixtureRequire('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { SSEServerTransport } = fixtureRequire('@modelcontextprotocol/sdk/server/sse.js');
const { CallToolRequestSchema, ListToolsRequestSchema } = fixtureRequire('@modelcontextprotocol/sdk/types.js');

let accessTtl = 3600;
let resourceScopesOnly = false;
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--access-ttl' && i + 1 < process.argv.length) {
    accessTtl = Number.parseInt(process.argv[++i], 10);
  } else if (process.argv[i] === '--resource-scopes-only') {
    resourceScopesOnly = true;
  } else {
    process.stderr.write('usage: server.mjs [--access-ttl SECONDS] [--resource-scopes-only]\n');
    process.exit(2);
  }
}

const READ_SCOPE = 'mcp:read';
const ADMIN_SCOPE = 'mcp:admin';
// The provider's own scopes (its scopes_supported, what a registration may
// name); the MCP scopes are always granted for the resource.
const providerScopes = resourceScopesOnly ? ['openid', 'offline_access']
  : ['openid', 'offline_access', READ_SCOPE, ADMIN_SCOPE];

async function listen(server) {
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return server.address().port;
}

const asServer = http.createServer();
const mcpServer = http.createServer();
const asPort = await listen(asServer);
const mcpPort = await listen(mcpServer);
const issuer = `http://127.0.0.1:${asPort}`;
const mcpOrigin = `http://127.0.0.1:${mcpPort}`;
const resourceUrl = `${mcpOrigin}/mcp`;
const metadataUrl = `${mcpOrigin}/.well-known/oauth-protected-resource/mcp`;
const sseUrl = `${mcpOrigin}/sse`;
const sseMetadataUrl = `${mcpOrigin}/.well-known/oauth-protected-resource/sse`;
// Open legacy SSE sessions by id.
const sseSessions = new Map();

// What the tests read back.
const issued = { accessTokens: [], refreshTokens: [] };
const counters = {
  registrations: 0, refusedRegistrations: 0, authorizationCodeGrants: 0, refreshTokenGrants: 0,
  revocations: 0, rejectedBearers: 0, insufficientScope: 0, toolCalls: 0,
  sseStreams: 0,
};

const provider = new Provider(issuer, {
  clients: [],
  scopes: providerScopes,
  responseTypes: ['code'],
  pkce: { required: () => true },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    AccessToken: accessTtl, AuthorizationCode: 60, Grant: 86400, Interaction: 600,
    RefreshToken: 86400, Session: 86400,
  },
  cookies: { keys: ['oauth-fixture-cookie-key'] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        if (resource !== resourceUrl && resource !== sseUrl) {
          throw new errors.InvalidTarget(`unknown resource ${resource}`);
        }
        return {
          scope: `${READ_SCOPE} ${ADMIN_SCOPE}`,
          audience: resource,
          accessTokenTTL: accessTtl,
          accessTokenFormat: 'opaque',
        };
      },
    },
  },
});

provider.on('registration_create.success', () => { counters.registrations += 1; });
provider.on('registration_create.error', () => { counters.refusedRegistrations += 1; });
provider.on('grant.success', (ctx) => {
  const type = ctx.oidc?.params?.grant_type;
  if (type === 'authorization_code') counters.authorizationCodeGrants += 1;
  if (type === 'refresh_token') counters.refreshTokenGrants += 1;
});
provider.on('access_token.saved', (token) => { issued.accessTokens.push(token.jti); });
provider.on('refresh_token.saved', (token) => { issued.refreshTokens.push(token.jti); });
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path === '/token/revocation' && ctx.method === 'POST' && ctx.status === 200) {
    counters.revocations += 1;
  }
});

// The interaction: log "alice" in and grant what was asked for, at once.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'GET' || !ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { params } = details;
  const accountId = 'alice';
  const grant = details.grantId ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  const asked = String(params.scope ?? '').split(' ').filter(Boolean);
  const resourceScopes = asked.filter((s) => s === READ_SCOPE || s === ADMIN_SCOPE);
  // By default the MCP scopes are among the provider's scopes too (so that
  // its metadata lists them): granted both ways.
  const oidcScopes = asked.filter((s) => providerScopes.includes(s));
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  if (params.resource && resourceScopes.length > 0) {
    for (const resource of [].concat(params.resource)) {
      grant.addResourceScope(resource, resourceScopes.join(' '));
    }
  }
  const grantId = await grant.save();
  await provider.interactionFinished(ctx.req, ctx.res,
    { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
});
asServer.on('request', provider.callback());

// --- the protected MCP server ----------------------------------------------

function challenge(res, status, error, scope, metadata = metadataUrl) {
  const parts = [`resource_metadata="${metadata}"`, `scope="${scope}"`];
  if (error) parts.unshift(`error="${error}"`);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'WWW-Authenticate': `Bearer ${parts.join(', ')}`,
  }).end(JSON.stringify({ error: error || 'unauthorized' }));
}

// The token's scopes when it is a live access token of our issuer for this
// resource, else undefined.
async function validBearer(req, resource = resourceUrl) {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer (\S+)$/i.exec(header);
  if (!match) return undefined;
  const token = await provider.AccessToken.find(match[1]);
  if (!token || token.isExpired) return undefined;
  const audience = [].concat(token.aud ?? []);
  if (!audience.includes(resource)) return undefined;
  return new Set(String(token.scope ?? '').split(' ').filter(Boolean));
}

function newMcpServer(scopes) {
  const server = new Server({ name: 'oauth-fixture', version: '1.0.0' },
    { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      { name: 'whoami', description: 'The user and scopes of the bearer token',
        inputSchema: { type: 'object', properties: {} } },
      { name: 'admin_report', description: 'Needs the mcp:admin scope',
        inputSchema: { type: 'object', properties: {} } },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    counters.toolCalls += 1;
    const name = request.params.name;
    const text = name === 'whoami' ? `alice with ${[...scopes].sort().join(' ')}`
      : 'admin report: all systems nominal';
    return { content: [{ type: 'text', text }] };
  });
  return server;
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function json(res, status, value) {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(value));
}

async function handleMcp(req, res, url) {
  if (url.pathname === '/.well-known/oauth-protected-resource/mcp' ||
      url.pathname === '/.well-known/oauth-protected-resource') {
    return json(res, 200, {
      resource: resourceUrl,
      authorization_servers: [issuer],
      scopes_supported: [READ_SCOPE, ADMIN_SCOPE],
      bearer_methods_supported: ['header'],
    });
  }
  if (url.pathname === '/_fixture/state' && req.method === 'GET') {
    return json(res, 200, { ...issued, counters });
  }
  if (url.pathname === '/_fixture/expire' && req.method === 'POST') {
    let ended = 0;
    for (const jti of issued.accessTokens) {
      const token = await provider.AccessToken.find(jti);
      if (token) { await token.destroy(); ended += 1; }
    }
    return json(res, 200, { ended });
  }
  if (url.pathname === '/_fixture/big' && req.method === 'GET') {
    return json(res, 200, { padding: 'x'.repeat(2 * 1024 * 1024) });
  }
  if (url.pathname === '/_fixture/stream' && req.method === 'GET') {
    // One JSON event, then the stream stays open (as event streams do).
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    res.write(': hello\n\n');
    res.write(`event: message\ndata: ${JSON.stringify({ resource: resourceUrl, streamed: true })}\n\n`);
    return undefined;
  }
  if (url.pathname === '/.well-known/oauth-protected-resource/sse') {
    return json(res, 200, {
      resource: sseUrl,
      authorization_servers: [issuer],
      scopes_supported: [READ_SCOPE, ADMIN_SCOPE],
      bearer_methods_supported: ['header'],
    });
  }
  if (url.pathname === '/_fixture/drop-sse' && req.method === 'POST') {
    const dropped = sseSessions.size;
    for (const transport of sseSessions.values()) await transport.close();
    sseSessions.clear();
    return json(res, 200, { dropped });
  }
  if (url.pathname === '/sse' || url.pathname === '/messages') {
    // The legacy HTTP+SSE transport: every request needs a token for /sse.
    const sseScopes = await validBearer(req, sseUrl);
    if (!sseScopes) {
      if (req.headers.authorization) counters.rejectedBearers += 1;
      return challenge(res, 401, req.headers.authorization ? 'invalid_token' : '',
        READ_SCOPE, sseMetadataUrl);
    }
    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      sseSessions.set(transport.sessionId, transport);
      counters.sseStreams += 1;
      res.on('close', () => { sseSessions.delete(transport.sessionId); });
      await newMcpServer(sseScopes).connect(transport);
      return undefined;
    }
    const transport = sseSessions.get(url.searchParams.get('sessionId') ?? '');
    if (url.pathname !== '/messages' || req.method !== 'POST' || !transport) {
      return json(res, 404, { error: 'no such SSE session' });
    }
    return transport.handlePostMessage(req, res, JSON.parse(await readBody(req)));
  }
  if (url.pathname !== '/mcp') return json(res, 404, { error: 'not found' });

  const scopes = await validBearer(req);
  if (!scopes) {
    if (req.headers.authorization) counters.rejectedBearers += 1;
    return challenge(res, 401, req.headers.authorization ? 'invalid_token' : '', READ_SCOPE);
  }
  if (req.method !== 'POST') {
    return json(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'POST only' }, id: null });
  }
  const body = JSON.parse(await readBody(req));
  const messages = [].concat(body);
  const wantsAdmin = messages.some((m) => m?.method === 'tools/call' && m?.params?.name === 'admin_report');
  if (!scopes.has(READ_SCOPE) || (wantsAdmin && !scopes.has(ADMIN_SCOPE))) {
    counters.insufficientScope += 1;
    return challenge(res, 403, 'insufficient_scope',
      wantsAdmin ? `${READ_SCOPE} ${ADMIN_SCOPE}` : READ_SCOPE);
  }
  // Stateless: one server and transport per request.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined,
    enableJsonResponse: true });
  const server = newMcpServer(scopes);
  res.on('close', () => { transport.close(); server.close(); });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

mcpServer.on('request', (req, res) => {
  const url = new URL(req.url, mcpOrigin);
  handleMcp(req, res, url).catch((error) => {
    process.stderr.write(`oauth-fixture: ${req.method} ${url.pathname}: ${error?.stack ?? error}\n`);
    if (!res.headersSent) json(res, 500, { error: 'internal error' });
    else res.end();
  });
});

function stop() {
  asServer.close();
  mcpServer.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (!process.stdin.isTTY) {
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
}

process.stderr.write(`${JSON.stringify({ listening: mcpPort, mcp: resourceUrl, issuer })}\n`);
