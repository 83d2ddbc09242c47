// MCP Apps (the io.modelcontextprotocol/ui extension): a tool whose
// metadata names a ui:// resource can be opened as an App. The daemon reads
// the resource and serves it from its Apps sandbox listener (another port,
// so another origin, with the Content-Security-Policy and Permissions-Policy
// the resource's _meta.ui allows, and an opaque origin of its own); this
// page frames it in a sandboxed iframe and acts as the App's host over
// postMessage (JSON-RPC 2.0):
//  - ui/initialize (host info, capabilities, context) and
//    ui/notifications/initialized, after which the tool's input and result
//    (or its cancellation) are sent to the App;
//  - the App's own tools/call, resources/read, resources/list,
//    resources/templates/list and ping go to the server through POST /mcp,
//    so they are recorded and show in Live traffic; each carries
//    _meta["inspector/app"] naming the App, which is how the timeline tells
//    them from the page's own calls; notifications/cancelled of such a
//    request cancels it in the daemon;
//  - ui/open-link waits for the user to open the link or refuse it;
//  - ui/download-file shows what the App offers (names from the last
//    segment of each URI, made safe) and saves it only when the user says
//    so: embedded text or base64 as it is, a link to an http(s) address
//    opened in a new tab, any other link read through the server first
//    (resources/read, recorded like the App's other calls);
//  - sampling/createMessage (hostCapabilities.sampling, without tools):
//    the host has no model; the user reads the request and writes the
//    reply, or rejects it (-1, as the daemon does for servers);
//  - an App with `_meta.ui.domain` runs in the dedicated origin the daemon
//    gave it (shown in the panel; see server/apps/app_open.h);
//  - ui/message, ui/update-model-context and notifications/message are
//    shown in the App's log; ui/request-display-mode, size changes and the
//    theme are honoured and announced with host-context-changed;
//  - request-teardown and Close end the App with ui/resource-teardown.
import { api, cancelSentCall, enc } from './api.js';
import { h, clear, errorBox, pretty, webLink, toast } from './util.js';
import { samplingForm } from './sampling_form.js';

// The protocol version this host speaks (the extension's latest).
const APPS_PROTOCOL = '2026-01-26';
// The _meta key that marks what the App sends.
export const APP_META_KEY = 'inspector/app';

/**
 * The ui:// resource a tool names as its App, or null.
 * @param {any} tool a tool as listed (with raw)
 * @returns {string|null}
 */
export function appResourceUri(tool) {
  const meta = (tool && ((tool.raw && tool.raw._meta) || tool._meta)) || {};
  const uri = (meta.ui && meta.ui.resourceUri) || meta['ui/resourceUri'];
  return typeof uri === 'string' && uri.startsWith('ui://') ? uri : null;
}

/**
 * A JSON-RPC error for the App.
 * @param {number} code
 * @param {string} message
 */
function rpcError(code, message) {
  const error = new Error(message);
  error['rpcCode'] = code;
  return error;
}

/**
 * The file name to save `uri` under: its last path segment, decoded, with
 * anything but letters, digits, '.', '-', '_' and spaces replaced and no
 * leading dots (no path, no hidden file); `fallback` when nothing is left.
 * @param {string} uri
 * @param {string} [fallback]
 */
export function downloadName(uri, fallback = 'download') {
  let last = String(uri || '').split(/[?#]/)[0].split('/').filter(Boolean).pop() || '';
  try {
    last = decodeURIComponent(last);
  } catch { /* kept as it is */ }
  const name = last.replace(/[^A-Za-z0-9._ -]/g, '_').replace(/^[.\s]+/, '').slice(0, 120).trim();
  return name || fallback;
}

/**
 * One entry of ui/download-file's contents, checked: what to save and how.
 * @param {any} item
 * @param {number} i
 * @returns {{name: string, mimeType: string, size: number|null, blob?: Blob, web?: string, read?: string, error?: string}}
 */
function downloadOf(item, i) {
  if (item && item.type === 'resource' && item.resource && typeof item.resource === 'object') {
    const r = item.resource;
    const mimeType = typeof r.mimeType === 'string' ? r.mimeType : 'application/octet-stream';
    const name = downloadName(r.uri);
    if (typeof r.text === 'string') {
      const blob = new Blob([r.text], { type: mimeType });
      return { name, mimeType, size: blob.size, blob };
    }
    if (typeof r.blob === 'string') {
      try {
        const bytes = Uint8Array.from(atob(r.blob), (c) => c.charCodeAt(0));
        return { name, mimeType, size: bytes.length, blob: new Blob([bytes], { type: mimeType }) };
      } catch {
        return { name, mimeType, size: null, error: `contents[${i}]: its blob is not base64` };
      }
    }
    return { name, mimeType, size: null, error: `contents[${i}]: neither text nor blob` };
  }
  if (item && item.type === 'resource_link' && typeof item.uri === 'string' && item.uri) {
    const mimeType = typeof item.mimeType === 'string' ? item.mimeType : '';
    const name = downloadName(item.uri, downloadName(item.name));
    const size = typeof item.size === 'number' ? item.size : null;
    if (/^https?:\/\//i.test(item.uri)) return { name, mimeType, size, web: item.uri };
    return { name, mimeType, size, read: item.uri };
  }
  return { name: '', mimeType: '', size: null, error: `contents[${i}]: neither an embedded resource nor a resource link` };
}

/**
 * Saves `blob` as `name` (the browser's download).
 * @param {string} name
 * @param {Blob} blob
 */
function saveBlob(name, blob) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

let appSeq = 0;
/** @type {AppHost|null} */
let current = null;

/**
 * Opens the App of `tool` in `container` (closing any other), then runs the
 * tool with `args` and hands its input and result to the App.
 * @param {HTMLElement} container
 * @param {{id: string, name: string}} server
 * @param {any} tool
 * @param {Object<string, any>} args
 */
export async function openApp(container, server, tool, args) {
  if (current) await current.close('another App was opened');
  const host = new AppHost(container, server, tool, args);
  current = host;
  await host.start();
  return host;
}

/** Closes the open App, if any (the view is leaving). */
export function closeApps() {
  if (current) current.close('the view was left');
}

class AppHost {
  constructor(container, server, tool, args) {
    this.container = container;
    this.server = server;
    this.tool = tool;
    this.args = args || {};
    this.uri = appResourceUri(tool);
    this.theme = matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
    this.displayMode = 'inline';
    this.pending = new Map();  // our request id -> resolve(result|error)
    this.forwarded = new Map();  // App's request id (JSON) -> daemon request id
    this.seq = 0;
    this.closed = false;
    this.initialized = false;
    this.callId = null;
    this.callPending = false;  // the tool's own call waits for its answer
    this.cancelled = false;
    this.onMessage = (event) => this.receive(event);
  }

  async start() {
    const status = h('p', { class: 'muted', role: 'status' }, `Opening ${this.uri}…`);
    clear(this.container, status);
    let opened;
    try {
      opened = await api('POST', '/apps/open', { serverId: this.server.id, uri: this.uri });
    } catch (error) {
      clear(this.container, errorBox(error));
      if (current === this) current = null;
      return;
    }
    if (this.closed) return;
    this.opened = opened;
    this.render();
  }

  render() {
    const o = this.opened;
    this.frame = h('iframe', {
      class: 'app-frame', title: `MCP App ${this.uri}`, src: o.url,
      sandbox: o.sandbox, allow: o.allow || null, referrerpolicy: 'no-referrer',
    });
    this.log = h('ol', { class: 'app-log', 'aria-label': 'What the App did' });
    this.prompt = h('div', { class: 'app-prompt' });
    const theme = h('select', { 'aria-label': 'Theme' },
      ['light', 'dark'].map((t) => h('option', { value: t, selected: t === this.theme }, t)));
    theme.addEventListener('change', () => {
      this.theme = theme.value;
      this.panel.dataset.theme = this.theme;
      this.contextChanged({ theme: this.theme });
    });
    this.cancelButton = h('button', { type: 'button', class: 'danger', hidden: true, onclick: () => this.cancelCall() }, 'Cancel tool call');
    this.modeButton = h('button', { type: 'button', onclick: () => this.setDisplayMode(this.displayMode === 'inline' ? 'fullscreen' : 'inline') }, 'Full screen');
    this.panel = h('section', { class: 'app-panel', 'aria-label': `App ${this.uri}`, dataset: { theme: this.theme, mode: this.displayMode } },
      h('div', { class: 'app-bar' },
        h('strong', {}, 'App '), h('code', {}, this.uri),
        h('div', { class: 'actions' }, theme, this.modeButton, this.cancelButton,
          h('button', { type: 'button', onclick: () => this.close('closed by the user') }, 'Close app'))),
      (o.refusedDomains && o.refusedDomains.length)
        ? h('p', { class: 'warn' }, `Left out of the App's policy: ${o.refusedDomains.join('; ')}`) : null,
      o.domain
        ? h('p', { class: 'app-origin muted' }, 'Dedicated origin ', h('code', {}, o.domain.origin),
          ' (the App asked for the domain ', h('code', {}, String(o.domain.requested)), ')') : null,
      this.prompt, this.frame,
      h('details', { class: 'app-policy' }, h('summary', {}, 'Sandbox policy'),
        h('pre', { class: 'json' }, pretty({ metadataFrom: o.metadataFrom, csp: o.csp, permissionsPolicy: o.permissionsPolicy, sandbox: o.sandbox, allow: o.allow }))),
      h('h4', {}, 'App log'), this.log);
    window.addEventListener('message', this.onMessage);
    clear(this.container, this.panel);
    // The width is what the App lays itself out to; its own height changes
    // (size-changed) resize the frame and are not echoed back.
    let width = 0;
    this.resizer = new ResizeObserver(() => {
      const dimensions = this.dimensions();
      if (dimensions.width === width) return;
      width = dimensions.width;
      this.contextChanged({ containerDimensions: dimensions });
    });
    this.resizer.observe(this.panel);
  }

  note(kind, text, detail) {
    if (!this.log) return;
    this.log.append(h('li', { class: `app-note app-${kind}` }, h('span', { class: 'app-kind' }, kind), ' ', text,
      detail !== undefined ? h('pre', { class: 'json' }, pretty(detail)) : null));
  }

  dimensions() {
    const width = Math.round(this.frame ? this.frame.getBoundingClientRect().width : 0);
    return { width, maxHeight: Math.round(window.innerHeight * 0.8) };
  }

  hostContext() {
    return {
      theme: this.theme,
      displayMode: this.displayMode,
      availableDisplayModes: ['inline', 'fullscreen'],
      containerDimensions: this.dimensions(),
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: 'web',
      userAgent: 'inspectord web UI',
      deviceCapabilities: { touch: navigator.maxTouchPoints > 0, hover: matchMedia('(hover: hover)').matches },
      toolInfo: { id: this.callId || undefined, tool: (this.tool.raw || this.tool) },
    };
  }

  post(message) {
    if (this.closed || !this.frame || !this.frame.contentWindow) return;
    // The App's origin is opaque: '*' is the only target that reaches it;
    // the window itself is what is addressed.
    this.frame.contentWindow.postMessage(message, '*');
  }

  notify(method, params) {
    this.post({ jsonrpc: '2.0', method, params: params || {} });
  }

  request(method, params) {
    this.seq += 1;
    const id = `host-${this.seq}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.post({ jsonrpc: '2.0', id, method, params: params || {} });
    });
  }

  contextChanged(change) {
    if (this.initialized) this.notify('ui/notifications/host-context-changed', change);
  }

  setDisplayMode(mode) {
    this.displayMode = mode;
    this.panel.dataset.mode = mode;
    this.modeButton.textContent = mode === 'inline' ? 'Full screen' : 'Inline';
    this.contextChanged({ displayMode: mode, containerDimensions: this.dimensions() });
    return mode;
  }

  /** @param {MessageEvent} event */
  receive(event) {
    if (!this.frame || event.source !== this.frame.contentWindow) return;
    const m = event.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === undefined && m.id !== undefined) {
      const resolve = this.pending.get(m.id);
      if (resolve) {
        this.pending.delete(m.id);
        resolve(m);
      }
      return;
    }
    if (typeof m.method !== 'string') return;
    if (m.id === undefined || m.id === null) {
      this.onNotification(m.method, m.params || {});
      return;
    }
    this.onRequest(m.method, m.params || {}, m.id).then(
      (result) => this.post({ jsonrpc: '2.0', id: m.id, result: result || {} }),
      (error) => this.post({ jsonrpc: '2.0', id: m.id, error: { code: error.rpcCode || -32603, message: error.message || String(error), data: error.data } }));
  }

  async onRequest(method, params, appId) {
    switch (method) {
      case 'ui/initialize':
        this.note('host', `initialize from ${params.appInfo ? `${params.appInfo.name} ${params.appInfo.version}` : 'the App'}`);
        this.appInfo = params.appInfo || {};
        return {
          protocolVersion: APPS_PROTOCOL,
          hostInfo: { name: 'inspectord web UI', version: '1' },
          hostCapabilities: {
            openLinks: {}, downloadFile: {}, serverTools: {}, serverResources: {}, logging: {},
            message: { text: {} }, updateModelContext: { text: {} }, sampling: {},
            sandbox: this.opened.granted || {},
          },
          hostContext: this.hostContext(),
        };
      case 'ping':
        return {};
      case 'tools/call':
      case 'resources/read':
      case 'resources/list':
      case 'resources/templates/list':
        return this.forward(method, params, appId);
      case 'ui/open-link':
        return this.confirmLink(String(params.url || ''));
      case 'ui/download-file':
        return this.confirmDownload(params);
      case 'sampling/createMessage':
        return this.askSampling(params);
      case 'ui/message':
        this.note('message', 'The App sent a message', params);
        return {};
      case 'ui/update-model-context':
        this.note('context', 'The App updated its model context', params);
        return {};
      case 'ui/request-display-mode':
        return { mode: this.setDisplayMode(params.mode === 'fullscreen' ? 'fullscreen' : 'inline') };
      default:
        throw rpcError(-32601, `Method not found: ${method}`);
    }
  }

  onNotification(method, params) {
    switch (method) {
      case 'ui/notifications/initialized':
        this.initialized = true;
        this.note('host', 'The App is initialized');
        this.runTool();
        break;
      case 'ui/notifications/size-changed':
        if (typeof params.height === 'number' && this.displayMode === 'inline') {
          this.frame.style.height = `${Math.max(80, Math.min(params.height, 2000))}px`;
        }
        break;
      case 'notifications/message':
        this.note('log', `${params.level || 'info'}${params.logger ? ` (${params.logger})` : ''}`, params.data);
        break;
      case 'notifications/cancelled': {
        const key = JSON.stringify(params.requestId);
        const daemonId = this.forwarded.get(key);
        if (daemonId) this.cancelForwarded(daemonId, params.reason || 'cancelled by the App', () => this.forwarded.has(key));
        else this.note('host', `the App cancelled ${key}, which has no call waiting`);
        break;
      }
      case 'ui/notifications/request-teardown':
        this.close('the App asked to be closed');
        break;
      default:
        this.note('host', `ignored notification ${method}`);
    }
  }

  // One of the App's requests to the server, through the daemon; `appId`,
  // the App's id for it, is what its notifications/cancelled names (none
  // for a request the host makes for the App).
  async forward(method, params, appId = undefined) {
    this.seq += 1;
    const daemonId = `app-${Date.now().toString(36)}-${this.seq}`;
    const meta = { ...(params._meta || {}), [APP_META_KEY]: { resourceUri: this.uri, tool: this.tool.name, app: (this.appInfo && this.appInfo.name) || null } };
    const message = { jsonrpc: '2.0', id: daemonId, method, params: { ...params, _meta: meta } };
    const key = appId === undefined ? null : JSON.stringify(appId);
    if (key !== null) this.forwarded.set(key, daemonId);
    this.note('call', `${method}${params.name ? ` ${params.name}` : params.uri ? ` ${params.uri}` : ''}`);
    try {
      const answer = await api('POST', `/mcp?serverId=${enc(this.server.id)}`, JSON.stringify(message));
      if (answer && answer.error) {
        const error = new Error(answer.error.message);
        error['rpcCode'] = answer.error.code;
        error['data'] = answer.error.data;
        throw error;
      }
      return answer ? answer.result : {};
    } finally {
      if (key !== null) this.forwarded.delete(key);
    }
  }

  // Cancels `daemonId` at the daemon while `isPending()`; says in the log
  // what became of it.
  async cancelForwarded(daemonId, reason, isPending) {
    try {
      const state = await cancelSentCall(this.server.id, daemonId, reason, isPending);
      this.note('host', state === null ? `${daemonId} ended before the cancel reached it`
        : state === 'REQUEST_STATE_PENDING' ? `${daemonId} cancelled before it was sent to the server`
          : `${daemonId} cancelled: the server was sent notifications/cancelled`);
    } catch (error) {
      this.note('host', `cancel failed: ${error.message}`);
    }
  }

  // The tool the App belongs to: its input, then its result, to the App.
  async runTool() {
    if (this.callId) return;
    this.seq += 1;
    this.callId = `ui-app-${Date.now().toString(36)}-${this.seq}`;
    this.notify('ui/notifications/tool-input', { arguments: this.args });
    this.cancelButton.hidden = false;
    this.callPending = true;
    const message = { jsonrpc: '2.0', id: this.callId, method: 'tools/call', params: { name: this.tool.name, arguments: this.args } };
    try {
      const answer = await api('POST', `/mcp?serverId=${enc(this.server.id)}`, JSON.stringify(message));
      if (this.cancelled) return;
      if (answer && answer.error) {
        this.notify('ui/notifications/tool-cancelled', { reason: `error ${answer.error.code}: ${answer.error.message}` });
        this.note('host', `the tool call failed: ${answer.error.message}`);
      } else {
        this.notify('ui/notifications/tool-result', (answer && answer.result) || { content: [] });
        this.note('host', 'tool result sent to the App');
      }
    } catch (error) {
      if (!this.cancelled) {
        this.notify('ui/notifications/tool-cancelled', { reason: error.message });
        this.note('host', `the tool call failed: ${error.message}`);
      }
    } finally {
      this.callPending = false;
      this.cancelButton.hidden = true;
    }
  }

  // The App is told at once; the daemon is asked until it finds the call.
  async cancelCall() {
    if (!this.callId || this.cancelled) return;
    this.cancelled = true;
    this.cancelButton.hidden = true;
    this.notify('ui/notifications/tool-cancelled', { reason: 'cancelled from the web UI' });
    await this.cancelForwarded(this.callId, 'cancelled from the web UI', () => this.callPending);
  }

  // A question to the user above the App; several can wait at once. The
  // answer removes it (the returned function).
  ask(label, ...children) {
    const dialog = h('div', { class: 'app-confirm', role: 'alertdialog', 'aria-label': label }, ...children);
    this.prompt.append(dialog);
    return () => dialog.remove();
  }

  // ui/open-link: opened only if the user follows the link shown.
  // A refusal is the extension's error (-32000), not a result.
  confirmLink(url) {
    return new Promise((resolve, reject) => {
      let remove = () => {};
      const done = (error, text) => {
        remove();
        this.note('link', text);
        if (error) reject(rpcError(-32000, error));
        else resolve({});
      };
      const link = webLink(url, 'Open the link');
      if (link.tagName !== 'A') {
        done('Invalid URL', `refused to open ${url} (not an http(s) URL)`);
        return;
      }
      link.classList.add('button', 'primary');
      link.addEventListener('click', () => done(null, `opened ${url}`));
      remove = this.ask('The App asks to open a link',
        h('p', {}, 'The App asks to open ', h('code', {}, url)),
        h('div', { class: 'actions' }, link,
          h('button', { type: 'button', onclick: () => done('Link opening denied by user', `refused to open ${url}`) }, "Don't open")));
      link.focus();
    });
  }

  // ui/download-file: nothing is saved unless the user says so.
  confirmDownload(params) {
    const items = Array.isArray(params.contents) ? params.contents : [];
    if (!items.length) throw rpcError(-32602, 'Invalid content: contents is empty');
    const files = items.map(downloadOf);
    const bad = files.find((f) => f.error);
    if (bad) throw rpcError(-32602, `Invalid content: ${bad.error}`);
    this.note('download', `The App offers ${files.map((f) => f.name).join(', ')}`);
    return new Promise((resolve, reject) => {
      let remove = () => {};
      const save = async () => {
        remove();
        try {
          for (const f of files) {
            if (f.blob) {
              saveBlob(f.name, f.blob);
            } else if (f.web) {
              window.open(f.web, '_blank', 'noopener,noreferrer');
            } else {
              const read = await this.forward('resources/read', { uri: f.read });
              const c = ((read && read.contents) || [])[0] || {};
              const got = downloadOf({ type: 'resource', resource: { ...c, uri: f.read } }, 0);
              if (got.error) throw rpcError(-32000, `${f.read}: ${got.error}`);
              saveBlob(f.name, got.blob);
            }
          }
          this.note('download', `saved ${files.map((f) => f.name).join(', ')}`);
          resolve({});
        } catch (error) {
          this.note('download', `the download failed: ${error.message}`);
          reject(error);
        }
      };
      const refuse = () => {
        remove();
        this.note('download', 'the user refused the download');
        reject(rpcError(-32000, 'Download denied by user'));
      };
      const saveButton = h('button', { type: 'button', class: 'primary', onclick: save }, files.length > 1 ? 'Save the files' : 'Save the file');
      remove = this.ask('The App offers a download',
        h('p', {}, 'The App offers to save:'),
        h('ul', { class: 'app-files' }, files.map((f) => h('li', {},
          h('code', {}, f.name), ` ${f.mimeType || ''}`,
          f.size !== null ? ` · ${f.size} bytes` : '',
          f.web ? h('span', {}, ' · opens ', h('code', {}, f.web)) : null,
          f.read ? h('span', {}, ' · read from the server: ', h('code', {}, f.read)) : null))),
        h('div', { class: 'actions' }, saveButton,
          h('button', { type: 'button', onclick: refuse }, "Don't save")));
      saveButton.focus();
    });
  }

  // sampling/createMessage from the App: the user is the model.
  askSampling(params) {
    if (params.tools || params.toolChoice) {
      throw rpcError(-32602, 'This host takes no tools in sampling (hostCapabilities.sampling.tools is not set)');
    }
    if (!Array.isArray(params.messages)) throw rpcError(-32602, 'Invalid params: messages is not an array');
    this.note('sampling', 'The App asks for a completion', params);
    return new Promise((resolve, reject) => {
      let remove = () => {};
      const form = samplingForm("Answer the App's sampling request", params, {
        reply: async (result) => {
          remove();
          this.note('sampling', 'replied to the App', result);
          resolve(result);
        },
        reject: async () => {
          remove();
          this.note('sampling', 'the user rejected the sampling request');
          reject(rpcError(-1, 'User rejected the request'));
        },
        sendLabel: 'Send reply to the App',
      });
      remove = this.ask('The App asks for a completion (sampling)',
        h('p', {}, 'The App asks for a model completion. This host has no model: write the reply, or reject the request.'),
        form);
      form.querySelector('textarea')?.focus();
    });
  }

  async close(reason) {
    if (this.closed) return;
    if (this.initialized) {
      await Promise.race([this.request('ui/resource-teardown', { reason }), new Promise((r) => setTimeout(r, 500))]);
    }
    this.closed = true;
    window.removeEventListener('message', this.onMessage);
    if (this.resizer) this.resizer.disconnect();
    for (const resolve of this.pending.values()) resolve(null);
    this.pending.clear();
    if (this.panel && this.panel.isConnected) {
      clear(this.container, h('p', { class: 'muted' }, `App closed (${reason}).`));
    }
    if (current === this) current = null;
    if (reason === 'the App asked to be closed') toast('The App closed itself');
  }
}
