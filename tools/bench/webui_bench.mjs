#!/usr/bin/env node
// What the web UI's Live traffic view costs the browser: headless Chromium
// (Debian's, driven over the DevTools protocol as tests/webui does) on the
// page of a fresh inspectord (--http 127.0.0.1:0), measured in four parts:
//
//   load     --messages messages (default 100,000: a request and its
//            answer each, so half as many rows, which is what the view
//            keeps) handed to the page's event hub in batches of 5,000, as
//            /api/events would deliver them; the time until the last batch
//            is painted;
//   live     then --rate messages per second (default 200) for --seconds
//            (default 10), with the list following the newest; the main
//            thread's long tasks (PerformanceObserver 'longtask': over
//            50 ms) counted, and the longest;
//   heap     the page's JS heap (after a garbage collection) before the
//            load, after it and after the live part;
//   big      a request whose text is --big-bytes (default 1,000,000) of
//            JSON, chosen in the list: the time from the click until its
//            JSON tree is in the page and painted (two animation frames).
//
// The messages are made in the page and given to state.js's emit(), the
// function the page's one EventSource calls: the daemon and the SSE
// stream's own cost are not in these figures (tools/bench/gateway_bench
// measures the gateway). Prints the figures; asserts nothing.
//
//   node tools/bench/webui_bench.mjs --inspectord build/server/inspectord
//        [--chromium /usr/bin/chromium] [--messages 100000] [--rate 200]
//        [--seconds 10] [--big-bytes 1000000]
import process from 'node:process';
import { Browser } from '../../tests/webui/devtools.mjs';
import { findChromium, parseArgs, TestRun } from '../../tests/webui/harness.mjs';

const args = parseArgs('webui_bench.mjs', { inspectord: 'PATH' });
const chromiumPath = findChromium(args);
const messages = Number(args.messages || 100000);
const rate = Number(args.rate || 200);
const seconds = Number(args.seconds || 10);
const bigBytes = Number(args['big-bytes'] || 1000000);

const run = new TestRun('inspector-webui-bench-', 900);

// In the page: the event of one message of a tools/call (`i`: its number).
const MAKE = `(i, response, extra = '') => {
  const now = Date.now();
  const id = String(i);
  const raw = response
    ? '{"jsonrpc":"2.0","id":' + i + ',"result":{"content":[{"type":"text","text":"answer ' + i + '"}]' + extra + '}}'
    : '{"jsonrpc":"2.0","id":' + i + ',"method":"tools/call","params":{"name":"echo","arguments":{"message":"call ' + i + '"' + extra + '}}}';
  return { timestamp: now, message: {
    id: String(response ? 2 * i + 1 : 2 * i), serverId: 'bench-server', sessionId: 'bench-session',
    direction: response ? 'SERVER_TO_CLIENT' : 'CLIENT_TO_SERVER', kind: response ? 'response' : 'request',
    method: response ? '' : 'tools/call', target: 'echo', jsonrpcId: id, raw, timestamp: now,
    correlatedId: response ? String(2 * i) : undefined, durationMs: response ? 3 : undefined } };
}`;

// The JS heap in use after a garbage collection, in MB.
async function heapMb(page) {
  await page.send('HeapProfiler.collectGarbage');
  const { metrics } = await page.send('Performance.getMetrics');
  const used = metrics.find((m) => m.name === 'JSHeapUsedSize');
  return used ? used.value / (1024 * 1024) : NaN;
}

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

try {
  const { signInUrl } = await run.startDaemon(args.inspectord, [], 30);
  const browser = await Browser.launch(chromiumPath, run.dir);
  run.children.push({ child: browser.child, group: true });
  const page = await browser.newPage();
  await page.send('Performance.enable');
  await page.viewport(1280, 800);
  await page.goto(signInUrl);
  await page.waitFor(`document.querySelector('#title-servers')`, 'the servers view', 30);
  await page.click('#nav-timeline');
  await page.waitFor(`document.querySelector('#title-timeline')`, 'Live traffic', 30);
  await page.eval(`(async () => {
    window.benchState = await import('/ui/state.js');
    window.benchMake = ${MAKE};
    window.benchLong = [];
    new PerformanceObserver((list) => { for (const e of list.getEntries()) window.benchLong.push(e.duration); })
      .observe({ type: 'longtask' });
    return true;
  })()`);
  const heapBefore = await heapMb(page);

  // --- load -------------------------------------------------------------------
  const calls = Math.floor(messages / 2);
  const load = await page.eval(`(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const started = performance.now();
    let longest = 0;
    for (let first = 0; first < ${calls}; first += 2500) {
      const t = performance.now();
      for (let i = first; i < Math.min(${calls}, first + 2500); i++) {
        benchState.emit('message', benchMake(i, false));
        benchState.emit('message', benchMake(i, true));
      }
      await frame();
      longest = Math.max(longest, performance.now() - t);
    }
    return { ms: performance.now() - started, longestBatchMs: longest, rows: document.querySelector('#tl-status')?.textContent || '' };
  })()`);
  const heapLoaded = await heapMb(page);

  // --- live -------------------------------------------------------------------
  const live = await page.eval(`(async () => {
    benchLong.length = 0;
    // Every 50 ms, what is owed since the start: the rate holds even when
    // a long task delays the timer.
    let i = ${calls};
    let sent = 0;
    const start = performance.now();
    const until = start + ${seconds * 1000};
    await new Promise((resolve) => {
      const tick = setInterval(() => {
        const now = Math.min(performance.now(), until);
        const owed = Math.floor((now - start) * ${rate} / 1000) - sent;
        for (let k = 0; k + 1 < owed; k += 2, i++) {
          benchState.emit('message', benchMake(i, false));
          benchState.emit('message', benchMake(i, true));
          sent += 2;
        }
        if (now >= until) { clearInterval(tick); resolve(); }
      }, 50);
    });
    await new Promise((r) => setTimeout(r, 200));
    return { sent, long: benchLong.slice() };
  })()`);
  const heapLive = await heapMb(page);

  // --- big --------------------------------------------------------------------
  const big = await page.eval(`(async () => {
    const item = ',{"id":123456,"name":"an item of the big answer","tags":["a","b","c"],"ok":true}';
    const n = Math.ceil(${bigBytes} / item.length);
    const extra = ',"items":[' + item.slice(1) + item.repeat(n - 1) + ']';
    const i = 9000000;
    benchState.emit('message', benchMake(i, false, extra));
    benchState.emit('message', benchMake(i, true));
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await frame();
    const rows = [...document.querySelectorAll('.tl-body .tl-row')];
    const row = rows[rows.length - 1];
    const bytes = benchMake(i, false, extra).message.raw.length;
    const t = performance.now();
    row.click();
    const deadline = t + 30000;
    while (!document.querySelector('.tl-detail .jt-box') && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 0));
    }
    await frame();
    return { bytes, ms: performance.now() - t, shown: !!document.querySelector('.tl-detail .jt-box'),
      text: row.textContent.slice(0, 60) };
  })()`);

  const long = live.long;
  console.log(`web UI page benchmark (headless Chromium ${await browser.send('Browser.getVersion').then((v) => v.product).catch(() => '?')}, 1280x800)`);
  console.log(`load:  ${messages} messages (${calls} calls) emitted in batches of 5000: ${fmt(load.ms, 0)} ms in all, longest batch ${fmt(load.longestBatchMs, 0)} ms; ${load.rows}`);
  console.log(`live:  ${live.sent} messages in ${seconds} s (${fmt(live.sent / seconds, 0)}/s): ${long.length} long tasks (>50 ms), longest ${fmt(long.length ? Math.max(...long) : 0, 0)} ms`);
  console.log(`heap:  ${fmt(heapBefore)} MB before, ${fmt(heapLoaded)} MB after the load, ${fmt(heapLive)} MB after the live part (JSHeapUsedSize after a GC)`);
  console.log(`big:   a ${fmt(big.bytes / 1e6, 2)} MB request opened in the JSON viewer in ${fmt(big.ms, 0)} ms${big.shown ? '' : ' (NOT shown within 30 s)'}`);
  console.log(`goals of the issue, for reading: longest task < 50 ms, memory < 150 MB, 1 MB message < 200 ms`);
} catch (error) {
  console.error(`webui_bench: ${error.stack || error}`);
  run.failures++;
} finally {
  clearTimeout(run.deadline);
  await run.cleanup();
  process.exit(run.failures ? 1 : 0);
}
