// MCP Apps in the web UI end to end: headless Chromium (Debian's) drives a
// real inspectord (--http on port 0) with two App servers on stdio:
//   - @modelcontextprotocol/server-basic-vanillajs (tools/npm), declared
//     with clientCapabilities.apps: its initialize carries the extension;
//     its get-time tool is opened as an App from the Tools view, the App
//     renders (a screenshot in the run's directory, checked not blank), gets
//     the tool's result from the host, calls get-time itself (recorded, in
//     Live traffic, marked as the App's), and its open-link waits for the
//     user;
//   - @modelcontextprotocol/server-basic-react (tools/npm), the same App
//     built with React, a framework example: opened from the Tools view,
//     it renders (a screenshot, not blank), shows the host's tool result,
//     its own get-time call is recorded marked as the App's and found in
//     Live traffic by that mark (the detail's tree search), and from inside
//     its opaque origin it reads no cookie and cannot fetch the REST API
//     (the CSP's connect-src refuses it before any request);
//   - tools/app-fixture, whose App probes its sandbox: a fetch to an origin
//     its CSP does not list is blocked (the origin, a loopback server of
//     this test, is never reached), a listed one is reached, the daemon's
//     REST API (which the App lists too) is left out of the policy and not
//     reached, document.cookie gives nothing;
//     its second App (`studio`) asks for a dedicated origin and gets one
//     (app-<hash>.localhost on the sandbox port), has storage but not the
//     UI's cookie or API; its ui/download-file is saved only when the
//     user says so (Chromium's download directory) and refused otherwise;
//     its sampling/createMessage is answered by the user through the
//     host; and it stays open, not reloaded, while the tools list reloads;
// and from Node: the sandbox listener serves each document once and
// nothing else (no REST API, no UI, cookie or token notwithstanding), and
// the gateway refuses the sign-in cookie from the sandbox's origin.
// Screenshots at 1280x800 and 390x844 in --artifacts.
//
//   node apps_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import zlib from 'node:zlib';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED, LOW_CONTRAST } from './harness.mjs';

const args = parseArgs('apps_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { node22 } = sourcePaths(args.source);
const exampleApp = (name) => path.join(args.source, 'tools', 'npm', 'node_modules', '@modelcontextprotocol',
  name, 'dist', 'index.js');
const basicServer = exampleApp('server-basic-vanillajs');
const reactServer = exampleApp('server-basic-react');
const appFixture = path.join(args.source, 'tools', 'app-fixture', 'server.mjs');
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-apps-', 240);
const { dir, children, servers, check } = run;
const shoot = (page, name) => shootViews(page, args.artifacts, name);

function waitFor(p, expression, what, seconds = 45) {
  return p.waitFor(expression, what, seconds);
}

function press(page, selector, what = selector) {
  return waitFor(page, `(() => { const el = document.querySelector(${JSON.stringify(selector)});
    if (!el || el.disabled) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`, `${what} to click`);
}

// A loopback HTTP server that counts its requests and answers every origin.
async function countingServer() {
  const counter = { hits: 0 };
  const server = http.createServer((request, response) => {
    counter.hits++;
    response.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'text/plain' });
    response.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  counter.origin = `http://127.0.0.1:${server.address().port}`;
  return counter;
}

// Whether a PNG (8-bit RGB/RGBA, as Chromium writes them) shows more than
// one flat colour: its unfiltered rows hold more than a handful of values.
function pngIsBlank(png) {
  let offset = 8;
  const idat = [];
  while (offset < png.length) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (type === 'IDAT') idat.push(png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const seen = new Set();
  for (let i = 0; i < raw.length && seen.size < 16; i += 7) seen.add(raw[i]);
  return seen.size < 16;
}

let page = null;
// The console of the page and of the App frames, shown when a check fails.
const consoleLines = [];
try {
  const { signInUrl, base, token, rest } = await run.startDaemon(args.inspectord, [], 30);
  const addServer = async (config) => {
    const answer = await rest('POST', '/config', config);
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`adding ${config.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.id || answer.body.server?.id;
  };
  const allowed = await countingServer();
  const forbidden = await countingServer();

  const basicId = await addServer({
    name: 'basic-app', transport: 'stdio', command: node22, args: [basicServer, '--stdio'],
    clientCapabilities: { apps: true },
  });
  const reactId = await addServer({
    name: 'react-app', transport: 'stdio', command: node22, args: [reactServer, '--stdio'],
    clientCapabilities: { apps: true },
  });
  const probeId = await addServer({
    name: 'probe-app', transport: 'stdio', command: node22,
    args: [appFixture, '--allowed', allowed.origin, '--forbidden', `${forbidden.origin}/secret`, '--daemon', base],
  });

  for (const id of [basicId, reactId, probeId]) {
    const connected = await rest('POST', `/api/servers/${id}/connect`, {});
    if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${JSON.stringify(connected.body)}`);
  }

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  browser.child.on('exit', (code, signal) => {
    if (!run.stopping) console.error(`Chromium exited early (${code ?? signal}):\n${browser.stderr}`);
  });
  page = await browser.newPage();
  await page.viewport(1280, 800);
  // The App's frame, in a process of its own or not: its DevTools session
  // when it has one (out-of-process), else an isolated world in the page's.
  const frameSessions = [];
  browser.on('Target.attachedToTarget', (params, session) => {
    if (session === page.sessionId && params.targetInfo.type === 'iframe') frameSessions.push(params.sessionId);
  });
  browser.on('Runtime.consoleAPICalled', (params, session) => {
    consoleLines.push(`${session === page.sessionId ? 'page' : 'frame'} ${params.type}: ${params.args.map((a) => a.value ?? a.description ?? '').join(' ').slice(0, 300)}`);
  });
  browser.on('Runtime.exceptionThrown', (params, session) => {
    if (session !== page.sessionId) consoleLines.push(`frame exception: ${params.exceptionDetails.exception?.description || params.exceptionDetails.text}`);
  });
  browser.on('Target.attachedToTarget', (params) => {
    browser.send('Runtime.enable', {}, params.sessionId).catch(() => {});
  });
  await page.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
  const frameEval = async (expression) => {
    const params = { expression, awaitPromise: true, returnByValue: true };
    let result = null;
    const oop = frameSessions.at(-1);
    if (oop) result = await browser.send('Runtime.evaluate', params, oop).catch(() => null);
    if (!result || result.exceptionDetails) {
      const { frameTree } = await page.send('Page.getFrameTree');
      const child = (frameTree.childFrames || []).at(-1);
      if (child) {
        const { executionContextId } = await page.send('Page.createIsolatedWorld', { frameId: child.frame.id, worldName: 'apps-test' });
        result = await page.send('Runtime.evaluate', { ...params, contextId: executionContextId });
      }
    }
    if (!result || result.exceptionDetails) return undefined;
    return result.result.value;
  };
  const frameWait = async (expression, what, seconds = 30) => {
    const stop = Date.now() + seconds * 1000;
    while (Date.now() < stop) {
      const value = await frameEval(expression).catch(() => undefined);
      if (value) return value;
      await page.eval('new Promise((r) => setTimeout(r, 100))');
    }
    throw new Error(`timed out after ${seconds} s waiting in the App for ${what}`);
  };
  // The open App's frame as a PNG in the run's directory.
  const frameShot = async (name) => {
    const box = await page.eval(`(() => { const r = document.querySelector('.app-frame').getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`);
    const { data } = await page.send('Page.captureScreenshot', { format: 'png', clip: { ...box, scale: 1 } });
    const shot = path.join(dir, name);
    fs.writeFileSync(shot, Buffer.from(data, 'base64'));
    return fs.readFileSync(shot);
  };
  // The server's recorded tools/call requests that carry the App's mark
  // (_meta["inspector/app"]), waiting up to 10 s for the first.
  const appCalls = async (serverId) => {
    let marked = [];
    for (let i = 0; i < 100 && marked.length === 0; i++) {
      const calls = await rest('GET', `/api/messages?serverId=${serverId}&method=tools/call&limit=20`);
      marked = (calls.body?.messages || []).filter((m) => (m.raw || '').includes('"inspector/app"'));
      if (!marked.length) await new Promise((r) => setTimeout(r, 100));
    }
    return marked;
  };
  // Whether `serverId`'s initialize declared the Apps extension.
  const declaredApps = async (serverId) => {
    const initialize = await rest('GET', `/api/messages?serverId=${serverId}&method=initialize&limit=5`);
    return (initialize.body?.messages || []).some((m) => (m.raw || '').includes('io.modelcontextprotocol/ui'));
  };

  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');
  const cookies = (await page.send('Network.getCookies', { urls: [base] })).cookies;
  const cookie = cookies.find((c) => c.name.startsWith('inspector_session_'));
  check(!!cookie && cookie.httpOnly, 'the sign-in cookie is set, HttpOnly');

  // --- the basic App: opened from the Tools view ---------------------------------
  const openTool = async (serverId, toolName) => {
    await page.eval(`(() => { const s = document.querySelector('#server-select'); s.value = ${JSON.stringify(serverId)};
      s.dispatchEvent(new Event('change')); })()`);
    await page.eval(`location.hash = '#/explore'`);
    await waitFor(page, `document.querySelector('#title-explore')`, 'the explore view');
    await waitFor(page, `[...document.querySelectorAll('.item-list .item')].find((b) => b.textContent.includes(${JSON.stringify(toolName)}))`, `the tool ${toolName}`);
    await page.eval(`[...document.querySelectorAll('.item-list .item')].find((b) => b.textContent.includes(${JSON.stringify(toolName)})).click()`);
    await press(page, '#open-app', 'Open app');
  };
  await openTool(basicId, 'Get Time');
  const src = await waitFor(page, `document.querySelector('.app-frame')?.getAttribute('src')`, 'the App frame');
  const sandboxOrigin = new URL(src).origin;
  check(sandboxOrigin !== base && new URL(src).hostname === new URL(base).hostname,
    `the App is served from another origin (${sandboxOrigin}) than the UI (${base})`);
  const sandboxAttr = await page.eval(`document.querySelector('.app-frame').getAttribute('sandbox')`);
  check(sandboxAttr === 'allow-scripts allow-forms', `the frame is sandboxed without allow-same-origin (${sandboxAttr})`);
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('tool result sent to the App'))`,
    'the handshake and the tool result');
  const logText = await page.eval(`document.querySelector('.app-log').textContent`);
  check(/initialize from Get Time App/.test(logText) && /The App is initialized/.test(logText),
    `the App did ui/initialize and initialized (${logText.slice(0, 160)})`);
  const shownTime = await frameWait(`(() => { const t = document.getElementById('server-time')?.textContent || '';
    return /^\\d{4}-\\d\\d-\\d\\dT/.test(t) ? t : ''; })()`, 'the tool result in the App');
  check(!!shownTime, `the App shows the tool result the host sent (${shownTime})`);

  // It renders: a screenshot of the frame, in the run's directory, not blank.
  const png = await frameShot('basic-app.png');
  check(png.length > 1000 && !pngIsBlank(png), `the App renders (screenshot ${png.length} bytes, not one flat colour)`);
  await shoot(page, 'apps-basic');

  // The extension was declared to this server (clientCapabilities.apps).
  check(await declaredApps(basicId), 'initialize declared the io.modelcontextprotocol/ui extension to the App server');
  check(!await declaredApps(probeId), 'a server not configured for Apps is not told of the extension');

  // The App calls get-time itself: through the daemon, recorded, marked.
  await frameEval(`document.getElementById('get-time-btn').click(), true`);
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].filter((li) => li.textContent.includes('tools/call get-time')).length >= 1`,
    'the App\'s own tools/call in its log');
  const marked = await appCalls(basicId);
  check(marked.length >= 1 && /ui:\/\/get-time\/mcp-app\.html/.test(marked[0].raw),
    `the App's tools/call is recorded with _meta["inspector/app"] naming the App (${marked.length})`);
  const afterClick = await frameWait(`(() => { const t = document.getElementById('server-time')?.textContent || '';
    return t !== ${JSON.stringify(shownTime)} && /^\\d{4}-/.test(t) ? t : ''; })()`, 'the App\'s own call answered', 20);
  check(!!afterClick, `the App shows the answer of its own call (${afterClick})`);
  await page.click('#nav-timeline');
  await waitFor(page, `document.querySelector('#title-timeline')`, 'Live traffic');
  const rows = await waitFor(page, `(() => { const n = [...document.querySelectorAll('.tl-body .tl-row .c-method')]
    .filter((c) => c.textContent.includes('get-time')).length; return n >= 2 ? n : 0; })()`, 'the get-time calls in Live traffic');
  check(rows >= 2, `the host's and the App's get-time calls show in Live traffic (${rows} rows)`);

  // open-link waits for the user; refused, it is not opened.
  await openTool(basicId, 'Get Time');
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('The App is initialized'))`, 'the App again');
  await frameWait(`!!document.getElementById('open-link-btn')`, 'the open-link button');
  await frameEval(`document.getElementById('open-link-btn').click(), true`);
  const asked = await waitFor(page, `document.querySelector('.app-confirm')?.textContent`, 'the open-link confirmation');
  check(/modelcontextprotocol\.io/.test(asked), `the host asks before opening the App's link (${asked})`);
  const targetsBefore = (await browser.send('Target.getTargets')).targetInfos.filter((t) => t.type === 'page').length;
  await page.eval(`[...document.querySelectorAll('.app-confirm button')].find((b) => b.textContent.includes("Don't open")).click()`);
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('refused to open'))`, 'the refusal');
  const targetsAfter = (await browser.send('Target.getTargets')).targetInfos.filter((t) => t.type === 'page').length;
  check(targetsAfter === targetsBefore, `a refused link opens no page (${targetsBefore} -> ${targetsAfter})`);
  const lowContrast = await page.eval(LOW_CONTRAST);
  check(lowContrast.length === 0, `the App panel's text has enough contrast (WCAG AA)${lowContrast.length ? `: ${lowContrast.join(' ; ')}` : ''}`);
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of the App panel has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);
  await press(page, '.app-bar button:last-child', 'Close app');
  await waitFor(page, `!document.querySelector('.app-frame')`, 'the App to close');

  // --- the React example App: the same checks, where they apply ------------------
  // A framework example: React 19 bundled into its one document. Leaving
  // the Tools view for Live traffic closes it.
  await openTool(reactId, 'Get Time');
  const reactSrc = await waitFor(page, `document.querySelector('.app-frame')?.getAttribute('src')`, 'the React App frame');
  check(new URL(reactSrc).origin === sandboxOrigin, `the React App is served from the sandbox listener (${new URL(reactSrc).origin})`);
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('tool result sent to the App'))`,
    'the React App\'s handshake and tool result');
  const reactLog = await page.eval(`document.querySelector('.app-log').textContent`);
  check(/initialize from Get Time App/.test(reactLog) && /The App is initialized/.test(reactLog),
    `the React App did ui/initialize and initialized (${reactLog.slice(0, 160)})`);
  const reactShown = `(() => { const t = document.querySelector('main code')?.textContent || '';
    return /^\\d{4}-\\d\\d-\\d\\dT/.test(t) ? t : ''; })()`;
  const reactTime = await frameWait(reactShown, 'the tool result in the React App');
  check(!!reactTime, `the React App shows the tool result the host sent (${reactTime})`);
  const reactPng = await frameShot('react-app.png');
  check(reactPng.length > 1000 && !pngIsBlank(reactPng), `the React App renders (screenshot ${reactPng.length} bytes, not one flat colour)`);
  await shoot(page, 'apps-react');
  check(await declaredApps(reactId), 'initialize declared the extension to the React App server');

  // Its own get-time: recorded with the App's mark, and shown.
  await frameEval(`[...document.querySelectorAll('button')].find((b) => b.textContent === 'Get Server Time').click(), true`);
  const reactMarked = await appCalls(reactId);
  check(reactMarked.length >= 1 && /ui:\/\/get-time\/mcp-app\.html/.test(reactMarked[0].raw),
    `the React App's tools/call is recorded with _meta["inspector/app"] naming the App (${reactMarked.length})`);
  const reactAfter = await frameWait(`(() => { const t = ${reactShown}; return t !== ${JSON.stringify(reactTime)} ? t : ''; })()`,
    'the React App\'s own call answered', 20);
  check(!!reactAfter, `the React App shows the answer of its own call (${reactAfter})`);

  // From inside its opaque origin: no cookie, and the REST API refused by
  // the CSP (the resource lists no connect domain) before any request.
  const isolation = JSON.parse(await frameEval(`(async () => {
    const violations = [];
    const violated = new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => {
        violations.push({ blocked: e.blockedURI, directive: e.effectiveDirective }); resolve();
      });
      setTimeout(resolve, 5000);
    });
    let cookie;
    try { cookie = document.cookie; } catch (e) { cookie = 'refused: ' + e.name; }
    const api = await fetch(${JSON.stringify(`${base}/api/servers`)}, { credentials: 'include' })
      .then((r) => 'answered ' + r.status, (e) => 'refused: ' + e.name);
    await violated;
    return JSON.stringify({ origin: self.origin, cookie, api, violations });
  })()`) || '{}');
  check(isolation.origin === 'null', `the React App runs in an opaque origin (${isolation.origin})`);
  check(typeof isolation.cookie === 'string' && !/inspector_session/.test(isolation.cookie),
    `the React App cannot read the UI's cookie (${isolation.cookie})`);
  check(/^refused/.test(isolation.api || '') &&
    (isolation.violations || []).some((v) => v.directive === 'connect-src' && String(v.blocked).startsWith(base)),
  `the React App cannot call the REST API: its CSP refuses it (${JSON.stringify(isolation)})`);

  // Live traffic: the App's call, found by its JSON-RPC id, carries the mark.
  await page.click('#nav-timeline');
  await waitFor(page, `document.querySelector('#title-timeline')`, 'Live traffic');
  const reactRows = await waitFor(page, `(() => { const n = [...document.querySelectorAll('.tl-body .tl-row')]
    .filter((r) => r.querySelector('.c-server')?.textContent === 'react-app' && r.querySelector('.c-method')?.textContent.includes('get-time')).length;
    return n >= 2 ? n : 0; })()`, 'the React App\'s get-time calls in Live traffic');
  check(reactRows >= 2, `the host's and the React App's get-time calls show in Live traffic (${reactRows} rows)`);
  await waitFor(page, `(() => { const row = [...document.querySelectorAll('.tl-body .tl-row')].find((r) =>
      r.querySelector('.c-server')?.textContent === 'react-app' && r.querySelector('.c-kind')?.textContent === 'request' &&
      ${JSON.stringify(reactMarked.map((m) => m.jsonrpcId))}.includes(r.querySelector('.c-id')?.textContent));
    if (!row) return false; row.click(); return true; })()`, 'the React App\'s call to select');
  const markPaths = await waitFor(page, `(() => { const box = document.querySelector('.msg-detail .jt-box');
    const search = box?.querySelector('.jt-search'); if (!search) return '';
    search.value = 'inspector/app'; search.dispatchEvent(new Event('input'));
    return [...box.querySelectorAll('.jt-row.found')].map((r) => r.dataset.path).join(' '); })()`, 'the App\'s mark in the detail');
  check(markPaths.split(' ').includes('/params/_meta/inspector~1app'),
    `the call's detail in Live traffic shows it came from the App (${markPaths})`);

  // --- the probe App: what its sandbox lets it do --------------------------------
  await openTool(probeId, 'probe');
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('"probe": "done"'))`,
    'the probe App to finish', 60);
  await waitFor(page, `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes('"probe": "tool-result"'))`,
    'the tool result in the probe App');
  const probes = await page.eval(`[...document.querySelectorAll('.app-log li pre')].map((p) => { try { return JSON.parse(p.textContent); } catch { return null; } })
    .filter((d) => d && d.probe)`);
  const probe = (name) => probes.find((d) => d.probe === name) || {};
  check(probe('forbidden').reached === false && forbidden.hits === 0,
    `a fetch to an origin the CSP does not list is blocked and never arrives (${JSON.stringify(probe('forbidden'))}, ${forbidden.hits} hits)`);
  check(probes.some((d) => d.probe === 'violation' && String(d.blocked).startsWith(forbidden.origin) && d.directive === 'connect-src'),
    'the browser reports the connect-src violation');
  check(probe('allowed').reached === true && allowed.hits >= 1,
    `a fetch to an origin in connectDomains is allowed (${JSON.stringify(probe('allowed'))}, ${allowed.hits} hits)`);
  check(probe('rest-api').reached === false,
    `the App cannot call the REST API, though it lists it in connectDomains (${JSON.stringify(probe('rest-api'))})`);
  check(probe('cookie').readable === false || !/inspector_session/.test(probe('cookie').value || ''),
    `the App cannot read the UI's cookie (${JSON.stringify(probe('cookie'))})`);
  check(probe('tools/call').ok === true && /from app/.test(probe('tools/call').text || ''),
    `the App's own tools/call is answered (${JSON.stringify(probe('tools/call'))})`);
  const refusedNote = await page.eval(`document.querySelector('.app-panel .warn')?.textContent || ''`);
  check(refusedNote.includes(base), `the UI says the daemon's own origin was left out of the App's policy (${refusedNote})`);
  await shoot(page, 'apps-probe');
  check(probe('tool-input').params?.arguments !== undefined && /probe called from the host/.test(JSON.stringify(probe('tool-result'))),
    `the App got the tool's input and result from the host (${JSON.stringify(probe('tool-result')).slice(0, 120)})`);

  // Cancellation. Each call's ending is read from the daemon: what it lists
  // in flight, and the notifications/cancelled it recorded to the server.
  const restUntil = async (read, what, seconds = 20) => {
    const stop = Date.now() + seconds * 1000;
    for (;;) {
      const value = await read();
      if (value) return value;
      if (Date.now() > stop) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // The tools/call whose (JSON) id starts with `prefix`, once the daemon lists it.
  const inflightCall = (prefix) => restUntil(async () => ((await rest('GET', `/api/servers/${probeId}/requests`)).body?.requests || [])
    .find((r) => r.method === 'tools/call' && String(r.requestId).startsWith(prefix)), `${prefix}… in flight at the server`);
  const cancelsSent = async () => ((await rest('GET', `/api/messages?serverId=${probeId}&method=notifications/cancelled&limit=20`)).body?.messages || []);
  const appLog = (text) => `[...document.querySelectorAll('.app-log li')].some((li) => li.textContent.includes(${JSON.stringify(text)}))`;

  // The App cancels its own call: its notifications/cancelled names its
  // own id, which the host maps to the id it sent the daemon.
  let sentBefore = (await cancelsSent()).length;
  await frameEval(`document.getElementById('slow-call').click(), true`);
  const appCall = await inflightCall('"app-');
  await frameEval(`document.getElementById('cancel-slow').click(), true`);
  await waitFor(page, appLog('"probe": "slow-call"'), 'the App\'s slow call to end');
  const slow = await page.eval(`[...document.querySelectorAll('.app-log li pre')].map((p) => { try { return JSON.parse(p.textContent); } catch { return null; } })
    .find((d) => d && d.probe === 'slow-call') || null`);
  let sent = await restUntil(async () => { const all = await cancelsSent(); return all.length > sentBefore && all; }, 'the App\'s cancel at the server').catch(() => []);
  check(sent.length > sentBefore && slow && slow.error && !slow.result,
    `the App's own notifications/cancelled cancels its call at the server (${appCall.requestId}: ${sent.length - sentBefore} sent; the App got ${JSON.stringify(slow && slow.error)})`);

  // From the host, in flight: the daemon lists the call before Cancel is pressed.
  await press(page, '.app-bar button:last-child', 'Close app');
  await waitFor(page, `!document.querySelector('.app-frame')`, 'the probe App to close');
  const delayInput = await page.eval(`[...document.querySelectorAll('.tool-form label')].find((l) => l.textContent.trim().startsWith('delayMs'))?.htmlFor`);
  await page.fill(`#${delayInput}`, '60000');
  sentBefore = (await cancelsSent()).length;
  await press(page, '#open-app', 'Open app (slow call)');
  await waitFor(page, appLog('"probe": "tool-input"'), 'the slow call\'s input');
  const hostCall = await inflightCall('"ui-app-');
  await press(page, '.app-bar button.danger', 'Cancel tool call');
  await waitFor(page, appLog('"probe": "tool-cancelled"'), 'the App told of the cancellation');
  sent = await restUntil(async () => { const all = await cancelsSent(); return all.length > sentBefore && all; }, 'the host\'s cancel at the server').catch(() => []);
  check(sent.length > sentBefore, `the cancelled call was cancelled at the server too (${hostCall.requestId}: ${sent.length - sentBefore} notifications/cancelled)`);
  await waitFor(page, appLog('cancelled: the server was sent notifications/cancelled'), 'the host\'s note of the cancel');
  const afterCancel = await page.eval(`[...document.querySelectorAll('.app-log li')].filter((li) => li.textContent.includes('"probe": "tool-result"')).length`);
  check(afterCancel === 0, `no result reaches the App for a cancelled call (${afterCancel})`);

  // From the host, before the call reaches the daemon: the browser holds the
  // tool's POST /mcp until the first cancel is answered (nothing to cancel
  // yet); the UI asks again and the call still ends cancelled.
  await press(page, '.app-bar button:last-child', 'Close app (slow call)');
  await waitFor(page, `!document.querySelector('.app-frame')`, 'the slow probe App to close');
  const held = [];
  let holding = true;
  browser.on('Fetch.requestPaused', (params, session) => {
    if (session !== page.sessionId) return;
    if (holding && /"id":"ui-app-/.test(params.request.postData || '')) held.push(params.requestId);
    else page.send('Fetch.continueRequest', { requestId: params.requestId }).catch(() => {});
  });
  const cancelIds = [];
  const finished = new Set();
  browser.on('Network.requestWillBeSent', (params, session) => {
    if (session === page.sessionId && !holding && params.request.url.endsWith('/cancel')) cancelIds.push(params.requestId);
  });
  browser.on('Network.loadingFinished', (params, session) => {
    if (session === page.sessionId) finished.add(params.requestId);
  });
  await page.send('Fetch.enable', { patterns: [{ urlPattern: '*/mcp?serverId=*', requestStage: 'Request' }] });
  sentBefore = (await cancelsSent()).length;
  await press(page, '#open-app', 'Open app (held call)');
  await waitFor(page, appLog('"probe": "tool-input"'), 'the held call\'s input');
  await restUntil(async () => held.length > 0, 'the browser to hold the tool\'s POST /mcp');
  holding = false;
  await press(page, '.app-bar button.danger', 'Cancel tool call (held)');
  await restUntil(async () => cancelIds.length > 0 && finished.has(cancelIds[0]), 'the first cancel\'s answer');
  await page.send('Fetch.continueRequest', { requestId: held[0] });
  await page.send('Fetch.disable');
  await waitFor(page, `${appLog('cancelled: the server was sent notifications/cancelled')} || ${appLog('cancelled before it was sent to the server')} || ${appLog('ended before the cancel reached it')}`,
    'the host\'s note of the early cancel');
  const early = await page.eval(`[...document.querySelectorAll('.app-log li')].map((li) => li.textContent).filter((t) => /cancelled(:| before)|ended before/.test(t)).join(' | ')`);
  sent = await cancelsSent();
  const reachedServer = /notifications\/cancelled/.test(early);
  check(cancelIds.length >= 2 && !/ended before/.test(early) && (!reachedServer || sent.length > sentBefore),
    `a cancel pressed before the call reached the daemon is asked again until it lands (${cancelIds.length} cancel requests; ${early})`);
  check(await page.eval(`[...document.querySelectorAll('.app-log li')].filter((li) => li.textContent.includes('"probe": "tool-result"')).length`) === 0,
    'no result reaches the App for the early-cancelled call');

  // --- the studio App: a dedicated origin, download-file, sampling, a list reload ----
  await press(page, '.app-bar button:last-child', 'Close app (held call)');
  await waitFor(page, `!document.querySelector('.app-frame')`, 'the held probe App to close');
  const downloads = path.join(dir, 'downloads');
  fs.mkdirSync(downloads, { recursive: true });
  await browser.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: downloads });
  await openTool(probeId, 'studio');
  const studioSrc = await waitFor(page, `document.querySelector('.app-frame')?.getAttribute('src')`, 'the studio frame');
  const studioUrl = new URL(studioSrc);
  check(/^app-[0-9a-f]{16}\.localhost$/.test(studioUrl.hostname) && studioUrl.port === new URL(src).port,
    `an App with _meta.ui.domain (in its resources/list entry) gets a dedicated origin on the sandbox listener (${studioUrl.origin})`);
  const studioOrigin = await frameWait(`window.studioResults && window.studioResults.init && window.studioOrigin`, 'the studio App');
  check(studioOrigin === studioUrl.origin, `the App runs in that origin, not an opaque one (${studioOrigin})`);
  const studioPolicy = await page.eval(`document.querySelector('.app-policy pre')?.textContent || ''`);
  check(/"metadataFrom": "listing"/.test(studioPolicy), `its _meta.ui came from resources/list, its content having none (${studioPolicy.slice(0, 60)})`);
  const studioSandbox = await page.eval(`document.querySelector('.app-frame').getAttribute('sandbox')`);
  check(studioSandbox === 'allow-scripts allow-forms allow-same-origin', `its frame keeps its origin (${studioSandbox})`);
  const originNote = await page.eval(`document.querySelector('.app-origin')?.textContent || ''`);
  check(originNote.includes(studioUrl.origin) && originNote.includes('studio.example.test'),
    `the panel names the dedicated origin and the domain asked for (${originNote})`);
  const studioState = await frameEval(`JSON.stringify({ storage: window.studioResults.storage, cookie: document.cookie,
    caps: window.studioResults.init.result.hostCapabilities })`);
  const state = JSON.parse(studioState || '{}');
  check(state.storage === true && !/inspector_session/.test(state.cookie || ''),
    `the App has storage of its own and still not the UI's cookie (${studioState && studioState.slice(0, 80)})`);
  check(!!state.caps?.downloadFile && !!state.caps?.sampling && !state.caps?.sampling?.tools,
    `the host declares downloadFile and sampling without tools (${JSON.stringify(state.caps)})`);
  const reachedApi = await frameEval(`fetch(${JSON.stringify(base)} + '/api/servers', { credentials: 'include' }).then(() => true, () => false)`);
  check(reachedApi === false, 'the App in its dedicated origin cannot call the REST API');

  // ui/download-file: saved only when the user says so, under a safe name.
  await frameEval(`window.studio.download(), true`);
  const offer = await waitFor(page, `document.querySelector('.app-confirm[aria-label="The App offers a download"]')?.textContent`, 'the download offer');
  check(/report\.json/.test(offer) && !/\.\.\//.test(offer), `the host shows the file it would save (${offer})`);
  await page.eval(`[...document.querySelectorAll('.app-confirm button')].find((b) => b.textContent === 'Save the file').click()`);
  const saved = path.join(downloads, 'report.json');
  for (let i = 0; i < 100 && !fs.existsSync(saved); i++) await new Promise((r) => setTimeout(r, 100));
  check(fs.existsSync(saved) && fs.readFileSync(saved, 'utf8') === '{"report":"from the studio"}',
    `the file is saved with the App's content (${fs.existsSync(saved) ? fs.readFileSync(saved, 'utf8') : 'missing'})`);
  const downloaded = await frameWait(`window.studioResults.download && JSON.stringify(window.studioResults.download)`, 'the download answer');
  check(/"result":\{\}/.test(downloaded), `the App is told the download happened (${downloaded})`);
  await frameEval(`delete window.studioResults.download, window.studio.download(), true`);
  await waitFor(page, `document.querySelector('.app-confirm[aria-label="The App offers a download"]')`, 'the second offer');
  await page.eval(`[...document.querySelectorAll('.app-confirm button')].find((b) => b.textContent === "Don't save").click()`);
  const refusedDownload = await frameWait(`window.studioResults.download && JSON.stringify(window.studioResults.download)`, 'the refusal');
  check(/"code":-32000/.test(refusedDownload) && /denied/.test(refusedDownload), `a refused download is an error for the App (${refusedDownload})`);

  // sampling/createMessage: the user writes the reply.
  await frameEval(`window.studio.sample(), true`);
  const asking = await waitFor(page, `document.querySelector('.app-confirm .sampling-form')?.textContent`, 'the sampling form');
  check(/Say hello to the studio/.test(asking), `the host shows the App's sampling request (${asking.slice(0, 80)})`);
  await page.eval(`(() => { const t = document.querySelector('.app-confirm .sampling-form textarea'); t.value = 'Hello, studio'; t.dispatchEvent(new Event('input')); })()`);
  await page.eval(`[...document.querySelectorAll('.app-confirm .sampling-form button')].find((b) => b.textContent === 'Send reply to the App').click()`);
  const sampled = await frameWait(`window.studioResults.sample && JSON.stringify(window.studioResults.sample)`, 'the sampling answer');
  check(/"role":"assistant"/.test(sampled) && /Hello, studio/.test(sampled) && /"model":"web-ui"/.test(sampled),
    `the App gets the user's reply as its CreateMessageResult (${sampled})`);

  // ui/open-link refused is the extension's error, not a result.
  await frameEval(`window.studio.openLink('javascript:alert(1)'), true`);
  const badLink = await frameWait(`window.studioResults.openLink && JSON.stringify(window.studioResults.openLink)`, 'the bad link\'s answer');
  check(/"code":-32000/.test(badLink) && /Invalid URL/.test(badLink), `a link that is not http(s) is refused at once (${badLink})`);
  await frameEval(`delete window.studioResults.openLink, window.studio.openLink('https://example.com/'), true`);
  await waitFor(page, `document.querySelector('.app-confirm[aria-label="The App asks to open a link"]')`, 'the link confirmation');
  await page.eval(`[...document.querySelectorAll('.app-confirm button')].find((b) => b.textContent === "Don't open").click()`);
  const deniedLink = await frameWait(`window.studioResults.openLink && JSON.stringify(window.studioResults.openLink)`, 'the denied link\'s answer');
  check(/"code":-32000/.test(deniedLink) && /denied by user/.test(deniedLink), `a link the user refuses is an error for the App (${deniedLink})`);

  // The tools list reloads (the server says it changed); the App stays open, not reloaded.
  await page.eval(`document.querySelector('.app-frame').dataset.kept = 'yes'`);
  await frameEval(`window.keptAcrossReload = 'yes', true`);
  await frameEval(`window.studio.touchTools(), true`);
  await waitFor(page, `[...document.querySelectorAll('.view-explore .item-list .item-name')].some((e) => e.textContent === 'touched')`,
    'the reloaded tools list');
  const frameKept = await page.eval(`document.querySelector('.app-frame')?.dataset.kept || ''`);
  const appKept = await frameEval(`window.keptAcrossReload || ''`);
  check(frameKept === 'yes' && appKept === 'yes', `the open App survives the tools list reloading (frame ${frameKept || 'gone'}, App ${appKept || 'reloaded'})`);
  await shoot(page, 'apps-studio');
  await press(page, '.app-bar button:last-child', 'Close the studio');
  await waitFor(page, `!document.querySelector('.app-frame')`, 'the studio to close');

  // --- the sandbox listener and the gateway, from outside the browser -------------
  const again = await fetch(src);
  check(again.status === 404, `an App document is served once (${again.status})`);
  const opened = await fetch(`${base}/apps/open`, {
    method: 'POST', headers: { 'X-Session-Token': token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ serverId: probeId, uri: 'ui://probe/app.html' }),
  });
  const openedBody = await opened.json();
  check(openedBody.metadataFrom === 'content', `the probe's policy comes from its content's _meta.ui (${openedBody.metadataFrom})`);
  const appDocument = await fetch(openedBody.url);
  const csp = appDocument.headers.get('content-security-policy') || '';
  const connectSrc = csp.split(';').map((d) => d.trim()).find((d) => d.startsWith('connect-src')) || '';
  check(appDocument.status === 200 && /default-src 'none'/.test(csp) && connectSrc === `connect-src ${allowed.origin}` &&
    /sandbox allow-scripts allow-forms/.test(csp) && csp.includes(`frame-ancestors ${base} `),
  `the document's CSP comes from _meta.ui.csp, without the daemon's origin (${csp})`);
  check(/camera=\(\)/.test(appDocument.headers.get('permissions-policy') || ''), 'no permission is granted that the App did not ask for');
  const withCredentials = { Cookie: `${cookie.name}=${cookie.value}`, 'X-Session-Token': token };
  for (const [method, p] of [['GET', '/api/servers'], ['GET', '/'], ['GET', '/ui/index.html'], ['POST', '/apps/open'], ['GET', '/app/nothing']]) {
    const answer = await fetch(sandboxOrigin + p, { method, headers: withCredentials });
    check(answer.status === 404 || answer.status === 405, `the sandbox serves no ${method} ${p}, credentials or not (${answer.status})`);
  }
  const fromSandbox = await fetch(`${base}/api/servers`, {
    headers: { Cookie: `${cookie.name}=${cookie.value}`, Origin: sandboxOrigin, 'Sec-Fetch-Site': 'same-site' },
  });
  check(fromSandbox.status === 403 || fromSandbox.status === 401,
    `the gateway refuses the sign-in cookie from the sandbox's origin (${fromSandbox.status})`);
  const openFromSandbox = await fetch(`${base}/apps/open`, {
    method: 'POST',
    headers: { Cookie: `${cookie.name}=${cookie.value}`, Origin: sandboxOrigin, 'Sec-Fetch-Site': 'same-site', 'X-Inspector-Csrf': '1', 'Content-Type': 'application/json' },
    body: JSON.stringify({ serverId: probeId, uri: 'ui://probe/app.html' }),
  });
  check(openFromSandbox.status === 403, `the sandbox's origin cannot open Apps with the cookie (${openFromSandbox.status})`);
  check(page.consoleErrors.length === 0, `no script error in the page (${page.consoleErrors.join(' ; ')})`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  if (page) {
    const panel = await page.eval(`document.querySelector('.view')?.innerText || ''`).catch(() => '');
    console.error(`---- the view ----\n${panel.slice(0, 3000)}`);
    console.error(`---- page script errors ----\n${page.consoleErrors.join('\n')}`);
    console.error(`---- console ----\n${consoleLines.slice(-40).join('\n')}`);
  }
}
await run.end();
