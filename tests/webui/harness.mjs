// What the web UI tests share besides the browser (devtools.mjs): their
// command line, the Chromium they need, one run's temporary directory,
// children, servers, checks and deadline, lines awaited on a child's
// output, and screenshots of a view at the two sizes.
//
// One TestRun a test process; everything runs on Node's one thread.
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

  // Stops everything, prints the verdict and exits 0 when every check
  // passed, 1 otherwise.
  async end() {
    clearTimeout(this.deadline);
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
