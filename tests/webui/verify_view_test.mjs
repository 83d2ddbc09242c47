// The Sessions view's "Verify against…" end to end: headless Chromium
// (Debian's) drives a real inspectord (--http on port 0). A session with
// the fixture server (one `add` call) is opened in the page and verified
// against a second fixture started with FIXTURE_ADD_FIELD=total: the
// report says FAIL and lists each difference with its path, the recorded
// value and the actual one; verified against the recorded server it says
// PASS; a rules file typed into the form that ignores both fields turns
// the changed server's report into PASS. The form's controls are
// labelled. Screenshots go to --artifacts.
//
//   node verify_view_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import fs from 'node:fs';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED } from './harness.mjs';

const args = parseArgs('verify_view_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { fixtureScript, node22 } = sourcePaths(args.source);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-verify-', 150);
const { dir, children, check } = run;
const shoot = (page, name) => shootViews(page, args.artifacts, name);
const waitFor = (p, expression, what, seconds = 45) => p.waitFor(expression, what, seconds);

let page = null;
try {
  const { signInUrl, rest } = await run.startDaemon(args.inspectord, [], 30);
  const add = async (name, env) => {
    const added = await rest('POST', '/config', { name, transport: 'stdio', command: node22, args: [fixtureScript, 'stdio'], env });
    if (added.status !== 200) throw new Error(`adding ${name}: ${added.status} ${JSON.stringify(added.body)}`);
    return added.body.id;
  };
  const fixtureId = await add('fixture', {});
  const changedId = await add('changed', { FIXTURE_ADD_FIELD: 'total' });
  const called = await rest('POST', `/api/servers/${fixtureId}/tools/add:call`, { arguments: { a: 2, b: 3 } });
  if (called.status !== 200) throw new Error(`add: ${called.status} ${JSON.stringify(called.body)}`);
  const listed = await rest('GET', `/api/sessions?serverId=${fixtureId}`);
  const sessionId = ((listed.body.sessions || [])[0] || {}).id;
  if (!sessionId) throw new Error(`no session: ${JSON.stringify(listed.body)}`);

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  page = await browser.newPage();
  await page.viewport(1280, 800);
  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');
  await page.eval(`location.hash = '#/sessions/${encodeURIComponent(sessionId)}'`);
  await waitFor(page, `document.querySelector('#ss-verify-server')`, 'the verify form');

  const verify = async (serverId, rules, what) => {
    await page.eval(`(() => {
      document.querySelector('#ss-verify-server').value = ${JSON.stringify(serverId)};
      document.querySelector('#ss-verify-rules').value = ${JSON.stringify(rules)};
      document.querySelector('#ss-replay-result').textContent = '';
    })()`);
    await page.click('.ss-verify button[type=submit]');
    return waitFor(page, `(() => { const r = document.querySelector('.ss-verify-report');
      const e = document.querySelector('#ss-replay-result .error-box');
      if (e) return 'error: ' + e.textContent;
      return r && { passed: r.dataset.passed, title: r.querySelector('h3').textContent,
        rows: [...r.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)) }; })()`, what, 60);
  };

  const failed = await verify(changedId, '', 'the report against the changed server');
  check(failed.passed === 'false' && /^FAIL: 1 of \d+ answers of changed differ/.test(failed.title),
    `against the changed server the report fails (${failed.title || failed})`);
  const rows = (failed.rows || []).map((r) => r.join(' | '));
  check(rows.some((r) => /tools\/call \| \/result\/structuredContent\/sum \| 5 \| absent/.test(r)),
    `the sum's difference: path, recorded 5, actual absent (${rows.join(' ; ')})`);
  check(rows.some((r) => /\/result\/structuredContent\/total \| absent \| 5/.test(r)),
    `the added total: recorded absent, actual 5 (${rows.join(' ; ')})`);
  await shoot(page, 'sessions-verify');
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of the session view has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);

  const passed = await verify(fixtureId, '', 'the report against the recorded server');
  check(passed.passed === 'true' && /^PASS: all \d+ answers of fixture match/.test(passed.title) && passed.rows.length === 0,
    `against the recorded server the report passes (${passed.title || passed})`);

  const lenient = await verify(changedId, '{"ignore": ["/result/structuredContent/sum", "/result/structuredContent/total"]}',
    'the report under a rules file');
  check(lenient.passed === 'true', `a rules file that lets both fields differ passes (${lenient.title || lenient})`);

  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  const shown = page && await page.eval(`document.querySelector('main').innerText.slice(0, 3000)`).catch(() => null);
  if (shown) console.error(`the page showed:\n${shown}`);
} finally {
  await run.end();
}
