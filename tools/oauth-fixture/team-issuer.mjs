#!/usr/bin/env node
// A team's identity provider for inspectord's front doors and conversions
// as OAuth resource servers (--frontdoor-issuer): `oidc-provider` (pinned in
// tools/npm) alone, listening on 127.0.0.1 with a port chosen by the
// system. It prints one line on stderr once it accepts connections:
//
//   {"listening": <port>, "issuer": "<issuer>"}
//
//   node team-issuer.mjs [--scope SCOPE]   (default scope: mcp:tools)
//
// Dynamic client registration, PKCE required, resource indicators (RFC
// 8707): a token is issued for one resource, any http URL on 127.0.0.1 or
// localhost (the doors the test starts), as a JWT access token (RFC 9068:
// typ at+jwt, RS256 with a key made at start and published in the JWKS),
// whose aud is that resource and whose scope is what was asked of SCOPE.
// Its interaction step logs "alice" in and grants what was asked at once,
// so a client can follow the redirects without a person.
//
// For the tests: GET /_fixture/state gives counters (registrations,
// authorization code grants, access tokens issued).
// Exits 0 on SIGTERM/SIGINT and when stdin (a pipe) closes.

import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const nodeModules = path.resolve(process.env.FIXTURE_NODE_MODULES ||
  path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'npm', 'node_modules'));
if (!fs.existsSync(path.join(nodeModules, 'oidc-provider'))) {
  process.stderr.write(`team-issuer: oidc-provider is not in ${nodeModules}; run tools/npm/install.sh\n`);
  process.exit(1);
}
const { default: Provider, errors } = await import(
  path.join(nodeModules, 'oidc-provider', 'lib', 'index.js'));

let scope = 'mcp:tools';
for (let i = 2; i < process.argv.length; i++) {
  if (process.argv[i] === '--scope' && i + 1 < process.argv.length) {
    scope = process.argv[++i];
  } else {
    process.stderr.write('usage: team-issuer.mjs [--scope SCOPE]\n');
    process.exit(2);
  }
}

const server = http.createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ format: 'jwk' });
const counters = { registrations: 0, authorizationCodeGrants: 0, accessTokens: 0 };

// A door this test runs: http on the loopback interface, with a port.
function isLoopbackResource(resource) {
  try {
    const url = new URL(resource);
    return url.protocol === 'http:' && url.port !== '' &&
      (url.hostname === '127.0.0.1' || url.hostname === 'localhost');
  } catch {
    return false;
  }
}

const provider = new Provider(issuer, {
  clients: [],
  jwks: { keys: [{ ...signingKey, kid: 'team-1', use: 'sig', alg: 'RS256' }] },
  scopes: ['openid', 'offline_access', scope],
  responseTypes: ['code'],
  pkce: { required: () => true },
  ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, Interaction: 600, Session: 3600 },
  cookies: { keys: ['team-issuer-cookie-key'] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, resource) => {
        if (!isLoopbackResource(resource)) {
          throw new errors.InvalidTarget(`unknown resource ${resource}`);
        }
        return {
          scope,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

provider.on('registration_create.success', () => { counters.registrations += 1; });
provider.on('grant.success', (ctx) => {
  if (ctx.oidc?.params?.grant_type === 'authorization_code') counters.authorizationCodeGrants += 1;
});
provider.on('access_token.issued', () => { counters.accessTokens += 1; });

// The interaction: log "alice" in and grant what was asked for, at once.
provider.use(async (ctx, next) => {
  if (ctx.method !== 'GET' || !ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const { params } = details;
  const accountId = 'alice';
  const grant = details.grantId ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId, clientId: params.client_id });
  const asked = String(params.scope ?? '').split(' ').filter(Boolean);
  // The door's scope is among the provider's own scopes too (so that a
  // client may register with it): granted both ways.
  const oidcScopes = asked.filter((s) => ['openid', 'offline_access', scope].includes(s));
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  if (params.resource && asked.includes(scope)) {
    for (const resource of [].concat(params.resource)) grant.addResourceScope(resource, scope);
  }
  const grantId = await grant.save();
  await provider.interactionFinished(ctx.req, ctx.res,
    { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
});

const callback = provider.callback();
server.on('request', (req, res) => {
  if (req.url === '/_fixture/state' && req.method === 'GET') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ counters }));
    return;
  }
  callback(req, res);
});

function stop() {
  server.close();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
if (!process.stdin.isTTY) {
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
}

process.stderr.write(`${JSON.stringify({ listening: server.address().port, issuer })}\n`);
