// The web UI's Skills view and directory browsing end to end: headless
// Chromium (Debian's) drives a real inspectord (--http on port 0) with the
// fixture server's skills (FIXTURE_SKILLS=1):
//   - Skills lists the catalog; a skill shows its manifest; "Verify files"
//     reports a good skill verified and a tampered one failed with the
//     mismatching file and both digests;
//   - "Browse files" lists the skill's directory and opens a child
//     directory; Explore's "Browse directory" pages through a directory
//     resource;
//   - a skill added by the server (notifications/resources/list_changed)
//     appears without reloading the page;
//   - Explore's first load (Tools, held back by the fixture) answering
//     after the Resources tab was chosen is dropped, not shown there;
// and that the view's controls are labelled. Screenshots go to --artifacts.
//
//   node skills_view_test.mjs --inspectord PATH --source DIR --artifacts DIR
//        [--chromium /usr/bin/chromium]
// Exits 0 when every check passed, 1 otherwise (each failure on stderr).
import fs from 'node:fs';
import path from 'node:path';
import { Browser } from './devtools.mjs';
import { findChromium, parseArgs, shoot as shootViews, sourcePaths, TestRun, UNLABELLED } from './harness.mjs';

const args = parseArgs('skills_view_test.mjs', { inspectord: 'PATH', source: 'DIR', artifacts: 'DIR' });
const chromiumPath = findChromium(args);
const { fixtureScript, node22 } = sourcePaths(args.source);
fs.mkdirSync(args.artifacts, { recursive: true });

const run = new TestRun('inspector-skills-', 150);
const { dir, children, check } = run;
const hold = path.join(dir, 'hold-tools-list');
const shoot = (page, name) => shootViews(page, args.artifacts, name);
const waitFor = (p, expression, what, seconds = 45) => p.waitFor(expression, what, seconds);
const press = (page, selector, what = selector) => waitFor(page, `(() => {
  const el = document.querySelector(${JSON.stringify(selector)});
  if (!el || el.disabled) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`, `${what} to click`);
// Clicks the button of `scope` whose text is `text`.
const pressText = (page, scope, text) => waitFor(page, `(() => {
  const el = [...document.querySelectorAll(${JSON.stringify(`${scope} button`)})].find((b) => b.textContent.trim() === ${JSON.stringify(text)});
  if (!el) return false; el.scrollIntoView({ block: 'center' }); el.click(); return true; })()`, `"${text}" to click`);

let page = null;
try {
  const { signInUrl, rest } = await run.startDaemon(args.inspectord, [], 30);
  const added = await rest('POST', '/config', {
    name: 'fixture', transport: 'stdio', command: node22, args: [fixtureScript, 'stdio'],
    env: { FIXTURE_SKILLS: '1', FIXTURE_HOLD_TOOLS_LIST: hold },
  });
  if (added.status !== 200) throw new Error(`adding the fixture: ${added.status} ${JSON.stringify(added.body)}`);
  const id = added.body.id;
  const connected = await rest('POST', `/api/servers/${id}/connect`, {});
  if (connected.status !== 200) throw new Error(`connect: ${connected.status} ${JSON.stringify(connected.body)}`);

  const browser = await Browser.launch(chromiumPath, dir);
  children.push({ child: browser.child, group: true });
  page = await browser.newPage();
  await page.viewport(1280, 800);
  await page.goto(signInUrl);
  await waitFor(page, `document.querySelector('#title-servers')`, 'the servers view');

  // --- Skills -----------------------------------------------------------------
  await page.click('#nav-skills');
  const names = await waitFor(page, `(() => { const n = [...document.querySelectorAll('.view-skills .item-name')].map((e) => e.textContent);
    return n.length >= 2 && n; })()`, 'the skills');
  check(names.join(',') === 'git-workflow,tampered', `Skills lists the catalog (${names.join(', ')})`);

  await pressText(page, '.view-skills .item-list', 'git-workflowCommit, branch and review with git.');
  const manifest = await waitFor(page, `document.querySelector('.view-skills .detail table')?.innerText`, 'the manifest');
  check(/references\/commands\.md/.test(manifest) && /sha256:[0-9a-f]{64}/.test(manifest), 'a skill shows its manifest with digests');
  await pressText(page, '.view-skills .detail', 'Verify files');
  const good = await waitFor(page, `document.querySelector('.skill-report')?.innerText`, 'the report of git-workflow');
  check(/^verified/.test(good) && /2 verified, 0 mismatched/.test(good), `a good skill is verified (${good.split('\n')[0]})`);

  await pressText(page, '.view-skills .detail', 'Browse files');
  const listing = await waitFor(page, `(() => { const t = document.querySelector('.view-skills .result')?.innerText || '';
    return /references\\//.test(t) && t; })()`, 'the skill\'s directory');
  check(/SKILL\.md/.test(listing), 'Browse files lists the skill\'s directory');
  await pressText(page, '.view-skills .result', 'references/');
  await waitFor(page, `/commands\\.md/.test(document.querySelector('.view-skills .result')?.innerText || '')`, 'the child directory');

  await pressText(page, '.view-skills .item-list', 'tamperedA skill whose script changed after its manifest was made.');
  await waitFor(page, `/tampered/.test(document.querySelector('.view-skills .detail h3')?.textContent || '')`, 'the tampered skill');
  await pressText(page, '.view-skills .detail', 'Verify files');
  const bad = await waitFor(page, `(() => { const r = document.querySelector('.skill-report'); return r && /^failed/.test(r.innerText) && r.innerText; })()`,
    'the report of tampered');
  check(/scripts\/run\.sh/.test(bad) && /manifest sha256:/.test(bad) && /served sha256:/.test(bad),
    'a tampered skill fails, naming the file and both digests');
  await shoot(page, 'skills');
  const unlabelled = await page.eval(UNLABELLED);
  check(unlabelled.length === 0, `every control of skills has a label${unlabelled.length ? `: ${unlabelled.join(' ; ')}` : ''}`);

  // A skill added by the server shows without a reload.
  const tool = await rest('POST', `/api/servers/${id}/tools/add_skill:call`, { arguments: {} });
  check(tool.status === 200, `add_skill ran (${tool.status})`);
  await waitFor(page, `[...document.querySelectorAll('.view-skills .item-name')].some((e) => e.textContent === 'release-notes')`,
    'the added skill');

  // --- Explore: switching tabs while the first load is on its way ------------
  // The fixture holds tools/list back while the hold file exists: Explore
  // opens on Tools, Resources is chosen before the tools arrive, then the
  // tools are let go. Their late answer must be dropped, not shown on the
  // Resources tab.
  fs.writeFileSync(hold, '');
  await page.click('#nav-explore');
  await waitFor(page, `/Loading/.test(document.querySelector('.view-explore')?.textContent || '')`, 'Explore loading the tools');
  await press(page, '#tab-resources', 'the Resources tab');
  await pressText(page, '.view-explore .item-list', 'tree');
  fs.rmSync(hold);
  const late = await waitFor(page, `(() => {
    const view = document.querySelector('.view-explore');
    const names = [...view.querySelectorAll('.item-list .item-name')].map((e) => e.textContent);
    if (names.includes('echo')) return 'shown';
    return Number(view.dataset.staleAnswers || 0) > 0 ? 'dropped' : false; })()`, 'the late tools answer');
  const tab = await page.eval(`document.querySelector('#tab-resources').getAttribute('aria-selected')`);
  const resourcesShown = await page.eval(`[...document.querySelectorAll('.view-explore .item-list .item')].some((b) => b.textContent.includes('tree'))`);
  check(late === 'dropped' && tab === 'true' && resourcesShown,
    `a tools answer that arrives after switching to Resources is dropped (${late}; Resources selected ${tab}, its list shown ${resourcesShown})`);
  await pressText(page, '.view-explore .detail', 'Browse directory');
  await waitFor(page, `/file-3\\.txt/.test(document.querySelector('.view-explore .result')?.innerText || '')`, 'the first page');
  await pressText(page, '.view-explore .result', 'More');
  await waitFor(page, `/file-6\\.txt/.test(document.querySelector('.view-explore .result')?.innerText || '')`, 'the second page');
  await pressText(page, '.view-explore .result', 'More');
  const all = await waitFor(page, `(() => { const t = document.querySelector('.view-explore .result')?.innerText || ''; return /file-7\\.txt/.test(t) && t; })()`, 'the last page');
  check((all.match(/file-\d\.txt/g) || []).length === 7 && !/\bMore\b/.test(all), 'paging through a directory shows its 7 children, then no More');

  check(page.consoleErrors.length === 0, `no script errors in the page${page.consoleErrors.length ? `: ${page.consoleErrors.join('; ')}` : ''}`);
} catch (error) {
  console.error(`FAILED: ${error.stack || error}`);
  run.failures++;
  const shown = page && await page.eval(`document.querySelector('main').innerText.slice(0, 3000)`).catch(() => null);
  if (shown) console.error(`the page showed:\n${shown}`);
} finally {
  await run.end();
}
