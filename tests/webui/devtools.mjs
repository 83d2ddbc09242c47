// A small DevTools-protocol client for the web UI tests: Debian's headless
// Chromium on --remote-debugging-pipe (JSON messages ended by a NUL byte,
// written to the browser's fd 3 and read from its fd 4), one page, and the
// few things a person does: open a URL, click, type, press keys, look.
import { spawn } from 'node:child_process';
import path from 'node:path';

export class Browser {
  // Starts Chromium with a fresh profile under `dir`.
  static async launch(chromiumPath, dir) {
    const child = spawn(chromiumPath, [
      '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
      '--no-default-browser-check', '--disable-extensions', '--remote-debugging-pipe',
      '--hide-scrollbars', '--font-render-hinting=none',
      `--user-data-dir=${path.join(dir, 'profile')}`, 'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    const browser = new Browser(child);
    await browser.send('Browser.getVersion');
    return browser;
  }

  constructor(child) {
    this.child = child;
    this.input = child.stdio[3];
    this.nextId = 1;
    this.waiting = new Map();
    this.listeners = [];
    this.stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => { this.stderr += chunk; });
    let buffered = '';
    child.stdio[4].setEncoding('utf8');
    child.stdio[4].on('data', (chunk) => {
      buffered += chunk;
      let end;
      while ((end = buffered.indexOf('\0')) >= 0) {
        const message = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        if (message.id !== undefined && this.waiting.has(message.id)) {
          const { resolve, reject } = this.waiting.get(message.id);
          this.waiting.delete(message.id);
          if (message.error) reject(new Error(JSON.stringify(message.error)));
          else resolve(message.result);
        } else if (message.method) {
          for (const listener of [...this.listeners]) listener(message);
        }
      }
    });
    // Pending calls fail instead of hanging when the browser goes.
    child.on('exit', () => {
      for (const { reject } of this.waiting.values()) reject(new Error(`Chromium exited:\n${this.stderr}`));
      this.waiting.clear();
    });
  }

  send(method, params = {}, sessionId = undefined) {
    const id = this.nextId++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.input.write(JSON.stringify(message) + '\0');
    });
  }

  // Resolves with the params of the next event `method` of `sessionId`
  // for which `accept(params)` is true.
  next(method, sessionId, accept = () => true) {
    return new Promise((resolve) => {
      const listener = (message) => {
        if (message.method === method && message.sessionId === sessionId && accept(message.params)) {
          this.listeners = this.listeners.filter((l) => l !== listener);
          resolve(message.params);
        }
      };
      this.listeners.push(listener);
    });
  }

  on(method, listener) {
    this.listeners.push((message) => {
      if (message.method === method) listener(message.params, message.sessionId);
    });
  }

  async newPage() {
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, sessionId, targetId);
    await page.send('Page.enable');
    await page.send('Runtime.enable');
    await page.send('Network.enable');
    return page;
  }
}

export class Page {
  constructor(browser, sessionId, targetId) {
    this.browser = browser;
    this.sessionId = sessionId;
    this.targetId = targetId;
    this.consoleErrors = [];
    browser.on('Runtime.exceptionThrown', (params, session) => {
      if (session === sessionId) this.consoleErrors.push(params.exceptionDetails.exception?.description || params.exceptionDetails.text);
    });
  }

  send(method, params = {}) {
    return this.browser.send(method, params, this.sessionId);
  }

  // Navigates and waits for the load event; resolves with the main
  // document's HTTP status (the last one, after redirects).
  async goto(url) {
    let status = null;
    const listener = (message) => {
      if (message.method === 'Network.responseReceived' && message.sessionId === this.sessionId &&
          message.params.type === 'Document') {
        status = message.params.response.status;
      }
    };
    this.browser.listeners.push(listener);
    const loaded = this.browser.next('Page.loadEventFired', this.sessionId);
    await this.send('Page.navigate', { url });
    await loaded;
    this.browser.listeners = this.browser.listeners.filter((l) => l !== listener);
    return status;
  }

  async reload() {
    const loaded = this.browser.next('Page.loadEventFired', this.sessionId);
    await this.send('Page.reload');
    await loaded;
  }

  // Evaluates `expression` (may be a promise) and returns its value.
  async eval(expression) {
    const result = await this.send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
    if (result.exceptionDetails) {
      throw new Error(`page script threw: ${result.exceptionDetails.exception?.description || result.exceptionDetails.text}`);
    }
    return result.result.value;
  }

  // Waits (at most `seconds`) until `expression` is truthy in the page;
  // returns its value. The page checks on every animation frame. An
  // expression that gives a promise is checked by what the promise
  // resolves to (a promise object itself is always truthy).
  async waitFor(expression, what, seconds = 20) {
    const value = await this.eval(`new Promise((resolve) => {
      const stop = Date.now() + ${seconds * 1000};
      const check = async () => {
        let v;
        try { v = await (${expression}); } catch (e) { v = undefined; }
        if (v) return resolve(v);
        if (Date.now() > stop) return resolve(null);
        requestAnimationFrame(check);
      };
      check();
    })`);
    if (!value) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    return value;
  }

  click(selector) {
    return this.eval(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) throw new Error('no element ' + ${JSON.stringify(selector)});
      el.scrollIntoView({block: 'center'});
      el.click();
      return true;
    })()`);
  }

  // Sets a form control's value as typing would (input and change events).
  fill(selector, value) {
    return this.eval(`(() => {
      const el = document.querySelector(${JSON.stringify(selector)});
      if (!el) throw new Error('no element ' + ${JSON.stringify(selector)});
      el.focus();
      el.value = ${JSON.stringify(value)};
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return true;
    })()`);
  }

  async key(key, code = key, keyCode = 0, modifiers = 0) {
    const base = { key, code, windowsVirtualKeyCode: keyCode, nativeVirtualKeyCode: keyCode, modifiers };
    await this.send('Input.dispatchKeyEvent', { type: 'rawKeyDown', ...base });
    if (key === 'Enter') await this.send('Input.dispatchKeyEvent', { type: 'char', text: '\r', ...base });
    await this.send('Input.dispatchKeyEvent', { type: 'keyUp', ...base });
  }

  tab(shift = false) {
    return this.key('Tab', 'Tab', 9, shift ? 8 : 0);
  }

  async viewport(width, height) {
    await this.send('Emulation.setDeviceMetricsOverride', {
      width, height, deviceScaleFactor: 1, mobile: width < 600,
    });
  }

  // Puts files (absolute paths) in the <input type=file> `selector`, as
  // choosing them in the file dialog would.
  async setFiles(selector, files) {
    const { root } = await this.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await this.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    if (!nodeId) throw new Error(`no element ${selector}`);
    await this.send('DOM.setFileInputFiles', { nodeId, files });
    await this.eval(`document.querySelector(${JSON.stringify(selector)}).dispatchEvent(new Event('change', { bubbles: true }))`);
  }

  async screenshot() {
    const { data } = await this.send('Page.captureScreenshot', { format: 'png' });
    return Buffer.from(data, 'base64');
  }
}
