// Small DOM helpers shared by every view.

// h('button', {class: 'x', onclick: f}, 'text', child...) -> element.
// Attributes that are element properties (value, checked, disabled, ...)
// are set as properties; on* keys add listeners; null/false are skipped.
/**
 * @typedef {Node|string|number|boolean|null|undefined|Child[]} Child
 * What h() and clear() append: nodes, text, nested lists; null, undefined
 * and false are skipped.
 */
/**
 * @param {string} tag
 * @param {Object<string, any>|null} [attrs]
 * @param {...Child} children
 * @returns {any} the element (any: callers use the properties of its kind)
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'class') {
      el.className = value;
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (['value', 'checked', 'disabled', 'selected', 'hidden', 'multiple'].includes(key)) {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? '' : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/**
 * Replaces what `el` holds with `children`.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uniqueCounter = 0;
/** @param {string} [prefix] @returns {string} an id unique in the page */
export function uid(prefix = 'id') {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

// A labelled field: <div class="field"><label for=..>text</label>control hint</div>
/**
 * @param {string} label
 * @param {HTMLElement} control given an id when it has none
 * @param {Child} [hint] a line under it, its aria-describedby
 * @returns {HTMLElement}
 */
export function field(label, control, hint) {
  if (!control.id) control.id = uid('f');
  const hintEl = hint ? h('div', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

/** @param {unknown} value a value, or JSON text @returns {string} indented JSON */
export function pretty(value) {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}

/** @param {number} ms since the epoch @returns {string} HH:MM:SS.mmm, local */
export function timeOf(ms) {
  const d = new Date(ms);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** @param {number} ms since the epoch @returns {string} */
export function dateTimeOf(ms) {
  return `${new Date(ms).toLocaleDateString()} ${timeOf(ms)}`;
}

/** @param {Child} text @param {'info'|'error'} [kind] */
export function toast(text, kind = 'info') {
  const box = document.getElementById('toasts');
  const el = h('div', { class: `toast ${kind}` }, text);
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

/** @param {string} text @returns {Promise<void>} */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = h('textarea', { 'aria-hidden': 'true', class: 'offscreen' }, text);
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  toast('Copied to the clipboard');
}

// Quotes `text` for a POSIX shell.
/** @param {string} text @returns {string} */
export function shellQuote(text) {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(text)) return text;
  return `'${String(text).replaceAll("'", "'\\''")}'`;
}

export function kebab(code) {
  return String(code).toLowerCase().replaceAll('_', '-');
}

export const HELP_BASE = 'https://modelcontextprotocol.io/inspector/errors/';

// An error box for an ApiError or any Error, with the error's helpUrl.
/**
 * @param {any} error an ApiError ({code, message, helpUrl}) or any Error
 * @returns {HTMLElement}
 */
export function errorBox(error) {
  const code = error.code || 'ERROR';
  // Only the API's own errors have a help page.
  const help = error.helpUrl || null;
  return h('div', { class: 'error-box', role: 'alert' },
    h('strong', {}, code), ' ', error.message || String(error),
    help ? [' ', h('a', { href: help, target: '_blank', rel: 'noopener noreferrer' }, 'What this means')] : null);
}

// A link to `url` that opens in a new tab, only if it is an http: or https:
// URL (as the browser parses it); anything else (javascript:, data:, file:,
// not a URL at all) is plain text that cannot be clicked. Every link to an
// address a server sent goes through here.
/** @param {unknown} url @param {unknown} [text] @returns {HTMLElement} */
export function webLink(url, text = url) {
  let parsed = null;
  try {
    parsed = new URL(String(url));
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    return h('span', { class: 'unlinked-url', title: 'not an http(s) URL: not opened' }, String(text ?? ''));
  }
  return h('a', { href: parsed.href, target: '_blank', rel: 'noopener noreferrer' }, String(text ?? ''));
}

// A button that runs an async action, disabled while it runs; errors toast.
/**
 * @param {string} label
 * @param {(button: HTMLButtonElement) => unknown} action
 * @param {Object<string, any>} [attrs]
 * @returns {HTMLButtonElement}
 */
export function actionButton(label, action, attrs = {}) {
  const button = h('button', { type: 'button', ...attrs }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await action(button);
    } catch (error) {
      toast(`${error.code ? error.code + ': ' : ''}${error.message}`, 'error');
    } finally {
      button.disabled = false;
    }
  });
  return button;
}
