// A message's trace in Live traffic end to end: headless Chromium (Debian's)
// drives a real inspectord (--http on port 0) that traces every request
// (--otel-endpoint, to tools/otlp-receiver) with the fixture server:
//   - the detail pane of a traced call shows its trace id, the one history
//     keeps for it (GET /api/messages?traceId=);
//   - its "Show only this trace" link opens "#/timeline?traceId=ID": only
//     that trace's messages are listed, the filter bar's Trace field says
//     which, and the message stays in the detail pane;
//   - History's detail links the same trace;
//   - a trace id typed in the filter bar shows that trace instead (and the
//     address follows); emptied, every message is back;
//   - the address alone ("#/timeline?traceId=ID") opens the view filtered,
//     and in a page that saw none of it, the trace comes from history;
// every control labelled; screenshots at 1280x800 and 390x844 in
// --artifacts.
//
//   node trace_link_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED, waitForLine } from './harness.mjs';

const args = parseArgs('trace_link_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { fixtureScript } = sourcePaths(args.source);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-trace-link-', 150);
const { dir, children, check } = run;
const shoot = (page, name) => shootViews(page, args.artifacts, name);
const waitFor = (p, expression, what, seconds = 45) => p.waitFor(expression, what, seconds);

// The rows of Live traffic in the page, as plain data.
const ROWS = `[...document.querySelectorAll('.tl-body .tl-row')].map((r) => ({
  id: r.dataset.row, method: r.querySelector('.c-method').textContent, dur: r.querySelector('.c-dur').textContent }))`;
// The echo calls listed now, by their message ("echo first" -> row id).
const ECHOES = `(() => { const out = {}; for (const r of ${ROWS}) if (r.method.includes(' echo')) out[r.id] = r; return out; })()`;

let page = null;
try {
  const receiver = spawn(process.execPath, [path.join(args.source, 'tools', 'otlp-receiver', 'receiver.mjs')],
    { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push({ child: receiver });
  const [, collector] = await waitForLine(receiver.stdout, /otlp-receiver listening (\S+)/, 'the OTLP receiver');
  const { signInUrl, rest } = await run.startDaemon(args.inspectord, ['--otel-endpoint', `${collector}/v1/traces`], 30);
  const added = await rest('POST', '/config', { name: 'fixture', transport: 'stdio', command: process.execPath, args: [fixtureScript, 'stdio'] });
  if (added.status !== 200) throw new Error(`adding the fixture: ${added.status} ${JSON.stringify(added.body)}`);
  const fixtureId = added.body.id;

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  page = await browser.newPage();
  await page.viewport(1280, 800);
  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');
  await page.click('#nav-timeline');
  await waitFor(page, `document.querySelector('#title-timeline')`, 'Live traffic');

  for (const message of ['first', 'second']) {
    const echo = await rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message } });
    if (echo.status !== 200) throw new Error(`echo ${message}: ${echo.status} ${JSON.stringify(echo.body)}`);
  }
  const both = await waitFor(page, `(() => { const rows = Object.values(${ECHOES}).filter((r) => r.dur.endsWith('ms'));
    return rows.length === 2 && rows; })()`, 'both echo calls answered');
  // The trace shown in the detail of row `id`.
  const traceOfRow = async (id) => {
    await page.eval(`document.querySelector('[data-row="${id}"]').click()`);
    // (The pane is drawn by the click itself.)
    return waitFor(page, `(() => { const d = document.querySelector('.msg-detail');
      return document.querySelector('[data-row="${id}"]')?.getAttribute('aria-selected') === 'true' &&
        d && (d.querySelector('.tl-trace code')?.textContent || null); })()`, `the trace in the detail of row ${id}`);
  };
  const firstTrace = await traceOfRow(both[0].id);
  const secondTrace = await traceOfRow(both[1].id);
  check(/^[0-9a-f]{32}$/.test(firstTrace) && /^[0-9a-f]{32}$/.test(secondTrace) && firstTrace !== secondTrace,
    `each call's detail shows its own trace id (${firstTrace}, ${secondTrace})`);
  const recorded = await rest('GET', `/api/messages?traceId=${firstTrace}&method=tools%2Fcall&direction=CLIENT_TO_SERVER`);
  const recordedText = JSON.stringify(recorded.body?.messages || []);
  check(recorded.status === 200 && /first/.test(recordedText) && !/second/.test(recordedText),
    `history keeps that trace id for the first call (${recorded.status}, ${(recorded.body?.messages || []).length} messages)`);

  // The link shows only that trace.
  await traceOfRow(both[0].id);
  const link = await page.eval(`(() => { const a = document.querySelector('.msg-detail .tl-trace a'); return a && { text: a.textContent, href: a.getAttribute('href'), label: a.getAttribute('aria-label') }; })()`);
  check(link && link.text === 'Show only this trace' && link.href === `#/timeline?traceId=${firstTrace}` && link.label.includes(firstTrace),
    `the detail links the timeline filtered to its trace (${JSON.stringify(link)})`);
  await page.eval(`document.querySelector('.msg-detail .tl-trace a').click()`);
  const filtered = await waitFor(page, `(() => { const rows = Object.values(${ECHOES});
    return location.hash === '#/timeline?traceId=${firstTrace}' && rows.length === 1 && { rows: rows.map((r) => r.id),
      field: document.querySelector('#tl-trace').value, status: document.querySelector('#tl-status').textContent,
      detail: document.querySelector('.msg-detail .tl-trace')?.textContent || '' }; })()`, 'the timeline filtered to the first trace');
  check(filtered.rows[0] === both[0].id && filtered.field === firstTrace,
    `only the first call's trace is listed, the Trace field names it (${JSON.stringify(filtered)})`);
  check(/Show all messages/.test(filtered.detail), `the message stays in the detail, now offering every message again (${filtered.detail})`);
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of the filtered timeline has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);
  await shoot(page, 'timeline-trace');

  // A trace id typed in the filter bar.
  await page.eval(`(() => { const t = document.querySelector('#tl-trace'); t.value = ${JSON.stringify(secondTrace.toUpperCase())};
    t.dispatchEvent(new Event('input')); })()`);
  const typed = await waitFor(page, `(() => { const rows = Object.values(${ECHOES});
    return rows.length === 1 && rows[0].id === ${JSON.stringify(both[1].id)} && location.hash; })()`, 'the second trace typed in');
  check(typed === `#/timeline?traceId=${secondTrace}`, `a trace id typed in the filter bar shows that trace, the address follows (${typed})`);
  await page.eval(`(() => { const t = document.querySelector('#tl-trace'); t.value = ''; t.dispatchEvent(new Event('input')); })()`);
  const all = await waitFor(page, `(() => { const rows = Object.values(${ECHOES}); return rows.length === 2 && location.hash; })()`, 'every call again');
  check(all === '#/timeline', `emptied, every message is listed again (${all})`);

  // The address alone opens the view filtered.
  await page.eval(`location.hash = '#/servers'`);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view again');
  await page.eval(`location.hash = '#/timeline?traceId=${secondTrace}'`);
  const opened = await waitFor(page, `(() => { const rows = Object.values(${ECHOES});
    return document.querySelector('#title-timeline') && rows.length === 1 && { row: rows[0].id, field: document.querySelector('#tl-trace').value }; })()`,
  'the timeline opened on the second trace');
  check(opened.row === both[1].id && opened.field === secondTrace, `"#/timeline?traceId=" opens the view on that trace (${JSON.stringify(opened)})`);
  await page.click('#nav-timeline');
  await waitFor(page, `Object.values(${ECHOES}).length === 2`, 'the view\'s own link showing every trace');
  check(true, 'the view\'s own link shows every trace');

  // History's detail links the same trace.
  await page.click('#nav-history');
  await waitFor(page, `document.querySelectorAll('table.history tbody tr').length >= 2`, 'the history table');
  await page.eval(`[...document.querySelectorAll('table.history tbody tr')].filter((x) => x.children[3].textContent === 'echo')
    .pop().querySelector('button').click()`);
  const historyLink = await waitFor(page, `document.querySelector('#history-detail .tl-trace a')?.getAttribute('href')`, 'the trace in History\'s detail');
  check(historyLink === `#/timeline?traceId=${firstTrace}`, `History's detail of the first call links its trace (${historyLink})`);
  await page.eval(`document.querySelector('#history-detail .tl-trace a').click()`);
  const fromHistoryLink = await waitFor(page, `(() => { const rows = Object.values(${ECHOES});
    return document.querySelector('#title-timeline') && rows.length === 1 && rows[0].id; })()`, 'Live traffic on the trace from History');
  check(fromHistoryLink === both[0].id, 'the link opens Live traffic on that trace');

  // A page that saw none of it (reloaded, its live backlog of 500 events
  // long past the trace): the trace's messages come from history, the
  // call on one row with its answer.
  for (let batch = 0; batch < 14; batch++) {
    await Promise.all(Array.from({ length: 20 }, (_, i) =>
      rest('POST', `/api/servers/${fixtureId}/tools/echo:call`, { arguments: { message: `later ${batch}-${i}` } })));
  }
  await page.eval(`location.hash = '#/timeline?traceId=${firstTrace}'`);
  await page.reload();
  const fromHistory = await waitFor(page, `(() => { const rows = Object.values(${ECHOES});
    return document.querySelector('#title-timeline') && rows.length === 1 && rows[0].dur.endsWith('ms') &&
      { status: document.querySelector('#tl-status').textContent }; })()`, 'the first trace loaded from history');
  const loadedId = await page.eval(`Object.keys(${ECHOES})[0]`);
  const loadedTrace = await traceOfRow(loadedId);
  check(loadedTrace === firstTrace, `a reloaded page shows the trace's call from history, answered, in its trace (${fromHistory.status}; ${loadedTrace})`);
  await shoot(page, 'timeline-trace-history');

  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  const shown = page && await page.eval(`document.querySelector('main').innerText.slice(0, 3000)`).catch(() => null);
  if (shown) console.error(`the page showed:\n${shown}`);
} finally {
  await run.end();
}
