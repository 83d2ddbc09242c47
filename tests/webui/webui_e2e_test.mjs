// The web UI end to end: headless Chromium (Debian's) drives a real
// inspectord (--http on port 0) with the fixture server, as a person would:
//   - signs in with the URL inspectord printed (the code leaves the address
//     bar, the token is in no script-visible place, the link works once);
//   - adds the fixture server with the form, connects it, lists its tools,
//     calls echo through the form generated from its inputSchema and sees
//     the answer, then sees the request and the response in the timeline;
//   - answers an elicitation from the pending panel (the form from
//     requestedSchema refuses a missing required field first); a URL-mode
//     elicitation's url is a link only when it is http(s);
//   - imports a Claude Desktop file;
//   - walks the views with the keyboard and checks every control has a
//     label; holds 10,000 messages in the timeline with few rows rendered;
// and checks that a request without the cookie, one with a wrong Origin
// and cross-site form posts are refused, that the cookie holds the
// browser's own sign-in rather than the token, and that "Sign out" ends
// it (the old cookie value is refused). Screenshots of each main view at
// 1280x800 and 390x844 go to --artifacts.
//
//   node webui_e2e_test.mjs --inspectord PATH --fixture PATH --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import fs from 'node:fs';
import http from 'node:http';
import process from 'node:process';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, TestRun, LOW_CONTRAST } from './harness.mjs';

const args = parseArgs('webui_e2e_test.mjs', { inspectord: 'PATH', fixture: 'PATH', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-webui-', 150);
const { dir, children, servers, check } = run;

// A page on another origin (127.0.0.1, another port: the same site for
// cookies) whose form posts `server.body` to `server.action` by itself, as
// text/plain so that the body reads as JSON.
function formServer() {
  return new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      const body = server.body || '{}';
      response.writeHead(200, { 'Content-Type': 'text/html' });
      response.end(`<!doctype html><title>another site</title>
        <form id="f" method="POST" enctype="text/plain" action="${server.action}">
        <input type="hidden" name='${body.slice(0, -2)}' value='${body.slice(-2)}'></form>
        <script>document.getElementById('f').submit()</script>`);
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
    servers.push(server);
  });
}

const shoot = (page, name) => shootViews(page, args.artifacts, name);

// Every form control and button of the view has an accessible name.
const UNLABELLED = `[...document.querySelectorAll('main input, main select, main textarea, main button, header select, header button')]
  .filter((el) => !el.closest('[hidden]') && el.type !== 'hidden')
  .filter((el) => {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return false;
    if (el.tagName === 'BUTTON') return el.textContent.trim() === '';
    return !(el.labels && el.labels.length && [...el.labels].some((l) => l.textContent.trim()));
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

try {
  // The other-origin pages, and one of them allowed by --cors-origin.
  const allowedPage = await formServer();
  const strangerPage = await formServer();
  const allowedOrigin = `http://127.0.0.1:${allowedPage.address().port}`;

  const { daemon, signInUrl, base, token, withToken, rest } = await run.startDaemon(args.inspectord, ['--cors-origin', allowedOrigin, '--bridge-port-base', '0']);
  check(/\/ui\/sign-in\?code=[0-9a-f]{64}$/.test(signInUrl), `inspectord printed a sign-in URL (${signInUrl.replace(/code=.*/, 'code=…')})`);

  // --- refused without the cookie or token, or from a wrong Origin --------
  const bare = await fetch(`${base}/config`);
  check(bare.status === 401, `GET /config without cookie or token is refused (${bare.status})`);
  const page0 = await fetch(`${base}/`);
  const html = await page0.text();
  check(page0.status === 200 && html.includes('/ui/app.js') && /default-src 'none'/.test(page0.headers.get('content-security-policy') || ''),
    `GET / serves the UI with a strict CSP (${page0.status})`);
  const foreign = await fetch(`${base}/config`, { method: 'POST', headers: { ...withToken, Origin: 'http://evil.example' }, body: '{}' });
  check(foreign.status === 403, `a wrong Origin is refused even with the token (${foreign.status})`);

  // --- sign in ------------------------------------------------------------
  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  browser.child.on('exit', (code, signal) => {
    if (!run.stopping) console.error(`Chromium exited early (${code ?? signal}):\n${browser.stderr}`);
  });
  const page = await browser.newPage();
  await page.viewport(1280, 800);
  const signInStatus = await page.goto(signInUrl);
  check(signInStatus === 200, `the sign-in link led to the UI (${signInStatus})`);
  const where = await page.eval('location.href');
  check(where === `${base}/`, `the address bar kept neither code nor token (${where})`);
  const scriptVisible = await page.eval('JSON.stringify({cookie: document.cookie, local: localStorage.length, session: Object.keys(sessionStorage)})');
  check(scriptVisible === '{"cookie":"","local":0,"session":[]}', `no token where a script can read it (${scriptVisible})`);
  const { cookies } = await page.send('Network.getCookies', { urls: [base] });
  const session = cookies.find((c) => c.name.startsWith('inspector_session_'));
  check(session && session.httpOnly && session.sameSite === 'Strict',
    `the session cookie is HttpOnly and SameSite=Strict (${session ? `${session.httpOnly} ${session.sameSite}` : 'none'})`);
  check(session && /^[0-9a-f]{64}$/.test(session.value) && session.value !== token,
    'the cookie holds the browser\'s own sign-in, not the session token');
  const again = await fetch(signInUrl, { redirect: 'manual' });
  check(again.status === 401, `the sign-in link works once (${again.status} the second time)`);

  // --- servers: add the fixture server through the form -------------------
  await page.waitFor(`document.querySelector('#title-servers')`, 'the servers view');
  await shoot(page, 'servers-empty');
  await page.click('.view-head button');  // Add server
  await page.waitFor(`document.querySelector('form.editor')`, 'the add form');
  const editor = await page.eval(`[...document.querySelectorAll('form.editor .field > label')].map((l) => l.textContent)`);
  check(editor.includes('Name') && editor.includes('Command'), `the add form has labelled fields (${editor.join(', ')})`);
  const fieldBy = (label) => `[...document.querySelectorAll('form.editor .field')].find((f) => f.querySelector('label').textContent === ${JSON.stringify(label)}).querySelector('input,textarea,select')`;
  await page.eval(`(() => { const s = ${fieldBy('Name')}; s.id = 'e-name'; const c = ${fieldBy('Command')}; c.id = 'e-cmd'; const a = ${fieldBy('Arguments (one per line)')}; a.id = 'e-args'; })()`);
  await page.fill('#e-name', 'fixture');
  await page.fill('#e-cmd', process.execPath);
  await page.fill('#e-args', `${args.fixture}\nstdio`);
  await page.click('form.editor button[type=submit]');
  await page.waitFor(`document.querySelector('tr[data-server="fixture"]')`, 'the fixture row');
  check(true, 'the fixture server was added through the form');
  await page.click('tr[data-server="fixture"] .row-actions button');  // Connect
  // The state event may come before the status with the rest of the row.
  const row = await page.waitFor(`(() => {
    const r = document.querySelector('tr[data-server="fixture"]');
    const text = r && r.innerText.replace(/\\s+/g, ' ');
    return r && r.querySelector('.state').textContent === 'connected' && /2025-\\d\\d-\\d\\d/.test(text) && text;
  })()`, 'the fixture to connect');
  check(/tools/.test(row) && /\b\d{2,}\b/.test(row),
    `Connect shows the server connected with protocol, capabilities and pid (${row})`);
  await shoot(page, 'servers');

  // --- tools: list, call echo through the generated form -------------------
  await page.click('#nav-explore');
  await page.waitFor(`[...document.querySelectorAll('.item-name')].some((e) => e.textContent === 'echo')`, 'the tool list');
  const tools = await page.eval(`[...document.querySelectorAll('.item-name')].map((e) => e.textContent)`);
  check(['echo', 'add', 'elicit'].every((t) => tools.includes(t)), `the tools are listed (${tools.join(', ')})`);
  await page.eval(`[...document.querySelectorAll('.item')].find((b) => b.querySelector('.item-name').textContent === 'echo').click()`);
  await page.waitFor(`document.querySelector('.tool-form')`, 'the echo form');
  const echoLabel = await page.eval(`[...document.querySelectorAll('.tool-form label')].map((l) => l.textContent).join('|')`);
  check(echoLabel.includes('message'), `the form has the schema's field (${echoLabel})`);
  await page.click('.tool-form button[type=submit]');
  const missing = await page.waitFor(`document.querySelector('.tool-form .field-error')?.textContent`, 'the required-field message');
  check(/required/.test(missing), `the form refuses a missing required field (${missing})`);
  await page.eval(`(() => { const i = document.querySelector('.tool-form .field textarea, .tool-form .field input'); i.id = 't-message'; })()`);
  await page.fill('#t-message', 'hello from the browser');
  await page.click('.tool-form button[type=submit]');
  const answer = await page.waitFor(`document.querySelector('.tool-result .text-content')?.textContent`, 'the echo answer');
  check(answer === 'hello from the browser', `echo answered through the form (${answer})`);
  await shoot(page, 'tools');

  // A long call shows its progress and can be cancelled.
  await page.eval(`[...document.querySelectorAll('.item')].find((b) => b.querySelector('.item-name').textContent === 'slow').click()`);
  await page.waitFor(`document.querySelector('.tool-form h3, .detail h3')?.textContent === 'slow'`, 'the slow form');
  await page.eval(`(() => {
    const fields = [...document.querySelectorAll('.tool-form .field')];
    const by = (t) => fields.find((f) => f.querySelector('label')?.textContent.startsWith(t)).querySelector('input');
    by('steps').id = 's-steps'; by('delayMs').id = 's-delay';
  })()`);
  await page.fill('#s-steps', '600');
  await page.fill('#s-delay', '100');
  await page.click('.tool-form button[type=submit]');
  const step = await page.waitFor(`(() => { const t = document.querySelector('.tool-form [role=status]')?.textContent || ''; return /step \\d+ of 600/.test(t) && t; })()`, 'progress of the slow call');
  check(true, `a long call shows its progress (${step})`);
  await page.eval(`[...document.querySelectorAll('.tool-form button')].find((b) => b.textContent === 'Cancel').click()`);
  const cancelled = await page.waitFor(`document.querySelector('.result .error-box')?.textContent`, 'the cancelled call');
  check(/CANCELLED/.test(cancelled), `Cancel ends the call (${cancelled.slice(0, 60)})`);

  // --- timeline: the call and its answer on one row ---------------------------
  await page.click('#nav-timeline');
  const pair = await page.waitFor(`(() => {
    const rows = [...document.querySelectorAll('.tl-row')].filter((r) => r.querySelector('.c-method').textContent.startsWith('tools/call'));
    const req = rows.find((r) => r.querySelector('.c-kind').textContent === 'request' && r.querySelector('.c-dir').textContent === '→' &&
      / ms$/.test(r.querySelector('.c-dur').textContent));
    const res = rows.find((r) => r.querySelector('.c-kind').textContent === 'response');
    return req && (res ? 'a separate response row' : req.querySelector('.c-dur').textContent);
  })()`, 'the tools/call request and its response in the timeline');
  check(/ms$/.test(pair), `the timeline shows the request and its response on one row (${pair})`);
  // Keyboard: focus the list, arrow to a row, the detail pane follows.
  await page.eval(`document.querySelector('.tl-viewport').focus()`);
  await page.key('ArrowUp', 'ArrowUp', 38);
  const detailTitle = await page.waitFor(`document.querySelector('.msg-detail h3')?.textContent`, 'the detail pane');
  const copies = await page.eval(`[...document.querySelectorAll('.msg-detail button')].map((b) => b.textContent).join('|')`);
  check(detailTitle && copies.includes('Copy as curl') && copies.includes('Copy as inspectorctl'),
    `arrow keys select a message; its detail offers the copies (${detailTitle}; ${copies})`);
  const curl = await page.eval(`(async () => { const m = await import('/ui/detail.js'); return m.curlFor('ID', '{"jsonrpc":"2.0","id":1,"method":"ping"}'); })()`);
  check(curl.startsWith('curl ') && curl.includes('/mcp?serverId=ID') && curl.includes('X-Session-Token') && !curl.includes(token),
    'copy as curl names the endpoint and reads the token from its file');
  await shoot(page, 'timeline');

  // --- pending: answer an elicitation from the panel -------------------------
  const list = await rest('GET', '/config');
  const fixtureId = list.body.servers.find((s) => s.name === 'fixture').id;
  const elicited = rest('POST', `/api/servers/${fixtureId}/tools/elicit:call`, { arguments: { message: 'Who are you?' } });
  elicited.catch(() => {});  // Awaited below; a failure there is reported.
  await page.click('#nav-pending');
  await page.waitFor(`document.querySelector('.pending-card .elicit-form')`, 'the elicitation in Pending');
  const badge = await page.eval(`document.querySelector('#nav-pending .badge')?.textContent`);
  check(badge === '1', `the Pending tab counts the waiting request (${badge})`);
  await shoot(page, 'pending');
  await page.click('.elicit-form button[type=submit]');
  const refused = await page.waitFor(`document.querySelector('.elicit-form .field-error')?.textContent`, 'the missing name refused');
  check(/Name is required/.test(refused), `the elicitation form checks before sending (${refused})`);
  // The fields come in the server's order (name, age, colour), not in the
  // sorted order of the daemon's Struct (age, color, name).
  const fieldOrder = await page.eval(`[...document.querySelectorAll('.elicit-form .field > label')].map((l) => l.textContent.replace(' *', '')).join('|')`);
  check(fieldOrder === 'Name|Age|Favourite colour', `the elicitation keeps the server's field order (${fieldOrder})`);
  await page.eval(`(() => {
    const fields = [...document.querySelectorAll('.elicit-form .field')];
    const by = (t) => fields.find((f) => f.querySelector('label')?.textContent.startsWith(t)).querySelector('input,select');
    by('Name').id = 'p-name'; by('Favourite colour').id = 'p-colour';
  })()`);
  await page.fill('#p-name', 'Ada');
  await page.eval(`(() => { const s = document.querySelector('#p-colour'); s.value = [...s.options].find((o) => o.textContent === 'green').value; })()`);
  await page.click('.elicit-form button[type=submit]');
  const result = await elicited;
  const text = result.body && result.body.result && result.body.result.content && result.body.result.content[0].text;
  let got = null;
  try {
    got = JSON.parse(text);
  } catch { /* reported below */ }
  check(result.status === 200 && got && got.action === 'accept' && got.content.name === 'Ada' &&
        got.content.age === 30 && got.content.color === 'green',
    `the server got the form's answer, the default included (${text})`);
  await page.waitFor(`!document.querySelector('.pending-card')`, 'the answered request to leave the panel');

  // A sampling request, answered with a reply typed in the panel.
  const sampled = rest('POST', `/api/servers/${fixtureId}/tools/sample:call`, { arguments: { prompt: 'Say hi' } });
  sampled.catch(() => {});  // Awaited below.
  await page.waitFor(`[...document.querySelectorAll('.pending-card .text-content')].some((e) => e.textContent === 'Say hi')`, 'the sampling request in Pending');
  // The card may still be the elicitation's, leaving: wait for the reply box.
  await page.waitFor(`[...document.querySelectorAll('.pending-card .field')].some((f) => f.querySelector('label')?.textContent.startsWith('Reply') && f.querySelector('textarea'))`, 'the sampling reply box');
  await page.eval(`(() => {
    const field = [...document.querySelectorAll('.pending-card .field')].find((f) => f.querySelector('label').textContent.startsWith('Reply'));
    field.querySelector('textarea').id = 'p-reply';
  })()`);
  await page.fill('#p-reply', 'Hi from a person');
  await page.click('.pending-card button[type=submit]');
  const sample = await sampled;
  const sampleText = sample.body && sample.body.result && sample.body.result.content && sample.body.result.content[0].text;
  check(sample.status === 200 && sampleText === 'Hi from a person', `a sampling request was answered from the panel (${sampleText})`);

  // A URL-mode elicitation: its url is a link only when it is http(s). The
  // daemon refuses other schemes itself, so the UI's own rule is checked in
  // the page: the util function, and a card for an item put in the store.
  const injected = await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const now = Date.now();
    const urls = { 'fake-js': 'javascript:alert(document.domain)', 'fake-data': 'data:text/html,<script>alert(1)</script>' };
    for (const [id, url] of Object.entries(urls)) {
      state.store.pending.set(id, { id, serverId: ${JSON.stringify(fixtureId)}, kind: 'ELICITATION', method: 'elicitation/create',
        params: { mode: 'url', message: 'Open ' + id, url, elicitationId: id }, receivedAt: now, deadline: now + 600000,
        status: 'PENDING', seenAt: now + 600000 });
    }
    state.emit('pending', null);
    const cards = [...document.querySelectorAll('.pending-card')].filter((c) => /Open fake-/.test(c.textContent));
    const links = [...document.querySelectorAll('.pending-card a[href]')].map((a) => a.getAttribute('href'));
    const shown = cards.map((c) => Object.values(urls).some((u) => c.textContent.includes(u)));
    const buttons = cards.filter((c) => [...c.querySelectorAll('a, button')].some((b) => /^Open/.test(b.textContent))).length;
    for (const id of Object.keys(urls)) state.store.pending.delete(id);
    state.emit('pending', null);
    return { cards: cards.length, links, shown, buttons };
  })()`);
  check(injected.cards === 2 && injected.shown.every(Boolean) && !injected.links.some((href) => !/^https?:/i.test(href)) &&
        injected.buttons === 0,
    `the Pending view shows javascript: and data: URLs as text, not links (${JSON.stringify(injected)})`);
  const linked = await page.eval(`(async () => {
    const { webLink } = await import('/ui/util.js');
    const urls = ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:alert(1)', 'java\\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>', 'vbscript:msgbox(1)', 'file:///etc/passwd', 'not a url',
      'https://example.com/connect?id=1', 'http://127.0.0.1:8080/callback'];
    return urls.map((u) => { const el = webLink(u); return [u, el.tagName, el.getAttribute('href'), el.textContent]; });
  })()`);
  const clickable = linked.filter(([, tag, href]) => tag === 'A' || href !== null).map(([u]) => u);
  check(JSON.stringify(clickable) === JSON.stringify(['https://example.com/connect?id=1', 'http://127.0.0.1:8080/callback']),
    `only http(s) URLs become links (${clickable.join(', ')})`);
  check(linked.every(([u, , , text]) => text === u), 'every URL is shown in full, linked or not');
  // An https URL from a real server is a link in its card.
  const visit = rest('POST', `/api/servers/${fixtureId}/tools/elicit_url:call`, { arguments: { url: 'https://example.com/connect?id=7' } });
  visit.catch(() => {});  // Awaited below.
  const href = await page.waitFor(`document.querySelector('.pending-card a[href]')?.getAttribute('href')`, 'the URL-mode elicitation in Pending');
  check(href === 'https://example.com/connect?id=7', `an https URL is a link in its card (${href})`);
  const urlCard = await page.eval(`(() => {
    const card = document.querySelector('.pending-card');
    const a = card.querySelector('a[href]');
    return { text: card.querySelector('.elicit-url code')?.textContent, open: a.textContent, label: a.getAttribute('aria-label'), target: a.target, rel: a.rel };
  })()`);
  check(urlCard.text === 'https://example.com/connect?id=7' && urlCard.open === 'Open in a new tab' &&
        /example\.com/.test(urlCard.label || '') && urlCard.target === '_blank' && /noopener/.test(urlCard.rel),
    `the URL is shown as text with an explicit open button (${JSON.stringify(urlCard)})`);
  await page.eval(`[...document.querySelectorAll('.pending-card button')].find((b) => b.textContent === 'Decline').click()`);
  const visited = await visit;
  const visitText = visited.body?.result?.content?.[0]?.text;
  check(visited.status === 200 && /"decline"/.test(visitText || ''), `the URL-mode elicitation was declined from the panel (${visitText})`);
  await page.waitFor(`!document.querySelector('.pending-card')`, 'the declined request to leave the panel');

  // --- import a Claude Desktop file ------------------------------------------
  await page.click('#nav-servers');
  await page.waitFor(`document.querySelector('#title-servers')`, 'the servers view');
  await page.eval(`[...document.querySelectorAll('.view-head button')].find((b) => b.textContent === 'Import').click()`);
  await page.waitFor(`document.querySelector('form.editor textarea')`, 'the import form');
  const claude = { mcpServers: { 'from-claude': { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1' } } }, preferences: {} };
  await page.eval(`document.querySelector('form.editor textarea').id = 'i-content'`);
  await page.fill('#i-content', JSON.stringify(claude));
  await page.click('form.editor button[type=submit]');
  const imported = await page.waitFor(`document.querySelector('tr[data-server="from-claude"]') && document.querySelector('form.editor .ok')?.textContent`, 'the imported server');
  check(/1 created/.test(imported), `a Claude Desktop file was imported (${imported})`);
  await shoot(page, 'import');

  // Edit it: the form comes filled in, a rename is saved.
  await page.click('tr[data-server="from-claude"] button[aria-label="Edit from-claude"]');
  await page.waitFor(`document.querySelector('form.editor[aria-label="Edit from-claude"]')`, 'the edit form');
  const filled = await page.eval(`(() => {
    const f = document.querySelector('form.editor');
    const by = (t) => [...f.querySelectorAll('.field')].find((x) => x.querySelector('label').textContent === t).querySelector('input,textarea');
    by('Name').id = 'x-name';
    return [by('Command').value, by('Environment (KEY=value per line)').value].join('|');
  })()`);
  check(filled === 'npx|DEBUG=1', `the edit form shows the server's settings (${filled})`);
  await page.fill('#x-name', 'renamed');
  await page.click('form.editor button[type=submit]');
  await page.waitFor(`document.querySelector('tr[data-server="renamed"]') && !document.querySelector('tr[data-server="from-claude"]')`, 'the renamed server');
  check(true, 'a server was renamed through the edit form');
  // Moved from stdio to HTTP: nothing of the command is left behind.
  await page.click('tr[data-server="renamed"] button[aria-label="Edit renamed"]');
  await page.waitFor(`document.querySelector('form.editor[aria-label="Edit renamed"]')`, 'the edit form again');
  await page.eval(`(() => {
    const f = document.querySelector('form.editor');
    const by = (t) => [...f.querySelectorAll('.field')].find((x) => x.querySelector('label').textContent === t).querySelector('input,textarea,select');
    const t = by('Transport');
    t.value = 'streamableHttp';
    t.dispatchEvent(new Event('change'));
    by('URL').id = 'x-url';
  })()`);
  const emptied = await page.eval(`(() => {
    const f = document.querySelector('form.editor');
    const by = (t) => [...f.querySelectorAll('.field')].find((x) => x.querySelector('label').textContent === t).querySelector('input,textarea');
    return [by('Command').value, by('Arguments (one per line)').value, by('Environment (KEY=value per line)').value].join('|');
  })()`);
  check(emptied === '||', `switching to HTTP empties the stdio fields in the form (${emptied})`);
  await page.fill('#x-url', 'http://127.0.0.1:9/mcp');
  await page.click('form.editor button[type=submit]');
  await page.waitFor(`!document.querySelector('form.editor')`, 'the saved HTTP server');
  const moved = (await rest('GET', '/config')).body.servers.find((x) => x.name === 'renamed');
  check(moved && moved.transport === 'streamableHttp' && moved.url === 'http://127.0.0.1:9/mcp' && !moved.command &&
        !(moved.args || []).length && !Object.keys(moved.env || {}).length && !moved.cwd,
    `a server edited from stdio to HTTP keeps no stdio field (${JSON.stringify(moved)})`);

  // --- history -------------------------------------------------------------
  await page.click('#nav-history');
  const historyRows = await page.waitFor(`document.querySelectorAll('table.history tbody tr').length`, 'the history table');
  check(historyRows >= 2, `history lists the recorded requests (${historyRows})`);
  await shoot(page, 'history');

  // --- conversions: the fixture served on a port of its own, then reverted ----
  await page.click('#nav-conversions');
  await page.waitFor(`document.querySelector('#title-conversions') && document.querySelector('form.editor[aria-label="Convert a stdio server"]')`, 'the conversions view');
  const fixtureConfig = (await rest('GET', '/config')).body.servers.find((x) => x.name === 'fixture');
  await page.eval(`(() => { const f = document.querySelector('form.editor[aria-label="Convert a stdio server"]');
    f.querySelector('select').value = ${JSON.stringify(fixtureConfig.id)}; f.requestSubmit(); })()`);
  const serving = await page.waitFor(`(() => { const ok = document.querySelector('.view-conversions [role=status] .ok');
    const row = [...document.querySelectorAll('.view-conversions table tbody tr')].find((r) => r.querySelector('th')?.textContent === 'fixture' && r.querySelector('button[aria-label="Revert fixture"]'));
    return ok && row && { said: ok.textContent, url: row.children[1].textContent }; })()`, 'the running conversion');
  check(/^Serving at http:\/\/127\.0\.0\.1:\d+/.test(serving.said) && /^http:\/\/127\.0\.0\.1:\d+/.test(serving.url),
    `the fixture was converted from the page and is listed running (${serving.said}; ${serving.url})`);
  // The notes of the steps before would cover the table's actions.
  await page.eval(`document.getElementById('toasts').replaceChildren()`);
  await shoot(page, 'conversions');
  await page.click('button[aria-label="Revert fixture"]');
  await page.waitFor(`!document.querySelector('button[aria-label="Revert fixture"]') && document.querySelector('.view-conversions p.empty')`, 'the reverted conversion');
  const reverted = (await rest('GET', '/config')).body.servers.find((x) => x.name === 'fixture');
  check(reverted.transport === 'stdio', `Revert made the fixture stdio again (${reverted.transport})`);

  // --- keyboard and labels on the main views ---------------------------------
  for (const view of ['servers', 'explore', 'timeline', 'history', 'pending', 'conversions']) {
    await page.eval(`location.hash = '#/${view}'`);
    await page.waitFor(`document.querySelector('#title-${view}')`, `the ${view} view`);
    const unlabelled = await page.eval(UNLABELLED);
    check(unlabelled.length === 0, `every control of ${view} has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);
    const lowContrast = await page.eval(LOW_CONTRAST);
    check(lowContrast.length === 0, `the text of ${view} has enough contrast (WCAG AA)${lowContrast.length ? `: ${lowContrast.join(' ; ')}` : ''}`);
  }
  // The same views in the dark colour scheme.
  await page.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'dark' }] });
  for (const view of ['servers', 'explore', 'timeline', 'history', 'pending', 'conversions']) {
    await page.eval(`location.hash = '#/${view}'`);
    await page.waitFor(`document.querySelector('#title-${view}')`, `the ${view} view`);
    const lowContrast = await page.eval(LOW_CONTRAST);
    check(lowContrast.length === 0, `the text of ${view} in the dark scheme has enough contrast (WCAG AA)${lowContrast.length ? `: ${lowContrast.join(' ; ')}` : ''}`);
  }
  await page.send('Emulation.setEmulatedMedia', { features: [{ name: 'prefers-color-scheme', value: 'light' }] });
  // A fresh load: Tab starts from the top of the page.
  await page.eval(`location.hash = '#/servers'`);
  await page.reload();
  await page.waitFor(`document.querySelector('#title-servers')`, 'the servers view');
  const order = [];
  for (let i = 0; i < 5; i++) {
    await page.tab();
    order.push(await page.eval(`document.activeElement.id || document.activeElement.textContent.trim().slice(0, 20)`));
  }
  check(order[0] === 'Skip to content' && order.includes('nav-servers') && order.includes('nav-explore'),
    `Tab reaches the skip link and the views (${order.join(' → ')})`);
  for (let i = 0; i < 60 && (await page.eval('document.activeElement.id')) !== 'nav-timeline'; i++) await page.tab();
  await page.key('Enter', 'Enter', 13);
  const afterEnter = await page.waitFor(`location.hash === '#/timeline' && document.querySelector('#title-timeline') && location.hash`, 'Enter to open the timeline');
  check(afterEnter === '#/timeline', 'Enter on a focused tab opens its view');

  // --- 10,000 messages: the list stays virtual --------------------------------
  // Fed through the page's own event hub, counted from the page itself.
  check(await page.eval(`window.__inspectorTimeline === undefined`), 'no test hook is shipped on window');
  const counts = await page.eval(`(async () => {
    const state = await import('/ui/state.js');
    const now = Date.now();
    for (let i = 0; i < 10000; i++) {
      state.emit('message', { timestamp: now, message: { timestamp: now, serverId: 'x', sessionId: 's', direction: i % 2 ? 'SERVER_TO_CLIENT' : 'CLIENT_TO_SERVER',
        kind: i % 2 ? 'response' : 'request', jsonrpcId: String(i >> 1), method: i % 2 ? '' : 'tools/list', raw: '{"jsonrpc":"2.0"}' } });
    }
    await new Promise((resolve) => { location.hash = '#/servers'; requestAnimationFrame(resolve); });
    location.hash = '#/timeline';
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline) {
      const held = Number((/of (\\d+) messages/.exec(document.querySelector('#tl-status')?.textContent || '') || [])[1] || 0);
      const rendered = document.querySelectorAll('.tl-body [data-row]').length;
      if (held >= 5000 && rendered > 0) return { held, rendered };
      await new Promise((r) => requestAnimationFrame(r));
    }
    return { held: 0, rendered: 0 };
  })()`);
  check(counts.held >= 5000 && counts.rendered > 0 && counts.rendered < 120,
    `10,000 messages (5,000 calls on one row each) held, ${counts.rendered} rows in the page (held ${counts.held})`);

  // --- cross-site form posts, and cookie calls without the CSRF header --------
  const before = (await rest('GET', '/config')).body.servers.length;
  strangerPage.action = `${base}/config`;
  strangerPage.body = '{"name":"evil","transport":"stdio","command":"/bin/true","x":"="}';
  await page.goto(`http://127.0.0.1:${strangerPage.address().port}/`);
  await page.waitFor(`location.href.startsWith(${JSON.stringify(base)})`, 'the form post to land');
  const evilLanded = await page.eval('document.body.innerText');
  check(/FORBIDDEN_ORIGIN/.test(evilLanded), `a cross-site form post is refused (${evilLanded.slice(0, 60)})`);
  // From an origin the allowlist accepts, a form still cannot send the
  // header that changes signed by the cookie need.
  allowedPage.action = `${base}/config`;
  allowedPage.body = '{"name":"evil2","transport":"stdio","command":"/bin/true","x":"="}';
  await page.goto(`${allowedOrigin}/`);
  await page.waitFor(`location.href.startsWith(${JSON.stringify(base)})`, 'the allowed-origin form post to land');
  const allowedLanded = await page.eval('document.body.innerText');
  check(/CSRF_REFUSED/.test(allowedLanded), `a form post from an allowed origin is refused too (${allowedLanded.slice(0, 40)})`);
  await page.goto(`${base}/`);
  const noHeader = await page.eval(`fetch('/config', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'evil3', transport: 'stdio', command: '/bin/true' }) }).then((r) => r.status)`);
  check(noHeader === 403, `a cookie-signed change without X-Inspector-Csrf is refused (${noHeader})`);
  const after = (await rest('GET', '/config')).body.servers;
  check(after.length === before && !after.some((s) => s.name.startsWith('evil')), 'none of the refused posts created a server');

  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);

  // --- sign out: the browser's credential ends at the daemon ---------------
  const cookieHeader = `${session.name}=${session.value}`;
  const uiRead = () => fetch(`${base}/config`, { headers: { Cookie: cookieHeader } }).then((r) => r.status);
  check(await uiRead() === 200, 'the cookie signs a read in before sign-out');
  await page.click('#sign-out');
  await page.waitFor(`document.querySelector('section.signin') !== null`, 'the signed-out page');
  check(await uiRead() === 401, 'after sign-out the old cookie value is refused');
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
} finally {
  await run.end();
}
