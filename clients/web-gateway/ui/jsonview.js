// The JSON tree viewer every view shares: objects and arrays collapse and
// expand (children are built when first opened, so a large message opens
// at once), a search that opens and marks the matching keys and values,
// and the JSON Pointer (RFC 6901) of the chosen node with a copy button.
// Keyboard: the tree is one tab stop; arrows move, Right/Left open and
// close, Enter toggles, "c" copies the chosen node's path.
// Text is only ever set as text: a message's content is never markup.
import { h, clear, uid, copyText } from './util.js';

/** @param {string|number} key @returns {string} escaped for a JSON Pointer */
export function pointerSegment(key) {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}

/** @param {string} path @param {string|number} key @returns {string} */
export function childPointer(path, key) {
  return `${path}/${pointerSegment(key)}`;
}

function isContainer(value) {
  return value !== null && typeof value === 'object';
}

function scalarText(value) {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

function scalarClass(value) {
  if (value === null) return 'jt-null';
  return `jt-${typeof value}`;
}

// Parses `value` when it is JSON text; anything else is shown as it is.
/** @param {unknown} value @returns {{ok: boolean, value: any}} */
export function asJson(value) {
  if (typeof value !== 'string') return { ok: true, value };
  try {
    return { ok: true, value: JSON.parse(value) };
  } catch {
    return { ok: false, value };
  }
}

// jsonTree(value, { label, open: depth opened at first, marks: Map(path ->
// 'added'|'removed'|'changed') }) -> element. `value` may be JSON text.
/**
 * @typedef {{label?: string, open?: number, marks?: Map<string, 'added'|'removed'|'changed'>|null, search?: boolean}} TreeOptions
 */
/**
 * @param {unknown} input
 * @param {TreeOptions} [options]
 * @returns {HTMLElement & {jtFind?: (text: string) => number}}
 */
export function jsonTree(input, { label = 'JSON', open = 2, marks = null, search = true } = {}) {
  const parsed = asJson(input);
  if (!parsed.ok) return h('pre', { class: 'json' }, String(input));
  const data = parsed.value;
  const markedAncestors = new Set();
  if (marks) {
    for (const path of marks.keys()) {
      const parts = path.split('/');
      for (let i = 1; i < parts.length; i++) markedAncestors.add(parts.slice(0, i).join('/'));
    }
  }
  let chosen = '';
  const chosenText = h('code', { class: 'jt-path' }, '(root)');
  const treeId = uid('jt');
  const tree = h('div', { class: 'jt', id: treeId, role: 'group', 'aria-label': `${label}: arrows move, Right and Left open and close, c copies the path` });

  function choose(row) {
    for (const el of tree.querySelectorAll('.jt-row[tabindex="0"]')) el.setAttribute('tabindex', '-1');
    row.setAttribute('tabindex', '0');
    chosen = row.dataset.path;
    chosenText.textContent = chosen || '(root)';
    tree.querySelector('.jt-row.chosen')?.classList.remove('chosen');
    row.classList.add('chosen');
  }

  function keyLabel(key) {
    return key === null ? null : h('span', { class: 'jt-key' }, typeof key === 'number' ? `${key}` : JSON.stringify(key), ': ');
  }

  function markClass(path) {
    if (!marks) return '';
    if (marks.has(path)) return ` mark-${marks.get(path)}`;
    return markedAncestors.has(path) ? ' mark-inside' : '';
  }

  function node(key, value, path, depth) {
    if (!isContainer(value)) {
      return h('div', { class: `jt-row jt-leaf${markClass(path)}`, tabindex: '-1', dataset: { path } },
        keyLabel(key), h('span', { class: scalarClass(value) }, scalarText(value)));
    }
    const array = Array.isArray(value);
    const entries = array ? value.map((v, i) => [i, v]) : Object.entries(value);
    const summary = h('summary', { class: `jt-row${markClass(path)}`, tabindex: '-1', dataset: { path } },
      keyLabel(key), h('span', { class: 'jt-brace' }, array ? '[' : '{'),
      h('span', { class: 'jt-count muted' }, ` ${entries.length} ${array ? (entries.length === 1 ? 'item' : 'items') : (entries.length === 1 ? 'key' : 'keys')} `),
      h('span', { class: 'jt-brace' }, array ? ']' : '}'));
    const details = h('details', { class: 'jt-node' }, summary);
    let built = false;
    const build = () => {
      if (built) return;
      built = true;
      details.append(h('div', { class: 'jt-children' },
        entries.map(([k, v]) => node(k, v, childPointer(path, k), depth + 1))));
    };
    details.addEventListener('toggle', () => { if (details.open) build(); });
    if (depth < open || (marks && (markedAncestors.has(path) || marks.has(path)))) {
      build();
      details.open = true;
    }
    details.jtBuild = build;
    return details;
  }

  const rootNode = node(null, data, '', 0);
  tree.append(rootNode);
  const first = tree.querySelector('.jt-row');
  if (first) first.setAttribute('tabindex', '0');

  const visibleRows = () => [...tree.querySelectorAll('.jt-row')].filter((r) => r.offsetParent !== null || r === first);
  tree.addEventListener('click', (e) => {
    const row = e.target.closest('.jt-row');
    if (row) choose(row);
  });
  tree.addEventListener('focusin', (e) => {
    const row = e.target.closest('.jt-row');
    if (row) choose(row);
  });
  tree.addEventListener('keydown', (e) => {
    const row = e.target.closest('.jt-row');
    if (!row) return;
    const rows = visibleRows();
    const i = rows.indexOf(row);
    const details = row.tagName === 'SUMMARY' ? row.parentElement : null;
    if (e.key === 'ArrowDown' && i < rows.length - 1) { e.preventDefault(); rows[i + 1].focus(); }
    else if (e.key === 'ArrowUp' && i > 0) { e.preventDefault(); rows[i - 1].focus(); }
    else if (e.key === 'ArrowRight' && details && !details.open) { e.preventDefault(); details.jtBuild(); details.open = true; }
    else if (e.key === 'ArrowLeft' && details && details.open) { e.preventDefault(); details.open = false; }
    else if (e.key === 'ArrowLeft') {
      const parent = row.closest('.jt-children')?.parentElement?.querySelector(':scope > summary');
      if (parent) { e.preventDefault(); parent.focus(); }
    } else if (e.key === 'c' && !e.ctrlKey && !e.metaKey) { e.preventDefault(); copyText(row.dataset.path); }
  });

  // Search: every key or scalar containing the text; their ancestors open.
  const status = h('span', { class: 'muted jt-found', role: 'status' });
  function find(text) {
    for (const el of tree.querySelectorAll('.found')) el.classList.remove('found');
    if (!text) { status.textContent = ''; return; }
    const needle = text.toLowerCase();
    const hits = [];
    const walk = (value, path, key) => {
      const keyHit = key !== null && String(key).toLowerCase().includes(needle);
      if (!isContainer(value)) {
        if (keyHit || scalarText(value).toLowerCase().includes(needle)) hits.push(path);
        return;
      }
      if (keyHit) hits.push(path);
      const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
      for (const [k, v] of entries) walk(v, childPointer(path, k), k);
    };
    walk(data, '', null);
    for (const path of hits.slice(0, 500)) {
      // Open each ancestor (building it), then mark the row.
      const parts = path.split('/');
      let at = rootNode;
      for (let d = 1; d < parts.length && at; d++) {
        at.jtBuild?.();
        at.open = true;
        const want = parts.slice(0, d + 1).join('/');
        at = [...at.querySelector(':scope > .jt-children').children].find((c) => (c.tagName === 'DETAILS' ? c.querySelector(':scope > summary') : c).dataset.path === want) || null;
      }
      const row = at && (at.tagName === 'DETAILS' ? at.querySelector(':scope > summary') : at);
      if (row) row.classList.add('found');
    }
    status.textContent = `${hits.length} found`;
  }

  const searchBox = search ? h('input', { type: 'search', class: 'jt-search', placeholder: 'key or value', 'aria-label': `Search ${label}` }) : null;
  if (searchBox) searchBox.addEventListener('input', () => find(searchBox.value.trim()));
  const bar = h('div', { class: 'jt-bar' },
    searchBox, status,
    h('span', { class: 'jt-chosen' }, 'Path ', chosenText),
    h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy the chosen path of ${label}`, onclick: () => copyText(chosen) }, 'Copy path'),
    h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy ${label} as JSON`, onclick: () => copyText(JSON.stringify(data, null, 2)) }, 'Copy JSON'));
  const box = h('div', { class: 'jt-box' }, bar, tree);
  box.jtFind = find;
  return box;
}

// The same tree, replacing what `container` held.
/** @param {Element} container @param {unknown} value @param {TreeOptions} [options] */
export function showJson(container, value, options) {
  return clear(container, jsonTree(value, options));
}
