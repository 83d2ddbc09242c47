// Live traffic and History end to end: headless Chromium (Debian's) drives
// a real inspectord (--http on port 0) with the fixture server (an auto-era
// server: its server/discover probe is answered -32601) and the modern
// fixture (tools/modern-fixture: multi round-trip requests and tasks):
//   - a call and its answer are one row with the duration; an error and a
//     call over a second stand out; the era probe is shown as a probe, not
//     as a failure, in Live traffic and in History;
//   - the later rounds of a multi round-trip request (state_only) and the
//     polls of a task (slow_job) are grouped under the first request and
//     opened with the keyboard;
//   - the detail pane shows the request and the response in the JSON tree
//     viewer; "Edit and replay" sends an edited copy and shows the answer;
//     "Pin" keeps a row at the top while traffic arrives, until unpinned;
//   - History's detail offers replay and jumps to the message's session;
//   - the detail shows the HTTP exchange (status, headers with Authorization
//     masked) of a call to the fixture over Streamable HTTP and of a call
//     made through that server's front door;
// screenshots at 1280x800 and 390x844 in --artifacts.
//
//   node timeline_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import process from 'node:process';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED, LOW_CONTRAST, waitForLine } from './harness.mjs';

const args = parseArgs('timeline_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { fixtureScript, modernScript, node22 } = sourcePaths(args.source);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-timeline-', 240);
const { dir, children, servers, check } = run;

const shoot = (page, name) => shootViews(page, args.artifacts, name);


// Tabs from the view's heading through every control of the view; answers
// the controls that the keyboard did not reach.
async function unreachable(page, view) {
  await page.eval(`(() => { const t = document.querySelector('#title-${view}'); t.tabIndex = -1; t.focus(); })()`);
  const want = await page.eval(`[...document.querySelectorAll('main button, main input, main select, main textarea, main a[href]')]
    .filter((el) => !el.disabled && el.offsetParent !== null).length`);
  const seen = new Set();
  for (let i = 0; i < want + 5; i++) {
    await page.tab();
    const id = await page.eval(`(() => { const el = document.activeElement; if (!el || !document.querySelector('main').contains(el)) return null;
      el.dataset.kb = '1'; return true; })()`);
    if (id) seen.add(i);
  }
  return page.eval(`(() => { const missed = [...document.querySelectorAll('main button, main input, main select, main textarea, main a[href]')]
    .filter((el) => !el.disabled && el.offsetParent !== null && !el.dataset.kb).map((el) => el.outerHTML.slice(0, 100));
    document.querySelectorAll('[data-kb]').forEach((el) => delete el.dataset.kb); return missed; })()`);
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


// The rows of Live traffic in the page, as plain data.
const ROWS = `[...document.querySelectorAll('.tl-body .tl-row')].map((r) => ({
  id: r.dataset.row, index: Number(r.dataset.index), cls: r.className, method: r.querySelector('.c-method').textContent,
  kind: r.querySelector('.c-kind').textContent, dur: r.querySelector('.c-dur').textContent, dir: r.querySelector('.c-dir').textContent,
  expanded: r.getAttribute('aria-expanded') }))`;
const row = (test) => `${ROWS}.find((r) => ${test})`;

let page = null;
try {
  const { daemon, signInUrl, base, token, withToken, rest } = await run.startDaemon(args.inspectord, [], 30);
  const addServer = async (config) => {
    const answer = await rest('POST', '/config', config);
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`adding ${config.name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.id || answer.body.server?.id;
  };

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  browser.child.on('exit', (code, signal) => {
    if (!run.stopping) console.error(`Chromium exited early (${code ?? signal}):\n${browser.stderr}`);
  });
  page = await browser.newPage();
  await page.viewport(1280, 800);
  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');
  await page.click('#nav-timeline');
  await waitFor(page, `document.querySelector('#title-timeline')`, 'Live traffic');

  // The fixture server with no protocol set: auto, so it is probed first.
  const fixtureId = await addServer({ name: 'fixture', transport: 'stdio', command: process.execPath, args: [fixtureScript, 'stdio'] });
  const modernId = await addServer({
    name: 'modern', transport: 'stdio', command: node22, args: [modernScript, '--max-seconds', '300'], protocol: 'modern',
  });
  for (const id of [fixtureId, modernId]) {
    const connected = await rest('POST', `/api/servers/${id}/connect`, {});
    if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${JSON.stringify(connected.body)}`);
  }

  // --- the era probe -----------------------------------------------------------
  const probe = await waitFor(page, `${row(`r.method.startsWith('server/discover') && r.dur.endsWith('ms')`)}`, 'the era probe in Live traffic');
  check(probe.kind === 'probe' && !/is-error/.test(probe.cls) && /is-probe/.test(probe.cls),
    `the era probe answered -32601 is shown as a probe, not a failure (${probe.kind}; ${probe.cls})`);
  await page.eval(`document.querySelector('[data-row="${probe.id}"]').click()`);
  const probeMeta = await waitFor(page, `document.querySelector('.msg-detail dl.meta')?.textContent`, 'the probe\'s detail');
  check(/Probe/.test(probeMeta) && /handshake era/.test(probeMeta), `its detail says what the probe is (${probeMeta.slice(0, 160)})`);

  // --- one row per call; errors and slow calls ---------------------------------
  const echo = await rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: 'first words' } });
  check(echo.status === 200, `echo answered (${echo.status})`);
  const echoRow = await waitFor(page, row(`r.method.includes('echo') && r.dur.endsWith('ms')`), 'the echo call on one row');
  const echoRows = await page.eval(`${ROWS}.filter((r) => r.method.includes('echo')).length`);
  check(echoRow.kind === 'request' && echoRow.dir === '→' && echoRows === 1,
    `the call and its answer are one row with the duration (${echoRows} row, ${echoRow.dur})`);
  await rest('POST', `/api/servers/${fixtureId}/tools/fail:call`, { arguments: {} });
  await rest('POST', `/api/servers/${fixtureId}/tools/slow:call`, { arguments: { steps: 3, delayMs: 400 } });
  const marked = await waitFor(page, `(() => {
    const fail = ${row(`r.method.includes(' fail') && r.dur.endsWith('ms')`)};
    const slow = ${row(`r.method.includes(' slow') && r.dur.endsWith('ms')`)};
    return fail && slow && { fail: fail.cls, slow: slow.cls, slowDur: slow.dur };
  })()`, 'the failed and the slow call');
  check(/is-error/.test(marked.fail), `an error stands out (${marked.fail})`);
  check(/is-slow/.test(marked.slow) && parseInt(marked.slowDur, 10) >= 1000, `a call over a second stands out (${marked.slow}, ${marked.slowDur})`);

  // --- multi round-trip: rounds grouped under the first request --------------
  const mrtr = await rest('POST', `/api/servers/${modernId}/tools/state_only:call`, { arguments: {} });
  check(mrtr.status === 200, `state_only answered after its retry (${mrtr.status} ${JSON.stringify(mrtr.body).slice(0, 120)})`);
  const group = await waitFor(page, row(`r.method.includes('state_only') && /\\+1/.test(r.method)`), 'the state_only call with its round grouped');
  const separate = await page.eval(`${ROWS}.filter((r) => r.method.includes('state_only')).length`);
  check(group.expanded === 'false' && separate === 1, `the retried round is grouped under the first request, closed (${group.method}; ${separate} row)`);
  await page.eval(`document.querySelector('[data-row="${group.id}"]').click()`);
  await page.key('ArrowRight', 'ArrowRight', 39);
  const opened = await waitFor(page, `(() => {
    const rows = ${ROWS}.filter((r) => r.method.includes('state_only'));
    return rows.length === 2 && rows;
  })()`, 'the group opened with the Right key');
  check(opened[0].expanded === 'true' && /round 1/.test(opened[1].method) && /is-child/.test(opened[1].cls),
    `Right opens the group: round 1 follows its first request (${opened.map((r) => r.method).join(' / ')})`);
  const rounds = await waitFor(page, `[...document.querySelectorAll('.tl-rounds li')].map((l) => l.textContent).join(' | ')`, 'the rounds in the detail');
  check(/round 1/.test(rounds), `the detail lists the rounds (${rounds})`);
  await page.key('ArrowDown', 'ArrowDown', 40);
  await page.key('ArrowLeft', 'ArrowLeft', 37);
  const back = await waitFor(page, `document.activeElement?.dataset.row`, 'the focus back on the first request');
  check(back === group.id, 'Left on a round goes back to its first request');
  await page.key('ArrowLeft', 'ArrowLeft', 37);
  await waitFor(page, `${ROWS}.filter((r) => r.method.includes('state_only')).length === 1`, 'the group closed with Left');
  check(true, 'Left closes the group');
  await shoot(page, 'timeline-rounds');

  // --- a task: its polls grouped under the call that started it ---------------
  const job = await rest('POST', `/api/servers/${modernId}/tools/slow_job:call`, { arguments: { steps: 2 } });
  check(job.status === 200, `slow_job answered (${job.status})`);
  const jobRow = await waitFor(page, row(`r.method.includes('slow_job') && /\\+[2-9]/.test(r.method)`), 'the task\'s polls grouped under slow_job');
  const polls = await page.eval(`${ROWS}.filter((r) => r.method.startsWith('tasks/')).length`);
  check(polls === 0, `the task's polls are grouped under the call that started it (${jobRow.method}; ${polls} loose)`);

  // --- detail: JSON tree viewer, edit and replay -------------------------------
  await page.eval(`document.querySelector('[data-row="${echoRow.id}"]').click()`);
  const trees = await waitFor(page, `document.querySelectorAll('.msg-detail .jt').length === 2 && [...document.querySelectorAll('.msg-detail h4')].map((x) => x.textContent).join('|')`, 'the request and response trees');
  check(/Request/.test(trees) && /Response/.test(trees), `the detail shows request and response in the JSON tree viewer (${trees})`);
  const buttons = await page.eval(`[...document.querySelectorAll('.msg-detail button')].map((b) => b.textContent).join('|')`);
  check(['Pin', 'Break on this', 'Edit before replaying', 'Replay'].every((b) => buttons.split('|').includes(b)),
    `the detail offers pin, break on this, replay and edit and replay (${buttons})`);
  await page.eval(`[...document.querySelectorAll('.msg-detail button')].find((b) => b.textContent === 'Edit before replaying').click()`);
  await page.eval(`(() => { const a = document.querySelector('.ss-replay-form textarea'); a.value = a.value.replace('first words', 'edited words'); a.dispatchEvent(new Event('input')); })()`);
  await page.eval(`document.querySelector('.ss-replay-form button[type=submit]').click()`);
  const replayed = await waitFor(page, `document.querySelector('.ss-replay-one .jt')?.textContent`, 'the replay\'s answer');
  check(/edited words/.test(replayed), `an edited copy was replayed and its answer shown (${replayed.replace(/\s+/g, ' ').slice(0, 100)})`);
  // The same request, edited for the other server's echo, sent there.
  await page.eval(`(() => {
    const f = document.querySelector('.ss-replay-form');
    const s = f.querySelector('select');
    s.value = ${JSON.stringify(modernId)};
    const a = f.querySelector('textarea');
    const m = JSON.parse(a.value);
    m.params.arguments = { text: 'sent to modern' };
    a.value = JSON.stringify(m);
    a.dispatchEvent(new Event('input'));
    f.querySelector('.ss-replay-one').replaceChildren();
    f.querySelector('button[type=submit]').click();
  })()`);
  const elsewhere = await waitFor(page, `document.querySelector('.ss-replay-one .jt, .ss-replay-one .error-box')?.textContent`, 'the replay to the other server');
  check(/sent to modern/.test(elsewhere), `an edited copy was replayed to another server (${elsewhere.replace(/\s+/g, ' ').slice(0, 160)})`);

  // --- pin: stays at the top while traffic arrives -----------------------------
  await page.eval(`document.querySelector('[data-row="${echoRow.id}"]').focus()`);
  await page.key('p', 'KeyP', 80);
  const pinned = await waitFor(page, row(`r.id === ${JSON.stringify(echoRow.id)} && /is-pinned/.test(r.cls)`), 'the pinned row');
  await page.eval(`document.querySelector('#tl-follow').checked || document.querySelector('#tl-follow').click()`);
  const added = await rest('POST', `/api/servers/${fixtureId}/tools/add:call`, { arguments: { a: 1, b: 2 } });
  check(added.status === 200, `add answered (${added.status})`);
  const top = await waitFor(page, `(() => { const v = document.querySelector('.tl-viewport'); v.scrollTop = 0;
    return new Promise((r) => requestAnimationFrame(() => r(${ROWS}.find((x) => x.index === 0)))); })()`, 'the first row');
  const addSeen = await waitFor(page, `${ROWS}.length && (document.querySelector('.tl-viewport').scrollTop = 1e9, true) &&
    new Promise((r) => requestAnimationFrame(() => r(${ROWS}.some((x) => x.method.includes(' add')))))`, 'the add call');
  check(pinned && top.id === echoRow.id && addSeen, `a pinned row stays at the top while new calls arrive (${top.method})`);
  await shoot(page, 'timeline-pinned');
  await page.eval(`document.querySelector('.tl-viewport').scrollTop = 0`);
  await waitFor(page, `document.querySelector('[data-row="${echoRow.id}"]')`, 'the pinned row in view');
  await page.eval(`document.querySelector('[data-row="${echoRow.id}"]').click()`);
  await page.eval(`[...document.querySelectorAll('.msg-detail button')].find((b) => b.textContent === 'Unpin').click()`);
  const unpinned = await waitFor(page, `(() => { const r = ${row(`r.id === ${JSON.stringify(echoRow.id)}`)}; return r && !/is-pinned/.test(r.cls) && r; })()`, 'the unpinned row');
  check(unpinned.index > 0, `unpinned, it goes back to its place (index ${unpinned.index})`);

  // --- History: same viewer, probe, replay, jump to the session ------------------
  await page.click('#nav-history');
  await waitFor(page, `document.querySelectorAll('table.history tbody tr').length >= 3`, 'the history table');
  const historyProbe = await page.eval(`(() => { const r = [...document.querySelectorAll('table.history tbody tr')].find((x) => x.children[1].textContent === 'fixture' && x.children[2].textContent.startsWith('server/discover'));
    return r ? { cls: r.className, ok: r.children[5].textContent } : null; })()`);
  check(historyProbe && /is-probe/.test(historyProbe.cls) && !/is-error/.test(historyProbe.cls) && historyProbe.ok === 'probe',
    `History shows the era probe as a probe (${JSON.stringify(historyProbe)})`);
  const slowRow = await page.eval(`[...document.querySelectorAll('table.history tbody tr')].find((x) => x.children[3].textContent === 'slow')?.className`);
  check(/is-slow/.test(slowRow || ''), `History marks the slow call (${slowRow})`);
  const failRow = await page.eval(`[...document.querySelectorAll('table.history tbody tr')].find((x) => x.children[3].textContent === 'fail')?.className`);
  check(/is-error/.test(failRow || ''), `History marks the failed call (${failRow})`);
  await page.eval(`[...document.querySelectorAll('table.history tbody tr')].find((x) => x.children[3].textContent === 'echo' && !x.children[2].textContent.includes('round')).querySelector('button').click()`);
  const historyDetail = await waitFor(page, `(() => { const d = document.querySelector('#history-detail');
    return d.querySelectorAll('.jt').length >= 1 && { trees: d.querySelectorAll('.jt').length, replay: Boolean(d.querySelector('.ss-replay-form')),
      session: d.querySelector('a.button')?.getAttribute('href') }; })()`, 'the history detail');
  check(historyDetail.trees === 2 && historyDetail.replay && /^#\/sessions\/./.test(historyDetail.session || ''),
    `History's detail uses the JSON tree viewer, offers replay and links its session (${JSON.stringify(historyDetail)})`);
  await shoot(page, 'history-detail');
  await page.eval(`document.querySelector('#history-detail a.button').click()`);
  const sessionView = await waitFor(page, `location.hash.startsWith('#/sessions/') && document.querySelector('#title-sessions') && document.querySelectorAll('.ss-msg').length > 0 && location.hash`, 'the session of the message');
  check(sessionView === historyDetail.session, `History jumps from a message to its session (${sessionView})`);

  // --- History pages by the daemon's page tokens -------------------------------
  for (let i = 0; i < 55; i += 1) {
    await rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: `page filler ${i}` } });
  }
  await page.eval(`location.hash = '#/history'`);
  await waitFor(page, `document.querySelector('#title-history')`, 'History again');
  await page.eval(`(() => { const m = [...document.querySelectorAll('form.filters input[type=search]')][0]; m.value = 'tools/call';
    document.querySelector('form.filters').requestSubmit(); })()`);
  const pager = `(() => { const n = document.querySelector('nav.pager'); if (!n) return null; const [newer, older] = n.querySelectorAll('button');
    return { status: n.querySelector('[role=status]').textContent, newer: !newer.disabled, older: !older.disabled,
      rows: document.querySelectorAll('table.history tbody tr').length,
      firstId: document.querySelector('table.history tbody tr')?.children[6].textContent }; })()`;
  // The filtered page, not the unfiltered one the view drew first: its total.
  const calls = (await rest('GET', '/api/history?method=tools/call&limit=1')).body.total;
  const firstPage = await waitFor(page, `(() => { const p = ${pager}; return p && p.rows === 50 && p.status === '1–50 of ${calls}' && p; })()`, 'the first history page');
  check(firstPage.older && !firstPage.newer, `History's first page offers Older only (${JSON.stringify(firstPage)})`);
  await page.eval(`document.querySelectorAll('nav.pager button')[1].click()`);
  const secondPage = await waitFor(page, `(() => { const p = ${pager}; return p && p.status.startsWith('51–') && p; })()`, 'the second history page');
  check(secondPage.newer && secondPage.rows >= 5 && secondPage.firstId !== firstPage.firstId,
    `History's Older goes on from the page token (${JSON.stringify(secondPage)})`);
  await page.eval(`document.querySelectorAll('nav.pager button')[0].click()`);
  const backPage = await waitFor(page, `(() => { const p = ${pager}; return p && p.status.startsWith('1–50') && p; })()`, 'the first page again');
  check(backPage.firstId === firstPage.firstId, `History's Newer comes back to the first page (${JSON.stringify(backPage)})`);

  // --- an elicitation drawn before its request's text arrived ------------------
  // The daemon's Struct sorts the fields; once the raw request is seen, an
  // untouched card is drawn again in the server's order.
  await page.eval(`location.hash = '#/pending'`);
  await waitFor(page, `document.querySelector('#title-pending')`, 'Pending');
  const labels = `[...document.querySelectorAll('.pending-card[aria-label*="late order"] .elicit-form .field > label')].map((l) => l.textContent).join('|')`;
  await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const now = Date.now();
    const prop = (title) => ({ type: 'string', title });
    state.store.pending.set('late', { id: 'late', serverId: ${JSON.stringify(fixtureId)}, kind: 'ELICITATION', method: 'late order',
      params: { message: 'Three fields', requestedSchema: { type: 'object', properties: { alpha: prop('Alpha'), mid: prop('Mid'), zulu: prop('Zulu') } } },
      receivedAt: now, deadline: now + 600000, status: 'PENDING', seenAt: now + 600000 });
    state.emit('pending', null);
  })()`);
  const sorted = await waitFor(page, labels, 'the card in sorted order');
  await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const raw = JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'elicitation/create', params: { message: 'Three fields',
      requestedSchema: { type: 'object', properties: { zulu: { type: 'string', title: 'Zulu' }, alpha: { type: 'string', title: 'Alpha' }, mid: { type: 'string', title: 'Mid' } } } } });
    state.emit('message', { timestamp: Date.now(), message: { timestamp: Date.now(), serverId: ${JSON.stringify(fixtureId)}, sessionId: 'late',
      direction: 'SERVER_TO_CLIENT', kind: 'request', jsonrpcId: '99', method: 'elicitation/create', raw } });
  })()`);
  const reordered = await waitFor(page, `(() => { const t = ${labels}; return t.startsWith('Zulu') && t; })()`, 'the card in the server\'s order');
  check(sorted === 'Alpha|Mid|Zulu' && reordered === 'Zulu|Alpha|Mid',
    `an elicitation drawn before its request arrived is redrawn in the server's order (${sorted} → ${reordered})`);
  await page.eval(`(async () => { const state = await import('/ui/state.js'); state.store.pending.delete('late'); state.emit('pending', null); })()`);

  await page.eval(`location.hash = '#/timeline'`);
  await waitFor(page, `document.querySelector('#title-timeline')`, 'Live traffic again');
  await a11y(page, 'timeline');

  // --- the HTTP exchange of an HTTP upstream and of a front door ----------------
  const httpFixture = spawn(process.execPath, [fixtureScript, 'streamableHttp'],
    { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, PORT: '0' } });
  children.push({ child: httpFixture });
  const [listening] = await waitForLine(httpFixture.stderr, /\{"listening".*\}/, 'the fixture over Streamable HTTP');
  const httpPort = JSON.parse(listening).listening;
  const webId = await addServer({ name: 'web', transport: 'streamableHttp', url: `http://127.0.0.1:${httpPort}/mcp`,
    headers: { Authorization: 'Bearer ui-secret-123' } });
  const addAnswer = await rest('POST', `/api/servers/${webId}/tools/add:call`, { arguments: { a: 2, b: 3 } });
  check(addAnswer.status === 200, `add answered over Streamable HTTP (${addAnswer.status})`);
  const addRow = await waitFor(page, row(`r.method.includes(' add') && r.dur.endsWith('ms')`), 'the add call over HTTP');
  await page.eval(`document.querySelector('[data-row="${addRow.id}"]').click()`);
  const upstreamHttp = await waitFor(page, `(() => { const s = document.querySelector('.msg-detail .msg-http');
    return s && /→/.test(s.textContent) && s.textContent; })()`, 'the HTTP exchange in the detail');
  check(/HTTP: POST \/mcp → 200/.test(upstreamHttp), `the detail shows the upstream's HTTP exchange (${upstreamHttp.slice(0, 120)})`);
  check(/Bearer \*\*\*\(13 chars\)/.test(upstreamHttp) && !upstreamHttp.includes('ui-secret-123'),
    'its headers are shown with Authorization masked');
  await shoot(page, 'timeline-http');
  // A client of the front door: its POST and the front door's answer.
  const door = `${base}/servers/web/mcp`;
  const doorHeaders = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const init = await fetch(door, { method: 'POST', headers: doorHeaders, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ui-test', version: '1' } } }) });
  const doorSession = init.headers.get('mcp-session-id');
  await init.text();
  check(init.status === 200 && !!doorSession, `the front door opened a session (${init.status})`);
  const doorCall = await fetch(door, { method: 'POST', headers: { ...doorHeaders, 'Mcp-Session-Id': doorSession, 'MCP-Protocol-Version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 20, b: 22 } } }) });
  await doorCall.text();
  check(doorCall.status === 200, `add answered through the front door (${doorCall.status})`);
  // The front door's answer is recorded once given: wait for it in history.
  const deadline = Date.now() + 30000;
  let recorded = null;
  while (!recorded && Date.now() < deadline) {
    const listed = await rest('GET', `/api/messages?serverId=${encodeURIComponent(webId)}&method=tools%2Fcall&direction=CLIENT_TO_SERVER`);
    recorded = (listed.body?.messages || []).find((m) => m.http && m.http.path === '/servers/web/mcp' && m.http.status === 200);
    if (!recorded) await new Promise((r) => setTimeout(r, 100));
  }
  check(!!recorded, 'the front door\'s request is in history with its HTTP exchange');
  const doorRow = await waitFor(page, `(() => { const rows = ${ROWS}.filter((r) => r.method.includes(' add') && r.dur.endsWith('ms'));
    return rows.length === 2 && rows.sort((x, y) => y.index - x.index)[0]; })()`, 'the front door\'s add call');
  await page.eval(`document.querySelector('[data-row="${doorRow.id}"]').click()`);
  const doorHttp = await waitFor(page, `(() => { const s = document.querySelector('.msg-detail .msg-http');
    return s && s.textContent.includes('/servers/web/mcp') && s.textContent; })()`, 'the front door\'s exchange in the detail');
  check(doorHttp.includes('HTTP: POST /servers/web/mcp → 200') && /mcp-session-id/i.test(doorHttp),
    `the detail shows the front door's exchange (${doorHttp.slice(0, 160)})`);

  // --- Live traffic keeps the newest 50,000 rows as messages stream in --------
  // A pinned row that ages out goes too; the list and its count stay right
  // while the view adds only what came in.
  await page.eval(`document.querySelector('.tl-viewport').scrollTop = 0`);
  const oldest = await waitFor(page, row('r.index === 0'), 'the oldest row');
  await page.eval(`document.querySelector('[data-row="${oldest.id}"]').click()`);
  await page.eval(`document.querySelector('[data-row="${oldest.id}"]').focus()`);
  await page.key('p', 'KeyP', 80);
  await waitFor(page, row(`r.id === ${JSON.stringify(oldest.id)} && /is-pinned/.test(r.cls)`), 'the oldest row pinned');
  const streamed = await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const total = 50010;
    for (let first = 0; first < total; first += 5001) {
      for (let i = first; i < Math.min(total, first + 5001); i++) {
        const now = Date.now();
        state.emit('message', { timestamp: now, message: { timestamp: now, serverId: 'synthetic', sessionId: 'synthetic', direction: 'CLIENT_TO_SERVER',
          kind: 'notification', method: 'notifications/message', jsonrpcId: 's' + i, raw: '{"jsonrpc":"2.0","method":"notifications/message"}' } });
      }
      await frame();
    }
    return document.querySelector('#tl-status').textContent;
  })()`);
  await page.eval(`document.querySelector('.tl-viewport').scrollTop = 0`);
  const first = await waitFor(page, `(() => { const r = ${row('r.index === 0')}; return r && r.id !== ${JSON.stringify(oldest.id)} && r; })()`, 'the first row after the stream');
  const firstId = await page.eval(`document.querySelector('[data-row="${first.id}"] .c-id').textContent`);
  await page.eval(`document.querySelector('.tl-viewport').scrollTop = 1e9`);
  const lastId = await waitFor(page, `[...document.querySelectorAll('.tl-body .tl-row .c-id')].map((c) => c.textContent).find((t) => t === 's50009')`, 'the newest row');
  check(streamed === '50000 of 50000 messages' && firstId === 's10' && lastId === 's50009',
    `Live traffic keeps the newest 50,000 rows, the pinned one aged out with the rest (${streamed}; ${firstId} … ${lastId})`);
  // Then a few at a time, as live traffic comes: the oldest make room.
  const trickled = await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (let i = 50010; i < 50030; i++) {
      const now = Date.now();
      state.emit('message', { timestamp: now, message: { timestamp: now, serverId: 'synthetic', sessionId: 'synthetic', direction: 'CLIENT_TO_SERVER',
        kind: 'notification', method: 'notifications/message', jsonrpcId: 's' + i, raw: '{"jsonrpc":"2.0","method":"notifications/message"}' } });
      if (i % 5 === 4) await frame();
    }
    document.querySelector('.tl-viewport').scrollTop = 0;
    await frame();
    return [document.querySelector('#tl-status').textContent, document.querySelector('.tl-body .tl-row .c-id').textContent];
  })()`);
  check(trickled[0] === '50000 of 50000 messages' && trickled[1] === 's30',
    `and as they trickle in, the oldest rows leave the list (${trickled.join('; first ')})`);
  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  const shown = page && await page.eval(`document.querySelector('main').innerText.slice(0, 3000)`).catch(() => null);
  if (shown) console.error(`the page showed:\n${shown}`);
} finally {
  await run.end();
}
