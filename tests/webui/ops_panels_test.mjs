// The web UI's operations panels end to end: headless Chromium (Debian's)
// drives a real inspectord (--http on port 0) with real servers:
//   - Logs: the daemon's own log, a stdio server's stderr line and a
//     server's notifications/message, the live one arriving while the view
//     is open; the filters narrow them;
//   - Doctor: the button on a server runs the diagnosis; every check is
//     shown with its result and time, a failing server's check with advice;
//   - Tasks: a task-returning tool of tools/modern-fixture shows its status
//     changes and its result;
//   - In flight: a slow call of the fixture server is listed and cancelled
//     from the panel, and its caller gets CANCELLED;
//   - OAuth (tools/oauth-fixture, oidc-provider): "Log in" opens the
//     authorization URL in a new tab of the same browser, which goes through
//     the authorization server's pages to the daemon's /oauth/callback; the
//     panel shows the issuer, scopes and expiry; a protected tool is called;
//     refresh and logout; the guided debugger walks every step with its
//     exchanges (secrets masked); against a broken authorization server the
//     failing step is marked with its error and hint;
// and that every control of the new views is labelled and reachable by
// keyboard. Screenshots of each view (1280x800 and 390x844) go to
// --artifacts.
//
//   node ops_panels_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import process from 'node:process';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED, LOW_CONTRAST, waitForLine as waitForLineWithin } from './harness.mjs';

const args = parseArgs('ops_panels_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { fixtureScript, modernScript, oauthScript, node22 } = sourcePaths(args.source);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-ops-', 420);
const { dir, children, servers, check } = run;

const waitForLine = (stream, pattern, what) => waitForLineWithin(stream, pattern, what, 30);

const shoot = (page, name) => shootViews(page, args.artifacts, name);


// Tabs from the view's heading through every control of the view; answers
// the controls that the keyboard did not reach. Controls are told apart by
// what they are (id, aria-controls, text), not by their DOM node, so a
// redraw of the view during the walk (a live event) does not count as a
// miss.
const CONTROL_KEY = `((el) => [el.tagName, el.id, el.getAttribute('aria-controls') || '',
  el.getAttribute('aria-label') || '', el.textContent.trim().slice(0, 40)].join('|'))`;
const CONTROLS = `[...document.querySelectorAll('main button, main input, main select, main textarea, main a[href]')]
  .filter((el) => !el.disabled && el.offsetParent !== null)`;
async function unreachable(page, view) {
  await page.eval(`(() => { const t = document.querySelector('#title-${view}'); t.tabIndex = -1; t.focus(); })()`);
  const want = await page.eval(`${CONTROLS}.length`);
  const seen = new Set();
  for (let i = 0; i < want + 5; i++) {
    await page.tab();
    const key = await page.eval(`(() => { const el = document.activeElement;
      if (!el || !document.querySelector('main').contains(el)) return null; return ${CONTROL_KEY}(el); })()`);
    if (key) seen.add(key);
  }
  return page.eval(`(() => { const seen = new Set(${JSON.stringify([...seen])});
    return ${CONTROLS}.filter((el) => !seen.has(${CONTROL_KEY}(el))).map((el) => el.outerHTML.slice(0, 100)); })()`);
}

async function a11y(page, view) {
  const lowContrast = await page.eval(LOW_CONTRAST);
  check(lowContrast.length === 0, `the text of ${view} has enough contrast (WCAG AA)${lowContrast.length ? `: ${lowContrast.join(' ; ')}` : ''}`);
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of ${view} has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);
  const missed = await unreachable(page, view);
  check(missed.length === 0, `the keyboard reaches every control of ${view}${missed.length ? `; missed: ${missed.join(' ; ')}` : ''}`);
}

// Waits for a page condition; 45 s, as a loaded CI machine can be slow.
function waitFor(p, expression, what, seconds = 45) {
  return p.waitFor(expression, what, seconds);
}

// Clicks `selector` as soon as it is there and enabled (one step in the
// page, so a redraw cannot come between finding and clicking).
function press(page, selector, what = selector) {
  return waitFor(page, `(() => { const el = document.querySelector(${JSON.stringify(selector)});
    if (!el || el.disabled) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`, `${what} to click`);
}

let page = null;
try {
  const { daemon, signInUrl, base, token, withToken, rest } = await run.startDaemon(args.inspectord, [], 30);
  const addServer = async (config) => {
    const answer = await rest('POST', '/config', config);
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`adding ${config.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.id || answer.body.server?.id;
  };

  // The fixture server, its stderr given a line of its own first; the
  // modern fixture for tasks; a server whose command does not exist.
  const fixtureId = await addServer({
    name: 'fixture', transport: 'stdio', command: '/bin/sh',
    args: ['-c', 'echo "fixture stderr says hello" >&2; exec "$0" "$1" stdio', process.execPath, fixtureScript],
  });
  const modernId = await addServer({
    name: 'modern', transport: 'stdio', command: node22, args: [modernScript, '--max-seconds', '300'], protocol: 'modern',
  });
  await addServer({ name: 'missing', transport: 'stdio', command: path.join(dir, 'no-such-server') });
  for (const id of [fixtureId, modernId]) {
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
  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');

  // --- Logs -------------------------------------------------------------------
  await page.click('#nav-logs');
  const stderrRow = await waitFor(page, `[...document.querySelectorAll('tr.log-row')].find((r) => r.dataset.source === 'stderr' && r.textContent.includes('fixture stderr says hello'))?.innerText`,
    'the fixture\'s stderr line in Logs');
  check(/fixture/.test(stderrRow), `Logs shows a server's stderr with its server (${stderrRow.replace(/\s+/g, ' ')})`);
  const daemonRows = await page.eval(`document.querySelectorAll('tr.log-row[data-source="daemon"]').length`);
  check(daemonRows > 0, `Logs shows the daemon's own log (${daemonRows} entries)`);
  // A log message sent while the view is open arrives live.
  const logged = await rest('POST', `/api/servers/${fixtureId}/tools/log:call`, { arguments: { level: 'warning', message: 'live warning from the fixture' } });
  check(logged.status === 200, `the fixture's log tool ran (${logged.status})`);
  const live = await waitFor(page, `[...document.querySelectorAll('tr.log-row')].find((r) => r.textContent.includes('live warning from the fixture'))?.dataset.source`,
    'the live log message');
  check(live === 'server', `a server's log message arrives live (${live})`);
  await page.fill('#logs-source', 'stderr');
  const onlyStderr = await page.eval(`[...document.querySelectorAll('tr.log-row')].map((r) => r.dataset.source)`);
  check(onlyStderr.length > 0 && onlyStderr.every((s) => s === 'stderr'), `the source filter keeps only stderr (${onlyStderr.length} rows)`);
  await page.fill('#logs-source', '');
  await page.fill('#logs-text', 'live warning');
  const texted = await page.eval(`document.querySelectorAll('tr.log-row').length`);
  check(texted === 1, `the text filter narrows the list (${texted} rows)`);
  await page.fill('#logs-text', '');
  await shoot(page, 'logs');
  await a11y(page, 'logs');

  // --- Doctor -----------------------------------------------------------------
  await page.click('#nav-servers');
  await waitFor(page, `document.querySelector('tr[data-server="fixture"] button[aria-label="Run the doctor on fixture"]')`, 'the Doctor button on the fixture row');
  await page.click('tr[data-server="fixture"] button[aria-label="Run the doctor on fixture"]');
  const checks = await waitFor(page, `(() => {
    const rows = [...document.querySelectorAll('.doctor-report .doctor-check')];
    return rows.length && rows.map((r) => [r.dataset.check, r.querySelector('.check').textContent, r.querySelector('.doctor-time').textContent]);
  })()`, 'the fixture\'s diagnosis', 40);
  const names = checks.map(([n]) => n);
  check(['config', 'executable', 'spawn', 'initialize', 'tools'].every((n) => names.includes(n)),
    `the doctor's checks are listed in order (${names.join(', ')})`);
  check(checks.every(([, result, time]) => ['Passed', 'Warning', 'Skipped'].includes(result) && /^\d+ ms$/.test(time)),
    `each check of a working server passed with its time (${checks.map((c) => c.join(':')).join(', ')})`);
  const overall = await page.eval(`document.querySelector('.doctor-report h3 .check').textContent`);
  check(overall === 'Passed' || overall === 'Warning', `the diagnosis' overall result is shown (${overall})`);
  await page.click('tr[data-server="missing"] .doctor-run');
  const failed = await waitFor(page, `(() => {
    const r = document.querySelector('.doctor-report');
    const f = r && /missing/.test(r.querySelector('h3').textContent) && r.querySelector('.check-row-fail');
    return f && { check: f.dataset.check, advice: f.querySelector('.doctor-fix')?.textContent || '' };
  })()`, 'the missing server\'s diagnosis', 40);
  check(failed.check === 'executable' && /^Advice: ./.test(failed.advice),
    `a failing check is marked with its advice (${failed.check}: ${failed.advice.slice(0, 80)})`);
  const lastCell = await page.eval(`document.querySelector('tr[data-server="missing"] .doctor-last').textContent`);
  check(lastCell === 'Failed', `the server's row keeps its last result (${lastCell})`);
  await shoot(page, 'doctor');
  await a11y(page, 'doctor');

  // --- Tasks ------------------------------------------------------------------
  await page.eval(`(async () => { const s = await import('/ui/state.js'); s.setCurrent(${JSON.stringify(modernId)}); })()`);
  await page.click('#nav-tasks');
  await waitFor(page, `document.querySelector('#title-tasks')`, 'the tasks view');
  const job = await rest('POST', `/api/servers/${modernId}/tools/slow_job:call`, { arguments: { steps: 3 } });
  check(job.status === 200 && job.body?.result?.content?.[0]?.text === 'job done after 3 steps',
    `the task-returning tool answered through the daemon (${job.status} ${JSON.stringify(job.body).slice(0, 100)})`);
  const taskId = await waitFor(page, `[...document.querySelectorAll('tr.task-row')].find((r) => r.querySelector('.task-status').textContent === 'completed')?.dataset.task`,
    'the completed task in Tasks');
  await page.click(`tr.task-row[data-task="${taskId}"] button`);
  const detail = await waitFor(page, `(() => {
    const d = document.querySelector('.task-detail');
    const result = d && d.querySelector('.task-result')?.textContent;
    return result && { updates: [...d.querySelectorAll('.task-updates li')].map((l) => l.textContent.replace(/^\\S+ /, '')), result, request: d.querySelector('dl').textContent };
  })()`, 'the task\'s result');
  check(detail.updates.some((u) => /working\s*step 1 of 3/.test(u)) && detail.updates.some((u) => /completed/.test(u)),
    `the task's status changes are listed (${detail.updates.join(' | ')})`);
  check(detail.result.includes('job done after 3 steps') && /tools\/call slow_job/.test(detail.request),
    `the task's result and its request are shown (${detail.request}; ${detail.result.replace(/\s+/g, ' ').slice(0, 80)})`);
  await shoot(page, 'tasks');
  await a11y(page, 'tasks');
  // A fresh page rebuilds the list from the recorded polls.
  await page.reload();
  await waitFor(page, `document.querySelector('#title-tasks')`, 'the tasks view after a reload');
  const again = await waitFor(page, `document.querySelector('tr.task-row[data-task="${taskId}"] .task-status')?.textContent`, 'the task after a reload');
  check(again === 'completed', `a reloaded page lists the task from the history (${again})`);

  // --- In flight --------------------------------------------------------------
  await page.eval(`(async () => { const s = await import('/ui/state.js'); s.setCurrent(${JSON.stringify(fixtureId)}); })()`);
  await page.click('#nav-inflight');
  await waitFor(page, `document.querySelector('#title-inflight')`, 'the in-flight view');
  const slow = rest('POST', `/api/servers/${fixtureId}/tools/slow:call`, { arguments: { steps: 600, delayMs: 100 } });
  const entry = await waitFor(page, `[...document.querySelectorAll('tr.inflight-row')].find((r) => r.textContent.includes('tools/call') && r.textContent.includes('slow'))?.dataset.entry`,
    'the slow call in In flight');
  const rowText = await page.eval(`document.querySelector('tr.inflight-row[data-entry="${entry}"]').innerText.replace(/\\s+/g, ' ')`);
  check(/in progress/.test(rowText) && /daemon/.test(rowText), `the slow call is listed in progress (${rowText})`);
  await shoot(page, 'inflight');
  await a11y(page, 'inflight');
  await page.click(`tr.inflight-row[data-entry="${entry}"] button.inflight-cancel`);
  const slowAnswer = await slow;
  check(slowAnswer.body?.error?.code === 'CANCELLED', `the caller of the cancelled call got CANCELLED (${slowAnswer.status} ${slowAnswer.body?.error?.code})`);
  await waitFor(page, `!document.querySelector('tr.inflight-row[data-entry="${entry}"]') && /1 cancelled/.test(document.querySelector('#inflight-counters').textContent)`,
    'the cancelled call to leave the list');
  check(true, 'the cancelled call left the queue and the counters count it');

  // --- OAuth -----------------------------------------------------------------
  const oauthFixture = spawn(node22, [oauthScript], { stdio: ['pipe', 'ignore', 'pipe'] });
  children.push({ child: oauthFixture });
  const [ready] = await waitForLine(oauthFixture.stderr, /\{"listening".*\}/, 'the OAuth fixture');
  const { mcp: oauthMcp, issuer } = JSON.parse(ready);
  const fixtureState = async () => (await fetch(new URL('/_fixture/state', oauthMcp))).json();
  // A protected server whose authorization server refuses every client
  // registration: discovery passes, client registration fails.
  const broken = http.createServer((request, response) => {
    const origin = `http://127.0.0.1:${broken.address().port}`;
    const send = (status, body, headers = {}) => {
      response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    const url = new URL(request.url, origin);
    if (url.pathname === '/mcp') {
      send(401, { error: 'unauthorized' }, { 'WWW-Authenticate': `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` });
    } else if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      send(200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    } else if (url.pathname === '/.well-known/oauth-authorization-server') {
      send(200, {
        issuer: origin, authorization_endpoint: `${origin}/authorize`, token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`, response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['none'],
      });
    } else if (url.pathname === '/register') {
      request.resume();
      send(400, { error: 'invalid_redirect_uri', error_description: 'this authorization server registers no client' });
    } else {
      send(404, { error: 'not_found' });
    }
  });
  await new Promise((resolve) => broken.listen(0, '127.0.0.1', resolve));
  servers.push(broken);
  const oidcId = await addServer({ name: 'oidc', transport: 'streamableHttp', url: oauthMcp });
  await addServer({ name: 'broken-as', transport: 'streamableHttp', url: `http://127.0.0.1:${broken.address().port}/mcp` });
  // The page learns of new servers from the event stream: the view is
  // opened once it knows both, as a person would see them listed.
  await waitFor(page, `import('/ui/state.js').then((m) => ['oidc', 'broken-as'].every((n) => m.store.servers.some((s) => s.name === n)))`,
    'the page to know both HTTP servers');
  await page.click('#nav-oauth');
  await waitFor(page, `document.querySelector('#oauth-server')`, 'the OAuth view');
  // The view opens on the first HTTP server by name. Once its status is
  // drawn, choosing oidc must take broken-as's buttons away at once: a
  // click while oidc loads would otherwise start broken-as's flow.
  const opened = await waitFor(page, `document.querySelector('#oauth-status dd[data-key="Signed in"]') && document.querySelector('#oauth-status-title').textContent`,
    'the first server\'s sign-in status');
  check(opened === 'Sign-in of broken-as', `the OAuth view opens on the first HTTP server (${opened})`);
  const switched = await page.eval(`(() => {
    const select = document.querySelector('#oauth-server');
    select.value = ${JSON.stringify(oidcId)};
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return { title: document.querySelector('#oauth-status-title')?.textContent,
      controls: [...document.querySelectorAll('#oauth-status button, #oauth-debugger button')].map((b) => b.id || b.textContent) };
  })()`);
  check(switched.title === 'Sign-in of oidc' && switched.controls.length === 0,
    `choosing another server leaves none of the previous server's buttons (${switched.title}; ${switched.controls.join(', ') || 'no buttons'})`);
  const notSigned = await waitFor(page, `/oidc$/.test(document.querySelector('#oauth-status-title')?.textContent) &&
    document.querySelector('#oauth-status dd[data-key="Signed in"]')?.textContent`, 'the oidc sign-in status');
  check(notSigned === 'no', `the OAuth panel says the server is not signed in (${notSigned})`);

  // The guided debugger, one step at a time.
  const stepMarks = `[...document.querySelectorAll('.oauth-step')].map((s) => s.dataset.step + ':' + s.querySelector('.step-mark').textContent)`;
  await press(page, '#oauth-start');
  const started = await waitFor(page, `document.querySelector('.oauth-step[data-step="METADATA_DISCOVERY"] .step-mark')?.textContent === 'Next' ? 'started'
    : [...document.querySelectorAll('.toast.error')].map((t) => t.textContent).join(' | ')`, 'a started flow');
  check(started === 'started', `Start begins a flow at metadata discovery (${started})`);
  for (const [done, next] of [['METADATA_DISCOVERY', 'CLIENT_REGISTRATION'], ['CLIENT_REGISTRATION', 'AUTHORIZATION_REDIRECT'], ['AUTHORIZATION_REDIRECT', 'AUTHORIZATION_CODE']]) {
    await press(page, '#oauth-advance');
    await waitFor(page, `document.querySelector('.oauth-step[data-step="${done}"] .step-mark')?.textContent === 'Done' &&
      document.querySelector('.oauth-step[data-step="${next}"] .step-mark')?.textContent === 'Next'`, `the debugger past ${done}`);
  }
  const discovery = await page.eval(`(() => {
    const s = document.querySelector('.oauth-step[data-step="METADATA_DISCOVERY"]');
    return { checked: [...s.querySelectorAll('.oauth-log li')].map((l) => l.textContent), exchanges: [...s.querySelectorAll('.oauth-exchange summary')].map((x) => x.textContent) };
  })()`);
  check(discovery.checked.some((c) => /401/.test(c)) && discovery.checked.some((c) => /authorization server metadata found/.test(c)),
    `the discovery step says what it checked (${discovery.checked.join(' | ').slice(0, 200)})`);
  check(discovery.exchanges.some((x) => /^POST .*\/mcp 401/.test(x)) && discovery.exchanges.some((x) => /oauth-protected-resource.* 200/.test(x)),
    `the discovery step lists its HTTP exchanges (${discovery.exchanges.join(' | ').slice(0, 200)})`);
  const headers401 = await page.eval(`[...document.querySelectorAll('.oauth-step[data-step="METADATA_DISCOVERY"] .oauth-exchange')][0].querySelectorAll('pre')[2]?.textContent || ''`);
  check(/www-authenticate: Bearer resource_metadata=/i.test(headers401), 'an exchange shows the response headers');
  const authUrl = await page.eval(`document.querySelector('.oauth-step[data-step="AUTHORIZATION_REDIRECT"] a')?.href || ''`);
  check(authUrl.startsWith(`${issuer}/`) && /code_challenge_method=S256/.test(authUrl), `the authorization URL is shown as a link (${authUrl.slice(0, 80)})`);
  await shoot(page, 'oauth-debugger-code');
  await press(page, '#oauth-follow');
  await waitFor(page, `document.querySelector('.oauth-step[data-step="AUTHORIZATION_CODE"] .step-mark')?.textContent === 'Done'`, 'the authorization code step');
  await press(page, '#oauth-advance');
  const marks = await waitFor(page, `(() => { const m = ${stepMarks}; return m.every((x) => x.endsWith(':Done')) && m; })()`, 'every step done');
  check(marks.length === 6, `the stepper shows every step done (${marks.join(', ')})`);
  const signed = await waitFor(page, `document.querySelector('#oauth-status dd[data-key="Signed in"]')?.textContent === 'yes' &&
    [...document.querySelectorAll('#oauth-status dd')].map((d) => d.dataset.key + '=' + d.textContent)`, 'the signed-in status');
  check(signed.includes(`Issuer=${issuer}`) && signed.includes('Scopes=mcp:read') && signed.some((x) => /^Expires=.*\(in \d+ min\)$/.test(x)) &&
        signed.some((x) => /^Refresh=a refresh token is held/.test(x)),
    `the status shows issuer, scopes, expiry and refresh state (${signed.join('; ')})`);
  // Every step's exchanges, opened: no token, code or verifier in clear.
  await page.eval(`document.querySelectorAll('.oauth-step-body').forEach((b) => { b.hidden = false; }); document.querySelectorAll('.oauth-exchange').forEach((d) => { d.open = true; })`);
  const tokenText = await page.eval(`[...document.querySelectorAll('.oauth-step[data-step="TOKEN_REQUEST"] .oauth-body')].map((p) => p.textContent).join('\\n')`);
  check(/code=\*\*\*/.test(tokenText) && /code_verifier=\*\*\*/.test(tokenText) && /"access_token": "\*\*\*/.test(tokenText),
    `the token request and answer are shown with their secrets masked (${tokenText.replace(/\s+/g, ' ').slice(0, 160)})`);
  const afterDebug = await fixtureState();
  const secrets = [...afterDebug.accessTokens, ...afterDebug.refreshTokens].map((t) => (typeof t === 'string' ? t : t.value || t.token || JSON.stringify(t)));
  const pageText = await page.eval('document.body.innerText + document.body.innerHTML');
  check(secrets.length >= 2 && !secrets.some((t) => pageText.includes(t)), `no token the authorization server issued is in the page (${secrets.length} checked)`);
  await page.eval(`document.querySelector('#oauth-debugger-title').scrollIntoView({ block: 'start' })`);
  await shoot(page, 'oauth-debugger');

  // Log out, then log in with the button: a new tab goes through the
  // authorization server's pages to /oauth/callback.
  await press(page, '#oauth-logout');
  await waitFor(page, `document.querySelector('#oauth-status dd[data-key="Signed in"]')?.textContent === 'no'`, 'the logged-out status');
  check(true, 'Log out forgets the tokens');
  await browser.send('Target.setDiscoverTargets', { discover: true });
  // New tabs start paused until their navigations are watched: the login
  // tab's document requests show the way it went.
  const tabRequests = [];
  browser.on('Target.attachedToTarget', async ({ sessionId: tab, targetInfo, waitingForDebugger }) => {
    if (targetInfo.type !== 'page') return;
    browser.on('Network.requestWillBeSent', (params, session) => {
      if (session === tab && params.type === 'Document') tabRequests.push(params.request.url);
    });
    // Both sent before either answers: a paused tab may answer only once it runs.
    const watching = browser.send('Network.enable', {}, tab).catch(() => {});
    if (waitingForDebugger) browser.send('Runtime.runIfWaitingForDebugger', {}, tab).catch(() => {});
    await watching;
  });
  await browser.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
  const callbackTab = new Promise((resolve) => {
    browser.on('Target.targetInfoChanged', ({ targetInfo }) => {
      if (targetInfo.type === 'page' && targetInfo.url.startsWith(`${base}/oauth/callback`)) resolve(targetInfo);
    });
  });
  const codeGrants = afterDebug.counters.authorizationCodeGrants;
  // From the keyboard: a real key press lets the page open a tab.
  await page.eval(`document.querySelector('#oauth-login').focus()`);
  await page.key('Enter', 'Enter', 13);
  const landed = await Promise.race([callbackTab, new Promise((resolve) => setTimeout(() => resolve(null), 30000))]);
  check(landed && /[?&]code=/.test(landed.url) && /[?&]state=/.test(landed.url), `the login tab came back to the daemon's /oauth/callback (${landed ? landed.url.replace(/code=[^&]+/, 'code=…') : 'never'})`);
  if (landed) {
    const { sessionId: tabSession } = await browser.send('Target.attachToTarget', { targetId: landed.targetId, flatten: true });
    const heading = await browser.send('Runtime.evaluate', {
      expression: `new Promise((resolve) => { const stop = Date.now() + 20000; const look = () => { const t = document.querySelector('h1')?.textContent;
        if (t || Date.now() > stop) resolve(t || null); else setTimeout(look, 50); }; look(); })`, awaitPromise: true, returnByValue: true,
    }, tabSession);
    check(heading.result.value === 'Signed in', `the callback page says the sign-in worked (${heading.result.value})`);
    // Started from the web UI: the page sends the person back there, not
    // to a terminal, and its button closes the tab.
    const page2 = await browser.send('Runtime.evaluate', {
      expression: `({ text: document.querySelector('#outcome')?.textContent || '', close: !!document.querySelector('#close-tab'),
        back: document.querySelector('#back-to-ui')?.getAttribute('href') || '' })`, returnByValue: true,
    }, tabSession);
    const callbackPage = page2.result.value;
    check(/authorization for oidc\./.test(callbackPage.text) && /web UI tab you started from/.test(callbackPage.text) && !/terminal/.test(callbackPage.text),
      `the callback page names the server and sends the person back to the web UI (${callbackPage.text})`);
    check(callbackPage.close && callbackPage.back === '/#/oauth', `the callback page offers to close the tab and a link to the web UI (${JSON.stringify(callbackPage)})`);
    const way = tabRequests.map((u) => u.replace(/\?.*/, ''));
    check(way[0] === `${base}/oauth/authorize/${oidcId}` && way.some((u) => u.startsWith(`${issuer}/interaction/`)) && way.at(-1) === `${base}/oauth/callback`,
      `the tab went from the daemon through the authorization server's interaction pages to the callback (${way.join(' → ')})`);
    const closed = new Promise((resolve) => {
      browser.on('Target.targetDestroyed', ({ targetId }) => { if (targetId === landed.targetId) resolve(true); });
    });
    // Not awaited: the tab may be gone before it answers.
    browser.send('Runtime.evaluate', { expression: `document.querySelector('#close-tab').click()`, userGesture: true }, tabSession).catch(() => {});
    const gone = await Promise.race([closed, new Promise((resolve) => setTimeout(() => resolve(false), 20000))]);
    check(gone, 'Close this tab closes the callback tab');
    if (!gone) await browser.send('Target.closeTarget', { targetId: landed.targetId }).catch(() => {});
  }
  await waitFor(page, `document.querySelector('#oauth-status dd[data-key="Signed in"]')?.textContent === 'yes'`, 'the UI tab to show the login');
  const told = await waitFor(page, `document.querySelector('#oauth-login-note')?.textContent.startsWith('Signed in to') && document.querySelector('#oauth-login-note').textContent`, 'the signed-in notice');
  check(/^Signed in to oidc at /.test(told), `the UI tab says the sign-in completed (${told})`);
  const afterLogin = await fixtureState();
  check(afterLogin.counters.authorizationCodeGrants === codeGrants + 1, `the login redeemed one more authorization code (${codeGrants} → ${afterLogin.counters.authorizationCodeGrants})`);
  check(true, 'the UI tab shows the server signed in when the other tab completes');
  await shoot(page, 'oauth');

  // The protected tool, called from the Tools view.
  await page.eval(`(async () => { const s = await import('/ui/state.js'); s.setCurrent(${JSON.stringify(oidcId)}); })()`);
  await page.click('#nav-explore');
  await waitFor(page, `[...document.querySelectorAll('.item-name')].some((e) => e.textContent === 'whoami')`, 'the protected server\'s tools');
  await page.eval(`[...document.querySelectorAll('.item')].find((b) => b.querySelector('.item-name').textContent === 'whoami').click()`);
  await waitFor(page, `document.querySelector('.tool-form')`, 'the whoami form');
  await page.click('.tool-form button[type=submit]');
  const whoami = await waitFor(page, `document.querySelector('.tool-result .text-content')?.textContent`, 'the whoami answer');
  check(whoami === 'alice with mcp:read', `the protected tool answered with the token's user and scope (${whoami})`);

  // Refresh from the panel.
  await page.click('#nav-oauth');
  await waitFor(page, `document.querySelector('#oauth-refresh')`, 'the Refresh button');
  const refreshes = afterLogin.counters.refreshTokenGrants;
  const expiresBefore = await page.eval(`document.querySelector('#oauth-status dd[data-key="Expires"]').textContent`);
  await press(page, '#oauth-refresh');
  await waitFor(page, `[...document.querySelectorAll('.toast')].some((t) => /^Refreshed/.test(t.textContent))`, 'the refresh');
  await waitFor(page, `document.querySelector('#oauth-status dd[data-key="Expires"]')?.textContent !== ${JSON.stringify(expiresBefore)}`, 'the new expiry');
  const afterRefresh = await fixtureState();
  check(afterRefresh.counters.refreshTokenGrants === refreshes + 1, `Refresh ran a refresh_token grant (${refreshes} → ${afterRefresh.counters.refreshTokenGrants})`);
  await a11y(page, 'oauth');

  // A broken authorization server: the failing step is marked, with why.
  const brokenId = (await rest('GET', '/config')).body.servers.find((s) => s.name === 'broken-as').id;
  await page.fill('#oauth-server', brokenId);
  await waitFor(page, `document.querySelector('#oauth-run') && /broken-as/.test(document.querySelector('#oauth-status-title')?.textContent)`, 'the broken server in the panel');
  await press(page, '#oauth-run');
  const failedStep = await waitFor(page, `(() => {
    const s = document.querySelector('.oauth-step.step-fail');
    return s && { step: s.dataset.step, mark: s.querySelector('.step-mark').textContent, error: s.querySelector('.step-error')?.textContent || '',
      open: !s.querySelector('.oauth-step-body').hidden, exchanges: [...s.querySelectorAll('.oauth-exchange summary')].map((x) => x.textContent),
      before: [...document.querySelectorAll('.oauth-step')].slice(0, 1).map((x) => x.querySelector('.step-mark').textContent) };
  })()`, 'the failing step');
  check(failedStep.step === 'CLIENT_REGISTRATION' && failedStep.mark === 'Failed' && failedStep.before[0] === 'Done',
    `the failing step is marked (${failedStep.step} ${failedStep.mark}; discovery ${failedStep.before[0]})`);
  check(failedStep.open && /Failed: .*(invalid_redirect_uri|registers no client|register)/i.test(failedStep.error) && failedStep.exchanges.some((x) => /\/register 400/.test(x)),
    `it says why, with the refused request (${failedStep.error.slice(0, 200)}; ${failedStep.exchanges.join(' | ')})`);
  check(/Hint: ./.test(failedStep.error), `the failed step shows the hint (${failedStep.error.slice(0, 300)})`);
  await page.eval(`document.querySelector('.oauth-step.step-fail').scrollIntoView({ block: 'start' })`);
  await shoot(page, 'oauth-broken');

  // The debugger started after discovery, from the authorization server
  // given: the MCP server is not asked, only the issuer's metadata.
  await page.fill('#oauth-server', oidcId);
  await waitFor(page, `/oidc$/.test(document.querySelector('#oauth-status-title')?.textContent) && document.querySelector('#oauth-start')`, 'oidc in the panel again');
  await page.fill('#oauth-scopes', 'mcp:read');
  await page.fill('#oauth-start-at', 'CLIENT_REGISTRATION');
  check(await page.eval(`!document.querySelector('.oauth-given').hidden`), 'choosing a later start asks for what the skipped steps would have found');
  await page.fill('#oauth-issuer', issuer);
  await press(page, '#oauth-start');
  const fromIssuer = await waitFor(page, `(() => {
    const m = ${stepMarks};
    if (m[0] !== 'METADATA_DISCOVERY:Done' || m[1] !== 'CLIENT_REGISTRATION:Next') return false;
    const s = document.querySelector('.oauth-step[data-step="METADATA_DISCOVERY"]');
    return { log: [...s.querySelectorAll('.oauth-log li')].map((l) => l.textContent), exchanges: [...s.querySelectorAll('.oauth-exchange summary')].map((x) => x.textContent) };
  })()`, 'a flow started at client registration');
  check(fromIssuer.log.some((l) => /discovery is skipped/.test(l)) && fromIssuer.exchanges.length > 0 &&
        fromIssuer.exchanges.every((x) => x.startsWith(`GET ${issuer}/`)),
  `a start at client registration fetched only the issuer's metadata (${fromIssuer.exchanges.join(' | ')}; ${fromIssuer.log.join(' | ').slice(0, 200)})`);
  await shoot(page, 'oauth-start-at');

  // At the authorization URL, with a client registered beforehand with the
  // authorization server: no registration, and the flow completes with it.
  const asMeta = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
  const registered = await fetch(asMeta.registration_endpoint, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [`${base}/oauth/callback`], token_endpoint_auth_method: 'none', application_type: 'native',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], client_name: 'pre-registered by the test' }),
  });
  const preClient = await registered.json();
  check(registered.status === 201 && preClient.client_id, `a client was registered beforehand (${registered.status} ${preClient.client_id})`);
  const beforePre = (await fixtureState()).counters;
  await page.fill('#oauth-start-at', 'AUTHORIZATION_REDIRECT');
  await page.fill('#oauth-client-id', preClient.client_id);
  await press(page, '#oauth-start');
  const atUrl = await waitFor(page, `(() => { const m = ${stepMarks};
    return m[1] === 'CLIENT_REGISTRATION:Done' && m[2] === 'AUTHORIZATION_REDIRECT:Next' &&
      [...document.querySelectorAll('.oauth-step[data-step="CLIENT_REGISTRATION"] .oauth-log li')].map((l) => l.textContent); })()`,
  'a flow started at the authorization URL');
  check(atUrl.some((l) => l.includes(`pre-registered client ${preClient.client_id}`)), `the given client is used as registered (${atUrl.join(' | ')})`);
  await press(page, '#oauth-advance');
  const preUrl = await waitFor(page, `document.querySelector('.oauth-step[data-step="AUTHORIZATION_CODE"] .step-mark')?.textContent === 'Next' &&
    document.querySelector('.oauth-step[data-step="AUTHORIZATION_REDIRECT"] a')?.href`, 'the authorization URL of the given client');
  check(new URL(preUrl).searchParams.get('client_id') === preClient.client_id, `the authorization URL names the given client (${preUrl.slice(0, 120)})`);
  await press(page, '#oauth-follow');
  await waitFor(page, `document.querySelector('.oauth-step[data-step="AUTHORIZATION_CODE"] .step-mark')?.textContent === 'Done'`, 'the code of the given client');
  await press(page, '#oauth-advance');
  await waitFor(page, `(() => { const m = ${stepMarks}; return m.every((x) => x.endsWith(':Done')); })()`, 'the given client\'s flow complete');
  const afterPre = (await fixtureState()).counters;
  check(afterPre.registrations === beforePre.registrations && afterPre.authorizationCodeGrants === beforePre.authorizationCodeGrants + 1,
    `the flow completed without registering (registrations ${beforePre.registrations} → ${afterPre.registrations}, code grants ${beforePre.authorizationCodeGrants} → ${afterPre.authorizationCodeGrants})`);

  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  // What the page showed then, to tell why.
  const shown = page && await page.eval(`document.querySelector('main').innerText.slice(0, 3000) + '\\n-- toasts: ' +
    [...document.querySelectorAll('.toast')].map((t) => t.textContent).join(' | ')`).catch(() => null);
  if (shown) console.error(`the page showed:\n${shown}`);
} finally {
  await run.end();
}
