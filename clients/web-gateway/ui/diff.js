// The diff component every view shares: two JSON values side by side as
// trees with the changed paths marked (added, removed, changed), and the
// list of changes by JSON Pointer. The changes come from the daemon's
// DiffSessions (DiffChange: op, path, oldValue, newValue) or, for an edit
// in the page, from jsonDiff below, which gives the same shape.
import { h } from './util.js';
import { jsonTree, childPointer, asJson } from './jsonview.js';

/**
 * One difference, at a JSON Pointer.
 * @typedef {{op: 'added'|'removed'|'changed', path: string, oldValue?: unknown, newValue?: unknown}} Change
 */

/**
 * @param {unknown} v
 * @returns {v is Object<string, unknown>}
 */
function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Structural differences from `a` to `b`.
 * @param {unknown} a
 * @param {unknown} b
 * @param {string} [path] the JSON Pointer of `a` and `b`
 * @param {Change[]} [out] where the changes are added
 * @returns {Change[]}
 */
export function jsonDiff(a, b, path = '', out = []) {
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const p = childPointer(path, i);
      if (i >= a.length) out.push({ op: 'added', path: p, newValue: b[i] });
      else if (i >= b.length) out.push({ op: 'removed', path: p, oldValue: a[i] });
      else jsonDiff(a[i], b[i], p, out);
    }
    return out;
  }
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) {
      const p = childPointer(path, key);
      if (!(key in b)) out.push({ op: 'removed', path: p, oldValue: a[key] });
      else jsonDiff(a[key], b[key], p, out);
    }
    for (const key of Object.keys(b)) {
      if (!(key in a)) out.push({ op: 'added', path: childPointer(path, key), newValue: b[key] });
    }
    return out;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ op: 'changed', path, oldValue: a, newValue: b });
  return out;
}

function short(value) {
  if (value === undefined) return '—';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

// The changes as a table: op, path, before, after.
/**
 * @param {Change[]} changes
 * @param {string} [caption]
 * @returns {HTMLElement}
 */
export function changeList(changes, caption = 'Changed paths') {
  if (!changes.length) return h('p', { class: 'muted diff-none' }, 'No differences.');
  return h('div', { class: 'table-wrap' }, h('table', { class: 'diff-changes' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ['Change', 'Path', 'Before', 'After'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, changes.map((c) => h('tr', { class: `mark-${c.op}` },
      h('td', {}, c.op),
      h('td', { class: 'mono diff-path' }, c.path || '(whole message)'),
      h('td', { class: 'mono' }, short(c.oldValue)),
      h('td', { class: 'mono' }, short(c.newValue)))))));
}

// `a` and `b` (values or JSON text) side by side with `changes` marked;
// without `changes` they are computed here.
/**
 * @param {unknown} a
 * @param {unknown} b
 * @param {{changes?: Change[], labelA?: string, labelB?: string}} [options]
 * @returns {HTMLElement}
 */
export function diffView(a, b, { changes, labelA = 'Before', labelB = 'After' } = {}) {
  const left = asJson(a);
  const right = asJson(b);
  const list = changes || (left.ok && right.ok ? jsonDiff(left.value, right.value) : []);
  const marksA = new Map();
  const marksB = new Map();
  for (const c of list) {
    if (c.op !== 'added') marksA.set(c.path, c.op);
    if (c.op !== 'removed') marksB.set(c.path, c.op);
  }
  const side = (label, value, marks) => h('div', { class: 'diff-side' }, h('h5', {}, label),
    value === undefined || value === null || value === ''
      ? h('p', { class: 'muted' }, 'nothing')
      : jsonTree(value, { label, marks, open: 1 }));
  return h('div', { class: 'diff' },
    h('div', { class: 'side-by-side diff-sides' }, side(labelA, a, marksA), side(labelB, b, marksB)),
    changeList(list));
}
