// What the front-door end-to-end scripts (frontdoor_test.mjs,
// frontdoor_eras_test.mjs) share: their arguments, the SDK from the pinned
// npm tree, checks and their count, and starting and stopping inspectord
// and other children.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import process from 'node:process';

// `--name value` pairs of the command line; exits 2 with the usage line of
// `script` unless --inspectord, --source-dir and --case are all given.
export function scriptArgs(script) {
  const args = Object.fromEntries(
    process.argv.slice(2).reduce((pairs, arg, i, all) => {
      if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
      return pairs;
    }, []));
  if (!args.inspectord || !args['source-dir'] || !args.case) {
    console.error(`usage: ${script} --inspectord PATH --source-dir DIR --case NAME`);
    process.exit(2);
  }
  return args;
}

// The npm tree tools/npm pins, and a require() that loads from it.
export function npmTree(sourceDir) {
  const nodeModules = path.join(sourceDir, 'tools', 'npm', 'node_modules');
  return { nodeModules, sdkRequire: createRequire(path.join(nodeModules, '..', 'package.json')) };
}

// check(ok, what, detail) prints "ok: what" or "FAILED: what: detail" and
// counts the failures (checks.failures).
export const checks = { failures: 0 };
export function check(ok, what, detail = '') {
  if (ok) {
    console.log(`ok: ${what}`);
  } else {
    console.error(`FAILED: ${what}${detail ? `: ${detail}` : ''}`);
    checks.failures++;
  }
}

// Ends a child: SIGTERM, then SIGKILL if it has not exited within 10 s.
export function stop(child) {
  if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

// Resolves with the first match of `pattern` in the child's output (its
// streams set to utf8); rejects when the child cannot be started, exits
// first, or `ms` pass.
export function waitForOutput(child, pattern, what, ms = 30000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${seen}`)), ms);
    const onData = (chunk) => {
      seen += chunk;
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}:\n${seen}`)));
    child.once('error', (error) => reject(new Error(`${what} could not start: ${error.message}`)));
  });
}

// Starts inspectord on 127.0.0.1 port 0 (gRPC and HTTP) with `servers`
// imported from an mcp.json in `dir` and the extra `flags`. Its output goes
// to `onOutput` (and its stderr to ours with FRONTDOOR_TEST_VERBOSE set).
// Resolves with { child, base, token, pid } once it logs its REST address;
// stops it and rejects when it does not start.
export async function startInspectord({ inspectord, dir, servers, flags = [], onOutput = () => {} }) {
  const config = path.join(dir, 'mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  const child = spawn(inspectord, [
    '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0',
    '--db', path.join(dir, 'history.db'), '--token-file', path.join(dir, 'token'),
    '--import', config, ...flags,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', onOutput);
  child.stderr.on('data', (chunk) => {
    onOutput(chunk);
    if (process.env.FRONTDOOR_TEST_VERBOSE) process.stderr.write(chunk);
  });
  let match;
  try {
    match = await waitForOutput(child, /REST on (127\.0\.0\.1:\d+)/, 'inspectord');
  } catch (error) {
    await stop(child);
    throw error;
  }
  return {
    child,
    base: `http://${match[1]}`,
    token: fs.readFileSync(path.join(dir, 'token'), 'utf8').trim(),
    pid: child.pid,
  };
}

// Polls `probe` (async; a truthy value ends it) until it holds or `ms`
// pass; resolves with its last value.
export async function eventually(probe, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The text parts of a tools/call result, joined.
export function textOf(result) {
  return (result?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}
