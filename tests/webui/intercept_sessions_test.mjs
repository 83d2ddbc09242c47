// The Intercept and Sessions views end to end: headless Chromium (Debian's)
// drives a real inspectord (--http on port 0) with the fixture server.
//   Intercept: a breakpoint added from the form on tools/call holds a call
//   made from the Tools view (in one tab) while the Intercept view (another
//   tab of the same browser) shows it held; the edit is checked (bad JSON,
//   a changed id) and its diff names the changed path; the caller sees the
//   answer to the modified call; a dropped call's caller sees the drop
//   error; "Break on this" in Live traffic fills the form; enable, disable,
//   remove and the hold timeout reach the daemon; in INTERCEPT mode a held
//   call shows the call waiting behind it, and Passthrough releases both.
//   Sessions: a session recorded through a front door is named, opened as
//   a timeline, exported (a download), changed and imported (a file
//   upload), one request is edited and replayed, and the import replayed
//   against the fixture: the diff names the changed path.
// Every control of both views has a label and is reached with Tab;
// screenshots at 1280x800 and 390x844 go to --artifacts.
//
//   node intercept_sessions_test.mjs --inspectord PATH --fixture PATH --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, TestRun, LOW_CONTRAST } from './harness.mjs';

const args = parseArgs('intercept_sessions_test.mjs', { inspectord: 'PATH', fixture: 'PATH', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-webui-is-', 170);
const { dir, children, servers, check } = run;

const shoot = (page, name) => shootViews(page, args.artifacts, name);

// Every form control and button of the view has an accessible name.
const UNLABELLED = `[...document.querySelectorAll('main input, main select, main textarea, main button, main summary, main [tabindex="0"]')]
  .filter((el) => !el.closest('[hidden]') && el.type !== 'hidden')
  .filter((el) => {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return false;
    if (el.tagName === 'BUTTON' || el.tagName === 'SUMMARY' || el.tagName === 'A' || el.classList.contains('jt-row')) return el.textContent.trim() === '';
    return !(el.labels && el.labels.length && [...el.labels].some((l) => l.textContent.trim()));
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

// Tab from the top of the page until focus has been on every enabled
// control of <main> (or 400 presses); returns the ones never reached.
async function unreachable(page) {
  const total = await page.eval(`(() => {
    const all = [...document.querySelectorAll('main a[href], main button, main input, main select, main textarea, main [tabindex="0"]')]
      .filter((el) => !el.disabled && !el.closest('[hidden]') && el.getAttribute('tabindex') !== '-1' && el.getClientRects().length);
    all.forEach((el, i) => { el.dataset.kb = String(i); });
    window.__kbSeen = new Set();
    document.addEventListener('focusin', (e) => { if (e.target.dataset && e.target.dataset.kb) window.__kbSeen.add(e.target.dataset.kb); });
    document.activeElement?.blur();
    return all.length;
  })()`);
  for (let i = 0; i < 400; i++) {
    await page.tab();
    if (i % 10 === 9 && await page.eval(`window.__kbSeen.size >= ${total}`)) break;
  }
  const missed = await page.eval(`[...document.querySelectorAll('main [data-kb]')].filter((el) => !window.__kbSeen.has(el.dataset.kb)).map((el) => el.outerHTML.slice(0, 100))`);
  await page.eval(`document.querySelectorAll('main [data-kb]').forEach((el) => delete el.dataset.kb)`);
  return { total, missed };
}

async function accessible(page, view) {
  const lowContrast = await page.eval(LOW_CONTRAST);
  check(lowContrast.length === 0, `the text of ${view} has enough contrast (WCAG AA)${lowContrast.length ? `: ${lowContrast.join(' ; ')}` : ''}`);
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of ${view} has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);
  const { total, missed } = await unreachable(page);
  check(total > 3 && missed.length === 0, `Tab reaches every control of ${view} (${total})${missed.length ? `; not: ${missed.join(' ; ')}` : ''}`);
}

// A tab in the background gets no animation frames (waitFor counts on
// them): the tab acted on or watched comes to the front first.
let shown = null;
async function front(page) {
  if (shown === page) return page;
  await page.send('Page.bringToFront');
  shown = page;
  return page;
}

// Clicks the button of `scope` whose text (or aria-label) is `text`.
function clickButton(page, scope, text) {
  return page.eval(`(() => {
    const b = [...document.querySelectorAll(${JSON.stringify(`${scope} button`)})]
      .find((x) => x.textContent.trim() === ${JSON.stringify(text)} || x.getAttribute('aria-label') === ${JSON.stringify(text)});
    if (!b) throw new Error('no button ' + ${JSON.stringify(text)} + ' in ' + ${JSON.stringify(scope)});
    b.scrollIntoView({ block: 'center' });
    b.click();
    return true;
  })()`);
}

try {
  const { daemon, signInUrl, base, token, withToken, rest } = await run.startDaemon(args.inspectord, []);

  // The fixture server, connected.
  const created = await rest('POST', '/config', { name: 'fixture', transport: 'stdio', command: process.execPath, args: [args.fixture, 'stdio'] });
  const fixtureId = created.body && (created.body.id || created.body.server?.id);
  check(created.status < 300 && fixtureId, `the fixture server was added (${created.status})`);
  const connected = await rest('POST', `/api/servers/${fixtureId}/connect`, {});
  check(connected.status === 200, `the fixture connected (${connected.status})`);

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  browser.child.on('exit', (code, signal) => {
    if (!run.stopping) console.error(`Chromium exited early (${code ?? signal}):\n${browser.stderr}`);
  });
  // Two tabs of one browser: the caller (Tools) and the person at Intercept.
  const caller = await browser.newPage();
  await caller.viewport(1280, 800);
  await caller.goto(signInUrl);
  await (await front(caller)).waitFor(`document.querySelector('#title-servers')`, 'the servers view');
  const desk = await browser.newPage();
  shown = desk;
  await desk.viewport(1280, 800);
  await desk.goto(`${base}/#/intercept`);
  await (await front(desk)).waitFor(`document.querySelector('#title-intercept') && document.querySelector('.bp-form')`, 'the intercept view');
  check(true, 'a second tab of the signed-in browser opens the Intercept view');
  const mode = await (await front(desk)).eval(`document.querySelector('#ic-mode-name').textContent`);
  check(mode === 'PASSTHROUGH', `the mode is shown (${mode})`);
  await shoot(await front(desk), 'intercept-empty');

  // --- a breakpoint from the form -------------------------------------------
  const formLabels = await (await front(desk)).eval(`[...document.querySelectorAll('.bp-form label')].map((l) => l.textContent.trim())`);
  const keys = ['Server', 'Session', 'Direction', 'Kind', 'Method', 'Target', 'Pattern', 'JSON Pointer', 'Value at the pointer', 'Value pattern', 'Once', 'Unanswered', 'Add it disabled'];
  check(keys.every((k) => formLabels.some((l) => l.startsWith(k))), `the breakpoint form has every key of inspectorctl break (${formLabels.join(', ')})`);
  // A value without a pointer is refused in the page, a bad RE2 by the daemon.
  await (await front(desk)).fill('#bp-value', '"x"');
  await (await front(desk)).click('.bp-form button[type=submit]');
  const noPointer = await (await front(desk)).waitFor(`document.querySelector('.bp-form .error-box')?.textContent`, 'the value-without-pointer refusal');
  check(/JSON Pointer/.test(noPointer), `a value without a pointer is refused (${noPointer})`);
  await (await front(desk)).fill('#bp-value', '');
  await (await front(desk)).fill('#bp-pattern', '(unclosed');
  await (await front(desk)).click('.bp-form button[type=submit]');
  const badRe = await (await front(desk)).waitFor(`(() => { const t = document.querySelector('.bp-form .error-box')?.textContent || ''; return /INVALID_REQUEST/.test(t) && !/JSON Pointer/.test(t) && t; })()`, 'the bad pattern refusal');
  check(/pattern/i.test(badRe), `the daemon's refusal of a bad expression is shown (${badRe.slice(0, 80)})`);
  await (await front(desk)).fill('#bp-pattern', '');
  await (await front(desk)).fill('#bp-method', 'tools/call');
  await (await front(desk)).eval(`(() => { const s = document.querySelector('#bp-server'); s.value = ${JSON.stringify(fixtureId)}; })()`);
  await (await front(desk)).eval(`(() => { const s = document.querySelector('#bp-direction'); s.value = 'CLIENT_TO_SERVER'; })()`);
  await (await front(desk)).click('.bp-form button[type=submit]');
  await (await front(desk)).waitFor(`document.querySelector('tr[data-bp="bp-1"]')`, 'bp-1 in the table');
  const bpRest = await rest('GET', '/api/intercept/breakpoints');
  const bp1 = (bpRest.body.breakpoints || [])[0] || {};
  check(bp1.id === 'bp-1' && bp1.enabled && bp1.method === 'tools/call' && bp1.direction === 'CLIENT_TO_SERVER' && bp1.serverId,
    `the form added the breakpoint (${JSON.stringify(bp1)})`);

  // --- hold a call made from the Tools view; modify it ------------------------
  await (await front(caller)).click('#nav-explore');
  await (await front(caller)).waitFor(`[...document.querySelectorAll('.item-name')].some((e) => e.textContent === 'echo')`, 'the tool list');
  await (await front(caller)).eval(`[...document.querySelectorAll('.item')].find((b) => b.querySelector('.item-name').textContent === 'echo').click()`);
  await (await front(caller)).waitFor(`document.querySelector('.tool-form')`, 'the echo form');
  await (await front(caller)).eval(`document.querySelector('.tool-form .field textarea, .tool-form .field input').id = 't-message'`);
  await (await front(caller)).fill('#t-message', 'as typed');
  await (await front(caller)).click('.tool-form button[type=submit]');
  const heldTitle = await (await front(desk)).waitFor(`document.querySelector('.held-card h5')?.textContent`, 'the held call in Intercept');
  check(/tools\/call echo/.test(heldTitle), `the call is held, shown live (${heldTitle})`);
  const bannerText = await (await front(caller)).waitFor(`!document.querySelector('#held-banner').hidden && document.querySelector('#held-banner').textContent`, 'the held banner in the caller\'s tab');
  check(/1 message is held/.test(bannerText), `a banner on the other views says a message is held (${bannerText.slice(0, 40)})`);
  const hits = await (await front(desk)).waitFor(`document.querySelector('tr[data-bp="bp-1"] .bp-hits')?.textContent === '1' && '1'`, 'the hit count');
  check(hits === '1', 'the breakpoint counts its hit');
  const running = await (await front(caller)).eval(`document.querySelector('.tool-form button[type=submit]').disabled && !document.querySelector('.tool-result')`);
  check(running, 'the caller still waits');
  await shoot(await front(desk), 'intercept-held');
  await clickButton(await front(desk), '.held-card', 'Modify…');
  await (await front(desk)).waitFor(`document.querySelector('.held-editor textarea')`, 'the editor');
  const original = await (await front(desk)).eval(`document.querySelector('.held-editor textarea').value`);
  const message = JSON.parse(original);
  await (await front(desk)).fill('.held-editor textarea', original.replace(/}\s*$/, ''));
  const notJson = await (await front(desk)).eval(`[document.querySelector('.held-editor .edit-check').textContent, document.querySelector('.held-editor button[type=submit]').disabled]`);
  check(/not JSON/.test(notJson[0]) && notJson[1], `broken JSON is refused before sending (${notJson[0].slice(0, 50)})`);
  await (await front(desk)).fill('.held-editor textarea', JSON.stringify({ ...message, id: 'another' }, null, 2));
  const otherId = await (await front(desk)).eval(`[document.querySelector('.held-editor .edit-check').textContent, document.querySelector('.held-editor button[type=submit]').disabled]`);
  check(/id must stay/.test(otherId[0]) && otherId[1], `a changed id is refused before sending (${otherId[0]})`);
  const edited = structuredClone(message);
  edited.params.arguments.message = 'changed at the desk';
  await (await front(desk)).fill('.held-editor textarea', JSON.stringify(edited, null, 2));
  const diffPaths = await (await front(desk)).waitFor(`[...document.querySelectorAll('.held-editor .diff-path')].map((e) => e.textContent).join(',')`, 'the diff of the edit');
  check(diffPaths === '/params/arguments/message', `the diff names the changed path (${diffPaths})`);
  const marked = await (await front(desk)).eval(`[...document.querySelectorAll('.held-editor .diff-side .mark-changed')].map((e) => e.dataset.path).join(',')`);
  check(marked.includes('/params/arguments/message'), `the changed path is highlighted on both sides (${marked})`);
  await shoot(await front(desk), 'intercept-modify');
  await accessible(await front(desk), 'the held message\'s editor');
  await (await front(desk)).click('.held-editor button[type=submit]');
  const answer = await (await front(caller)).waitFor(`document.querySelector('.tool-result .text-content')?.textContent`, 'the answer in the Tools view');
  check(answer === 'changed at the desk', `the caller sees the answer to the modified call (${answer})`);
  await (await front(desk)).waitFor(`!document.querySelector('.held-card') && document.querySelector('#ic-held-empty')`, 'the held list to empty');
  await (await front(caller)).waitFor(`document.querySelector('#held-banner').hidden`, 'the banner to go');
  check(true, 'the held list and the banner clear once it is sent');

  // --- drop another ---------------------------------------------------------
  await (await front(caller)).fill('#t-message', 'to be dropped');
  await (await front(caller)).click('.tool-form button[type=submit]');
  await (await front(desk)).waitFor(`document.querySelector('.held-card')`, 'the second held call');
  await clickButton(await front(desk), '.held-card', 'Drop');
  const dropped = await (await front(caller)).waitFor(`document.querySelector('.result .error-box')?.textContent`, 'the drop error in the Tools view');
  check(/INTERCEPT_DROPPED/.test(dropped), `the caller sees the drop error (${dropped.slice(0, 80)})`);

  // --- "Break on this" from Live traffic --------------------------------------
  await (await front(caller)).click('#nav-timeline');
  await (await front(caller)).waitFor(`[...document.querySelectorAll('.tl-row')].some((r) => r.querySelector('.c-method').textContent.startsWith('tools/call') && r.querySelector('.c-kind').textContent === 'request')`, 'the call in Live traffic');
  await (await front(caller)).eval(`[...document.querySelectorAll('.tl-row')].find((r) => r.querySelector('.c-method').textContent.startsWith('tools/call') && r.querySelector('.c-kind').textContent === 'request').click()`);
  await (await front(caller)).waitFor(`document.querySelector('.msg-detail')`, 'the message detail');
  await clickButton(await front(caller), '.msg-detail', 'Break on this');
  const filled = await (await front(caller)).waitFor(`location.hash === '#/intercept' && document.querySelector('#bp-method')?.value &&
    [document.querySelector('#bp-server').value, document.querySelector('#bp-direction').value, document.querySelector('#bp-method').value, document.querySelector('#bp-target').value].join('|')`, 'the form filled from the message');
  check(filled === `${fixtureId}|CLIENT_TO_SERVER|tools/call|echo`, `"Break on this" fills the form from the message (${filled})`);
  await (await front(caller)).click('.bp-form button[type=submit]');
  await (await front(caller)).waitFor(`document.querySelector('tr[data-bp="bp-2"]')`, 'bp-2 in the table');
  check(true, 'a breakpoint was added from a message');

  // --- enable, disable, remove, hold timeout ----------------------------------
  await clickButton(await front(caller), 'tr[data-bp="bp-1"]', 'Disable bp-1');
  await (await front(caller)).waitFor(`document.querySelector('tr[data-bp="bp-1"]')?.textContent.includes('disabled')`, 'bp-1 disabled');
  let list = (await rest('GET', '/api/intercept/breakpoints')).body.breakpoints;
  check(list.find((b) => b.id === 'bp-1').enabled !== true, 'Disable reaches the daemon');
  await clickButton(await front(caller), 'tr[data-bp="bp-1"]', 'Enable bp-1');
  await (await front(caller)).waitFor(`document.querySelector('tr[data-bp="bp-1"] td:nth-child(4)')?.textContent === 'enabled'`, 'bp-1 enabled');
  list = (await rest('GET', '/api/intercept/breakpoints')).body.breakpoints;
  check(list.find((b) => b.id === 'bp-1').enabled === true, 'Enable reaches the daemon');
  await clickButton(await front(caller), 'tr[data-bp="bp-1"]', 'Reset the hits of bp-1');
  await (await front(caller)).waitFor(`document.querySelector('tr[data-bp="bp-1"] .bp-hits')?.textContent === '0'`, 'the hits reset');
  for (const id of ['bp-1', 'bp-2']) {
    await clickButton(await front(caller), `tr[data-bp="${id}"]`, `Remove ${id}`);
    await (await front(caller)).waitFor(`!document.querySelector('tr[data-bp="${id}"]')`, `${id} removed`);
  }
  list = (await rest('GET', '/api/intercept/breakpoints')).body.breakpoints || [];
  check(list.length === 0, `Remove reaches the daemon (${list.length} left)`);
  await (await front(caller)).fill('#ic-timeout', '45000');
  await (await front(caller)).click('.ic-timeout button[type=submit]');
  let st = null;
  for (const started = Date.now(); Date.now() - started < 10000;) {
    st = (await rest('GET', '/api/intercept')).body;
    if (st.holdTimeoutMs === 45000) break;
    await (await front(caller)).eval('new Promise((r) => requestAnimationFrame(r))');
  }
  check(st.holdTimeoutMs === 45000, `the hold timeout is set from the page (${st.holdTimeoutMs})`);

  // --- INTERCEPT mode: what a held call holds back -----------------------------
  await clickButton(await front(desk), '.ic-mode', 'Intercept everything');
  await (await front(desk)).waitFor(`document.querySelector('#ic-mode-name').textContent === 'INTERCEPT'`, 'INTERCEPT mode');
  const first = rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: 'first' } });
  first.catch(() => {});  // Awaited below.
  await (await front(desk)).waitFor(`document.querySelector('.held-card')`, 'the first call held');
  const second = rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: 'second' } });
  second.catch(() => {});  // Awaited below.
  const behind = await (await front(desk)).waitFor(`document.querySelector('.held-behind')?.textContent`, 'the call waiting behind');
  check(/1 more message waits in this session and direction/.test(behind), `what a held message holds back is shown (${behind.slice(0, 60)})`);
  await shoot(await front(desk), 'intercept-mode');
  await accessible(await front(desk), 'the Intercept view');
  await clickButton(await front(desk), '.ic-mode', 'Passthrough');
  const [a1, a2] = await Promise.all([first, second]);
  check(a1.status === 200 && a2.status === 200 && a1.body.result.content[0].text === 'first' && a2.body.result.content[0].text === 'second',
    'Passthrough releases the held call and the one behind it, in order');

  // INTERCEPT again: a call whose tool asks the client for its roots. Each
  // message is held in its turn, the server's own request too; forwarding
  // the oldest each time, the call completes.
  await desk.waitFor(`document.querySelector('#ic-mode-name').textContent === 'PASSTHROUGH'`, 'PASSTHROUGH');
  await clickButton(await front(desk), '.ic-mode', 'Intercept everything');
  await desk.waitFor(`document.querySelector('#ic-mode-name').textContent === 'INTERCEPT'`, 'INTERCEPT mode again');
  const rootsCall = rest('POST', `/api/servers/${fixtureId}/tools/roots:call`, {});
  rootsCall.catch(() => {});  // Awaited below; a failure there is reported.
  const seen = [];
  for (let i = 0; i < 12; i++) {
    // The next message held, or the call's end.
    const next = await Promise.race([
      desk.waitFor(`(() => {
        const card = [...document.querySelectorAll('.held-card')].find((c) => !${JSON.stringify(seen.map((x) => x.id))}.includes(c.dataset.held));
        return card && { id: card.dataset.held, title: card.querySelector('h5').textContent, group: card.closest('.held-group').querySelector('h4').textContent };
      })()`, `held message ${i + 1} of the roots call`).catch(() => 'timeout'),
      rootsCall.then(() => 'done', () => 'done'),
    ]);
    if (next === 'done' || next === 'timeout') break;
    seen.push(next);
    await clickButton(desk, `.held-card[data-held="${next.id}"]`, `Forward ${next.id}`);
  }
  const rootsAnswer = await rootsCall;
  const held = seen.map((x) => `${/server → client/.test(x.group) ? 's2c' : 'c2s'} ${x.title.replace(/^h-\d+ /, '').replace(/ #.*/, '')}`);
  const c2sCall = held.indexOf('c2s request tools/call roots');
  const s2cAsk = held.indexOf('s2c request roots/list');
  check(rootsAnswer.status === 200 && c2sCall >= 0 && s2cAsk > c2sCall,
    `INTERCEPT mode holds the server's own request in its turn (${held.join(' → ')}; ${rootsAnswer.status})`);

  // Answers that arrive out of order: the page reads the mode again when a
  // message is held or released, and here those reads are answered only 50
  // ms after the switch to Passthrough is, while the held list is still
  // being read (300 ms). Their older answer must not bring INTERCEPT back.
  await (await front(desk)).eval(`(() => {
    const fetch0 = window.fetch;
    let putAnswered;
    const afterPut = new Promise((resolve) => { putAnswered = resolve; });
    window.fetch = async (path, init = {}) => {
      const method = init.method || 'GET';
      if (path === '/api/intercept' && method === 'GET') {
        const answer = await fetch0(path, init);
        await Promise.race([afterPut, new Promise((r) => setTimeout(r, 5000))]);
        await new Promise((r) => setTimeout(r, 50));
        return answer;
      }
      if (path === '/api/intercept/held') await new Promise((r) => setTimeout(r, 300));
      const answer = await fetch0(path, init);
      if (path === '/api/intercept' && method === 'PUT') putAnswered();
      return answer;
    };
    window.restoreFetch = () => { window.fetch = fetch0; };
    return true;
  })()`);
  const late = rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: 'late' } });
  late.catch(() => {});  // Awaited below.
  // Each of its messages is held and forwarded by hand (each hold and each
  // release makes the page read the mode: answered late, as above); then,
  // with nothing held, the switch. A card that was repainted between
  // finding and clicking is found again; the roots call's cards, which may
  // still show a moment, are not taken for the late call's.
  const forwarded = seen.map((x) => x.id);
  for (let i = 0; i < 8; i++) {
    const card = await Promise.race([
      desk.waitFor(`[...document.querySelectorAll('.held-card')].map((c) => c.dataset.held).find((id) => !${JSON.stringify(forwarded)}.includes(id))`,
        'a message of the late call held').catch(() => 'timeout'),
      late.then(() => 'done', () => 'done'),
    ]);
    if (card === 'done' || card === 'timeout') break;
    if (await clickButton(desk, `.held-card[data-held="${card}"]`, `Forward ${card}`).catch(() => false)) {
      forwarded.push(card);
      // Its release seen by the page (which then reads the mode).
      await desk.waitFor(`!document.querySelector('.held-card[data-held="${card}"]')`, `${card} gone from the held list`);
    }
  }
  const lateAnswer = await late;
  await clickButton(await front(desk), '.ic-mode', 'Passthrough');
  await (await front(desk)).waitFor(`document.querySelector('#ic-mode-name').textContent === 'PASSTHROUGH' && !document.querySelector('.held-card')`, 'PASSTHROUGH again')
    .catch(async (error) => {
      const shown = await (await front(desk)).eval(`JSON.stringify({ mode: document.querySelector('#ic-mode-name')?.textContent, held: [...document.querySelectorAll('.held-card')].map((c) => c.dataset.held) })`);
      const daemon = await rest('GET', '/api/intercept/held');
      throw new Error(`${error.message}; the page shows ${shown}; the daemon holds ${JSON.stringify(daemon.body)}`);
    });
  check(lateAnswer.status === 200 && lateAnswer.body.result.content[0].text === 'late',
    'an older answer arriving after the switch does not bring INTERCEPT back; the held call went on');
  await (await front(desk)).eval('window.restoreFetch(), true');
  await rest('PUT', '/api/intercept', { holdTimeoutMs: 0 });

  // --- Sessions: one recorded through the front door -------------------------
  const door = `${base}/servers/fixture/mcp`;
  let doorSession = '';
  const doorCall = async (message) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (doorSession) Object.assign(headers, { 'Mcp-Session-Id': doorSession, 'MCP-Protocol-Version': '2025-06-18' });
    const response = await fetch(door, { method: 'POST', headers, body: JSON.stringify(message) });
    doorSession = response.headers.get('mcp-session-id') || doorSession;
    const text = await response.text();
    if (!text) return null;
    if ((response.headers.get('content-type') || '').includes('text/event-stream')) {
      const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
      return data.find((m) => m.id === message.id) || null;
    }
    return JSON.parse(text);
  };
  const init = await doorCall({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'webui-test', version: '1.0' } } });
  check(init && init.result && doorSession, `a client initialized through the front door (${init && init.result && init.result.protocolVersion})`);
  await doorCall({ jsonrpc: '2.0', method: 'notifications/initialized' });
  const echoed = await doorCall({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { message: 'recorded answer' } } });
  const added = await doorCall({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } });
  check(echoed?.result?.content?.[0]?.text === 'recorded answer' && added?.result, 'two calls through the front door were answered');
  await fetch(door, { method: 'DELETE', headers: { 'Mcp-Session-Id': doorSession, 'MCP-Protocol-Version': '2025-06-18' } });
  let recorded = null;
  for (const started = Date.now(); Date.now() - started < 10000 && !(recorded && recorded.endedAt);) {
    recorded = ((await rest('GET', '/api/sessions?kind=bridge')).body.sessions || [])[0] || null;
    if (!(recorded && recorded.endedAt)) await (await front(caller)).eval('new Promise((r) => requestAnimationFrame(r))');
  }
  check(recorded && recorded.endedAt, `the front door's session is recorded and ended (${recorded && recorded.id})`);

  await (await front(caller)).eval(`location.hash = '#/sessions'`);
  const rowText = await (await front(caller)).waitFor(`(() => {
    const r = document.querySelector('tr[data-session="${recorded.id}"]');
    const text = r && r.innerText.replace(/\\s+/g, ' ');
    return text && !r.querySelector('.ss-client').textContent.includes('…') && text;
  })()`, 'the session in the list with its client');
  check(/bridge/.test(rowText) && /fixture/.test(rowText) && /webui-test 1\.0/.test(rowText) && !/ live /.test(rowText) &&
    Number(await caller.eval(`document.querySelector('tr[data-session="${recorded.id}"] .ss-count').textContent`)) >= 6,
    `the list shows kind, server, client, start, end and count (${rowText})`);
  await shoot(await front(caller), 'sessions');
  await accessible(await front(caller), 'the Sessions list');

  // Open it: its own timeline; name and notes.
  await (await front(caller)).click(`tr[data-session="${recorded.id}"] a`);
  await (await front(caller)).waitFor(`document.querySelector('#ss-name') && document.querySelectorAll('.ss-msg').length >= 6`, 'the session\'s timeline');
  await (await front(caller)).fill('#ss-name', 'echo and add');
  await (await front(caller)).fill('#ss-notes', 'through the front door');
  await (await front(caller)).click('.ss-about button[type=submit]');
  await (await front(caller)).waitFor(`document.querySelector('#title-sessions').textContent === 'Session echo and add'`, 'the name saved');
  const named = (await rest('GET', `/api/sessions/${recorded.id}`)).body;
  check(named.name === 'echo and add' && named.notes === 'through the front door', `name and notes reach the daemon (${named.name}; ${named.notes})`);
  const order = await caller.eval(`[...document.querySelectorAll('.ss-msg')].map((b) => b.dataset.method || b.dataset.kind).join(',')`);
  check(/^(server\/discover,server\/discover,)?initialize,initialize,notifications\/initialized,tools\/call,tools\/call,tools\/call,tools\/call$/.test(order), `the messages are in order (${order})`);
  await (await front(caller)).eval(`[...document.querySelectorAll('.ss-msg')].find((b) => b.dataset.method === 'tools/call' && b.dataset.kind === 'request').click()`);
  await (await front(caller)).waitFor(`document.querySelector('#ss-message .jt')`, 'the message in the tree viewer');
  await (await front(caller)).fill('#ss-message .jt-search', 'recorded');
  const found = await caller.eval(`[document.querySelector('#ss-message .jt-found').textContent, [...document.querySelectorAll('#ss-message .jt-row.found')].map((r) => r.dataset.path).join(',')]`);
  check(found[0] === '1 found' && found[1] === '/params/arguments/message', `the tree viewer's search finds and opens the value (${found.join(' at ')})`);
  await caller.eval(`document.querySelector('#ss-message .jt-row.found').focus()`);
  const chosenPath = await caller.eval(`document.querySelector('#ss-message .jt-path').textContent`);
  await caller.key('ArrowUp', 'ArrowUp', 38);
  await caller.key('ArrowLeft', 'ArrowLeft', 37);
  const afterKeys = await caller.eval(`[document.querySelector('#ss-message .jt-path').textContent, document.activeElement.parentElement.open]`);
  check(chosenPath === '/params/arguments/message' && afterKeys[0] === '/params/arguments' && afterKeys[1] === false,
    `the tree is driven by keys: the chosen path follows, Left closes (${chosenPath} → ${afterKeys.join(', open ')})`);

  // Replay that request, edited, to the fixture.
  await clickButton(await front(caller), '#ss-message', 'Edit before replaying');
  const editor = await caller.eval(`(() => { const t = document.querySelector('.ss-replay-form textarea'); t.id = 'ss-edit'; return t.value; })()`);
  const request = JSON.parse(editor);
  request.params.arguments.message = 'edited replay';
  await (await front(caller)).fill('#ss-edit', JSON.stringify(request, null, 2));
  const editDiff = await caller.eval(`[...document.querySelectorAll('.ss-replay-form .diff-path')].map((e) => e.textContent).join(',')`);
  check(editDiff === '/params/arguments/message', `the edit shows its diff against the recording (${editDiff})`);
  await (await front(caller)).click('.ss-replay-form button[type=submit]');
  const replayed = await (await front(caller)).waitFor(`(() => { const t = document.querySelector('.ss-replay-one .jt')?.textContent || document.querySelector('.ss-replay-one .error-box')?.textContent; return t; })()`, 'the replayed answer');
  check(/"edited replay"/.test(replayed), `an edited request was replayed and its answer shown (${replayed.slice(0, 80)})`);
  await shoot(await front(caller), 'session');
  await accessible(await front(caller), 'a session');

  // Export: a download of the session file.
  const downloads = path.join(dir, 'downloads');
  fs.mkdirSync(downloads);
  await browser.send('Browser.setDownloadBehavior', { behavior: 'allowAndName', downloadPath: downloads, eventsEnabled: true });
  const begun = browser.next('Browser.downloadWillBegin', undefined);
  const done = browser.next('Browser.downloadProgress', undefined, (p) => p.state === 'completed' || p.state === 'canceled');
  await (await front(caller)).click('#ss-export');
  const [{ guid, suggestedFilename }, progress] = await Promise.all([begun, done]);
  check(progress.state === 'completed' && suggestedFilename === `session-${recorded.id}.json`, `Export downloads the session file (${suggestedFilename}, ${progress.state})`);
  const file = JSON.parse(fs.readFileSync(path.join(downloads, guid), 'utf8'));
  check(file.format === 'inspectord-session/1' && file.id === recorded.id && file.metadata.name === 'echo and add' && file.messages.length >= 6,
    `the file is the session (${file.format}, ${file.messages.length} messages)`);

  // The server changed since: the file's echo answer differs from today's.
  let changedAnswers = 0;
  for (const m of file.messages) {
    const content = m.raw && m.raw.result && m.raw.result.content;
    if (content && content[0] && content[0].text === 'recorded answer') {
      content[0].text = 'as it was once';
      changedAnswers++;
    }
  }
  check(changedAnswers === 1, `the recorded answer was changed in the file (${changedAnswers})`);
  const changedFile = path.join(dir, 'changed-session.json');
  fs.writeFileSync(changedFile, JSON.stringify(file, null, 2));

  // Import it (an upload), then replay it against the fixture.
  await (await front(caller)).eval(`location.hash = '#/sessions'`);
  await (await front(caller)).waitFor(`document.querySelector('#ss-import-file')`, 'the import form');
  await (await front(caller)).setFiles('#ss-import-file', [changedFile]);
  await (await front(caller)).click('.ss-import button[type=submit]');
  const importedId = await (await front(caller)).waitFor(`(() => { const m = location.hash.match(/^#\\/sessions\\/(.+)$/); return m && document.querySelector('#ss-name') && decodeURIComponent(m[1]); })()`, 'the imported session');
  check(importedId && importedId !== recorded.id, `the import opened as a session of its own (${importedId})`);
  const importedMeta = await caller.eval(`document.querySelector('.ss-meta').innerText`);
  check(/Imported/.test(importedMeta) && /bridge/.test(importedMeta), 'the imported session says it was imported and keeps its kind');
  await (await front(caller)).eval(`document.querySelector('#ss-replay-server').value = ${JSON.stringify(fixtureId)}`);
  await (await front(caller)).click('.ss-replay button[type=submit]');
  const diffTitle = await (await front(caller)).waitFor(`document.querySelector('.ss-diff h3')?.textContent || document.querySelector('#ss-replay-result .error-box')?.textContent`, 'the replay\'s diff', 30);
  const pairPaths = await caller.eval(`[...document.querySelectorAll('.ss-pair')].map((p) => p.dataset.status + ':' + [...p.querySelectorAll('.diff-path')].map((e) => e.textContent).join('+')).join(' ')`);
  check(/1 of \d+ answers differ/.test(diffTitle) && pairPaths === 'changed:/result/content/0/text',
    `replaying the import against the fixture names the changed path (${diffTitle}; ${pairPaths})`);
  const sides = await caller.eval(`[...document.querySelectorAll('.ss-pair .diff-side')].map((s) => [...s.querySelectorAll('.mark-changed')].map((e) => e.dataset.path + '=' + e.textContent.split(': ').pop()).join(','))`);
  check(sides.length === 2 && sides[0] === '/result/content/0/text="as it was once"' && sides[1] === '/result/content/0/text="recorded answer"',
    `the two answers are side by side, the changed value highlighted on each (${sides.join(' | ')})`);
  await shoot(await front(caller), 'sessions-diff');
  await accessible(await front(caller), 'the replay\'s diff');

  for (const p of [caller, desk]) {
    check(p.consoleErrors.length === 0, `no script errors in the page${p.consoleErrors.length ? `: ${p.consoleErrors.join('; ')}` : ''}`);
  }
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
} finally {
  await run.end();
}
