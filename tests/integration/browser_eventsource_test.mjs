// The REST + SSE gateway as a browser sees it: headless Chromium (Debian's
// chromium package), driven over the DevTools protocol on a pipe, loads a
// page from a small HTTP server on 127.0.0.1 and, from there:
//   1. opens an EventSource on /api/events (token in the query, since an
//      EventSource cannot send headers), POSTs a ping to /mcp with fetch,
//      and must see the ping's request and response arrive as SSE events;
//   2. from a second page origin that is not in the CORS allowlist, the
//      same EventSource must fail and the same fetch must be refused, and
//      the daemon must not have forwarded that second ping.
// CORS is enforced by the browser, not by curl, so only a browser shows
// that the allowlist and the headers it answers with work together.
//
//   node browser_eventsource_test.mjs --inspectord PATH --fixture PATH
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';

import { Browser } from '../webui/devtools.mjs';
import { findChromium, parseArgs, TestRun } from '../webui/harness.mjs';

const args = parseArgs('browser_eventsource_test.mjs', { inspectord: 'PATH', fixture: 'PATH' });
const chromiumPath = findChromium(args);

// The whole test may take 60 s; then it fails rather than hangs.
const run = new TestRun('inspector-browser-', 60);
const { dir, children, check } = run;

// A page server on 127.0.0.1, port 0: its origin is what the browser sends.
function pageServer() {
  return new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end('<!doctype html><title>inspector browser test</title>');
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// Reads `stream` until a line contains `marker`; resolves with that line.
function waitForLine(stream, marker, what) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no "${marker}" within 20 s:\n${buffered}`)), 20000);
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      buffered += chunk;
      const line = buffered.split('\n').find((l) => l.includes(marker));
      if (line !== undefined) {
        clearTimeout(timer);
        resolve(line);
      }
    });
  });
}

// Opens `url` in a new tab and evaluates `expression` (a promise) there.
async function evaluateIn(devtools, url, expression) {
  const { targetId } = await devtools.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await devtools.send('Target.attachToTarget', { targetId, flatten: true });
  await devtools.send('Page.enable', {}, sessionId);
  const loaded = devtools.next('Page.loadEventFired', sessionId);
  await devtools.send('Page.navigate', { url }, sessionId);
  await loaded;
  const result = await devtools.send('Runtime.evaluate',
    { expression, awaitPromise: true, returnByValue: true }, sessionId);
  await devtools.send('Target.closeTarget', { targetId });
  if (result.exceptionDetails) {
    throw new Error(`page script threw: ${JSON.stringify(result.exceptionDetails)}`);
  }
  return result.result.value;
}

// The script each page runs: watch, ping, collect. Never rejects; reports.
// `pingId` is a string no timestamp or UUID can contain.
function pageScript(rest, serverId, token, pingId) {
  const idText = JSON.stringify({ id: pingId }).slice(1, -1);  // "id":"..."
  return `(async () => {
    const report = { opened: false, streamError: null, fetchError: null,
                     status: null, answer: null, events: [] };
    const events = new EventSource(${JSON.stringify(rest)} +
        '/api/events?serverId=' + ${JSON.stringify(serverId)} +
        '&token=' + ${JSON.stringify(token)});
    let sawAnswer;
    const answered = new Promise((resolve) => { sawAnswer = resolve; });
    events.onmessage = (e) => {
      const event = JSON.parse(e.data);
      report.events.push(event);
      const m = event.message;
      if (m && m.kind === 'response' && m.raw.includes(${JSON.stringify(idText)})) sawAnswer();
    };
    const opened = await new Promise((resolve) => {
      events.onopen = () => resolve(true);
      events.onerror = () => { report.streamError = 'readyState ' + events.readyState; resolve(false); };
      setTimeout(() => resolve(false), 10000);
    });
    report.opened = opened;
    try {
      const response = await fetch(${JSON.stringify(rest)} + '/mcp?serverId=' +
          ${JSON.stringify(serverId)}, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Session-Token': ${JSON.stringify(token)} },
        body: JSON.stringify({ jsonrpc: '2.0', id: ${JSON.stringify(pingId)}, method: 'ping' }),
      });
      report.status = response.status;
      report.answer = await response.json();
    } catch (error) {
      report.fetchError = String(error);
    }
    if (opened && report.status === 200) {
      await Promise.race([answered, new Promise((r) => setTimeout(r, 10000))]);
    }
    events.close();
    return report;
  })()`;
}

try {
  const allowed = await pageServer();
  const stranger = await pageServer();
  const allowedOrigin = `http://127.0.0.1:${allowed.address().port}`;
  const strangerOrigin = `http://127.0.0.1:${stranger.address().port}`;

  const daemon = spawn(args.inspectord, [
    '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0',
    '--db', path.join(dir, 'inspector.db'),
    '--token-file', path.join(dir, 'token'),
    '--cors-origin', allowedOrigin,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push({ child: daemon });
  const ready = await Promise.race([
    waitForLine(daemon.stdout, ' REST on ', 'inspectord'),
    waitForLine(daemon.stderr, ' REST on ', 'inspectord'),
  ]);
  const rest = 'http://' + ready.split('REST on ')[1].split(/\s/)[0];
  const token = fs.readFileSync(path.join(dir, 'token'), 'utf8').trim();

  const created = await fetch(`${rest}/config`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Session-Token': token },
    body: JSON.stringify({ name: 'fixture', transport: 'stdio', command: process.execPath,
                           args: [args.fixture, 'stdio'] }),
  });
  const server = await created.json();
  check(created.status === 200 && server.id, `POST /config created the fixture server (${created.status})`);

  const browser = spawn(chromiumPath, [
    '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
    '--no-default-browser-check', '--disable-extensions', '--remote-debugging-pipe',
    `--user-data-dir=${path.join(dir, 'profile')}`, 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
  children.push({ child: browser, group: true });
  let browserErrors = '';
  browser.stderr.setEncoding('utf8');
  browser.stderr.on('data', (chunk) => { browserErrors += chunk; });
  browser.on('exit', (code, signal) => {
    if (!run.stopping) console.error(`Chromium exited early (${code ?? signal}):\n${browserErrors}`);
  });
  const devtools = new Browser(browser);  // the web UI test's DevTools client
  await devtools.send('Browser.getVersion');

  // 1. From an allowed origin: the stream opens and carries the ping.
  const good = await evaluateIn(devtools, allowedOrigin + '/',
    pageScript(rest, server.id, token, 'browser-allowed'));
  check(good.opened, `EventSource opened from ${allowedOrigin} (${good.streamError ?? 'no error'})`);
  check(good.status === 200 && good.answer && good.answer.id === 'browser-allowed' && good.answer.result,
        `fetch POST /mcp answered the ping (${good.status}, ${JSON.stringify(good.answer) ?? good.fetchError})`);
  const mine = good.events.map((e) => e.message).filter((m) => m && m.raw.includes('"id":"browser-allowed"'));
  check(mine.some((m) => m.kind === 'request' && m.method === 'ping' && m.direction === 'CLIENT_TO_SERVER'),
        'the ping request arrived as an SSE event');
  check(mine.some((m) => m.kind === 'response' && m.direction === 'SERVER_TO_CLIENT'),
        'the ping response arrived as an SSE event');

  // 2. From an origin outside the allowlist: nothing gets through.
  const bad = await evaluateIn(devtools, strangerOrigin + '/',
    pageScript(rest, server.id, token, 'browser-refused'));
  check(!bad.opened && bad.events.length === 0,
        `EventSource from ${strangerOrigin} failed (${bad.streamError ?? 'opened'})`);
  check(bad.status === null && bad.fetchError !== null,
        `fetch POST /mcp from ${strangerOrigin} was refused (${bad.fetchError ?? bad.status})`);
  const history = await fetch(`${rest}/api/history?serverId=${server.id}`, {
    headers: { 'X-Session-Token': token },
  });
  const recorded = JSON.stringify(await history.json());
  check(history.status === 200 && recorded.includes('browser-allowed') &&
        !recorded.includes('browser-refused'),
        'the history has the allowed ping and not the refused one');

  allowed.close();
  stranger.close();
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
} finally {
  await run.end();
}
