// Finds the pinned MCP SDK for the Node servers under tools/ (installed in
// tools/npm/node_modules by install.sh, or in the folder an environment
// variable names) and returns a require() that loads its CommonJS entry
// points:
//
//   import { sdkRequire } from '../npm/mcp-sdk.mjs';
//   const sdk = sdkRequire('fixture-server', 'FIXTURE_NODE_MODULES');
//   const { Server } = sdk('@modelcontextprotocol/sdk/server/index.js');
//
// Without the SDK it says so on stderr, naming install.sh, and exits 1.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

// `who` prefixes the message; `envName` names the variable that may point
// at another node_modules.
export function sdkRequire(who, envName) {
  const nodeModules = path.resolve(process.env[envName] ||
    path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules'));
  if (!fs.existsSync(path.join(nodeModules, '@modelcontextprotocol', 'sdk'))) {
    process.stderr.write(`${who}: the MCP SDK is not in ${nodeModules}; run tools/npm/install.sh\n`);
    process.exit(1);
  }
  return createRequire(path.join(path.dirname(nodeModules), 'package.json'));
}
