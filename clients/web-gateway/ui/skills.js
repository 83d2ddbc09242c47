// The Skills of the chosen server (the io.modelcontextprotocol/skills
// extension): the catalog (skills/list), one skill's manifest (skills/get),
// its files read through the directory resources (resources/directory/read,
// page by page) and the digest check of its files with a report
// (POST .../skill:verify). The catalog is loaded again when the server says
// its resources changed (notifications/resources/list_changed).
import { api, enc } from './api.js';
import { store, on, currentServer } from './state.js';
import { h, clear, errorBox, pretty } from './util.js';
import { ViewLoader } from './view_loader.js';

let root = null;
let skills = [];
let selected = null;
let off = [];
const loader = new ViewLoader((body) => shell(body));

export function mount(container) {
  root = container;
  loader.attach(container);
  off = [
    on('current', () => { selected = null; load(); }),
    on('listChanged', (change) => {
      if (change.serverId === store.current && change.list === 'resources') load();
    }),
  ];
  load();
}

export function unmount() {
  loader.detach();
  off.forEach((f) => f());
  off = [];
  root = null;
}

function shell(body) {
  const server = currentServer();
  clear(root,
    h('div', { class: 'view-head' },
      h('h2', { id: 'title-skills' }, server ? `Skills of ${server.name}` : 'Skills')),
    body);
}

async function load() {
  const loaded = await loader.load((server) => `/api/servers/${enc(server.id)}/skills?all=true`);
  if (!loaded) return;
  skills = (loaded.answer && loaded.answer.skills) || [];
  if (selected) selected = skills.find((s) => s.uri === selected.uri) || null;
  render();
}

function render() {
  const list = h('ul', { class: 'item-list', 'aria-label': 'Skills' },
    skills.map((skill) => h('li', {},
      h('button', {
        type: 'button', class: 'item', 'aria-pressed': String(selected === skill),
        onclick: () => { selected = skill; render(); root.querySelector('.detail h3')?.focus(); },
      },
      h('span', { class: 'item-name' }, skill.name || skill.uri),
      skill.description ? h('span', { class: 'item-desc' }, skill.description) : null))));
  shell(h('div', { class: 'split' },
    h('div', { class: 'list-pane' },
      skills.length ? list : h('p', { class: 'empty' }, 'This server lists no skills.')),
    h('div', { class: 'detail', 'aria-live': 'polite' },
      selected ? detail(selected) : h('p', { class: 'muted' }, 'Choose a skill on the left.'))));
}

function fileRows(skill) {
  if (skill.dynamic) return h('p', { class: 'muted' }, 'Files: dynamic (the server lists no manifest, so there are no digests to check).');
  return h('table', { class: 'grid' },
    h('thead', {}, h('tr', {}, h('th', {}, 'File'), h('th', {}, 'Size'), h('th', {}, 'Digest'))),
    h('tbody', {}, (skill.files || []).map((f) => h('tr', {},
      h('td', { class: 'mono' }, f.uri),
      h('td', {}, f.hasSize ? `${f.size} bytes` : '—'),
      h('td', { class: 'mono' }, f.digest || '—')))));
}

function detail(skill) {
  const out = h('div', { class: 'result' });
  const requireDigests = h('input', { type: 'checkbox', id: 'skill-require-digests' });
  return h('div', {},
    h('h3', { tabindex: '-1' }, skill.name || skill.uri),
    skill.description ? h('p', { class: 'desc' }, skill.description) : null,
    h('p', { class: 'mono' }, skill.uri),
    fileRows(skill),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', onclick: () => verify(out, skill, requireDigests.checked) }, 'Verify files'),
      h('label', {}, requireDigests, ' Require digests'),
      h('button', { type: 'button', onclick: () => browse(out, skill.uri.replace(/\/SKILL\.md$/, '')) }, 'Browse files'),
      h('button', { type: 'button', onclick: () => show(out, skill) }, 'skills/get')),
    out);
}

async function show(out, skill) {
  const server = currentServer();
  clear(out, h('p', { class: 'muted' }, 'Getting…'));
  try {
    const answer = await api('GET', `/api/servers/${enc(server.id)}/skill?uri=${enc(skill.uri)}`);
    clear(out, h('pre', { class: 'json' }, pretty(answer.result)));
  } catch (error) {
    clear(out, errorBox(error));
  }
}

async function verify(out, skill, requireDigests) {
  const server = currentServer();
  clear(out, h('p', { class: 'muted' }, 'Reading every file of the manifest…'));
  try {
    const report = await api('POST', `/api/servers/${enc(server.id)}/skill:verify`,
      { uri: skill.uri, requireDigests });
    clear(out, reportView(report));
  } catch (error) {
    clear(out, errorBox(error));
  }
}

// The verification report: the verdict, the entry's problems and each file.
export function reportView(report) {
  const verdict = report.verdict || 'failed';
  const counts = `${report.verified || 0} verified, ${report.mismatched || 0} mismatched, ` +
    `${report.unverifiable || 0} unverifiable, ${report.unreadable || 0} unreadable`;
  return h('div', { class: `skill-report verdict-${verdict}` },
    h('p', { role: 'status' }, h('strong', {}, verdict), ` — ${counts}`),
    (report.issues || []).length
      ? h('ul', { class: 'issues' }, report.issues.map((i) => h('li', {},
        h('strong', {}, `${i.severity} ${i.code}`), i.resourceUri ? ` ${i.resourceUri}` : '', `: ${i.message}`)))
      : null,
    h('table', { class: 'grid' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Status'), h('th', {}, 'File'), h('th', {}, 'Details'))),
      h('tbody', {}, (report.files || []).map((f) => h('tr', { class: `file-${f.status}` },
        h('td', {}, f.status),
        h('td', { class: 'mono' }, f.uri),
        h('td', { class: 'mono' }, f.status === 'verified' ? f.actualDigest
          : [f.expectedDigest ? `manifest ${f.expectedDigest}` : '', f.actualDigest ? ` served ${f.actualDigest}` : '',
            f.reason ? ` — ${f.reason}` : ''].join('')))))));
}

// One directory's children (resources/directory/read) into `out`, a page
// at a time ("More"); a child directory opens in place. Explore uses it for
// directory resources.
export async function browse(out, uri, cursor, shown = []) {
  const server = currentServer();
  if (!cursor) clear(out, h('p', { class: 'muted' }, `Reading ${uri}…`));
  try {
    const answer = await api('GET', `/api/servers/${enc(server.id)}/resource-directory?uri=${enc(uri)}` +
      (cursor ? `&cursor=${enc(cursor)}` : ''));
    const children = shown.concat(answer.resources || []);
    clear(out,
      h('p', { class: 'mono' }, uri),
      h('ul', { class: 'item-list', 'aria-label': `Children of ${uri}` }, children.map((c) => h('li', {},
        c.mimeType === 'inode/directory'
          ? h('button', { type: 'button', class: 'item', onclick: () => browse(out, c.uri) }, `${c.name || c.uri}/`)
          : h('span', { class: 'mono' }, c.name || c.uri)))),
      answer.nextCursor
        ? h('button', { type: 'button', onclick: () => browse(out, uri, answer.nextCursor, children) }, 'More')
        : null);
  } catch (error) {
    clear(out, errorBox(error));
  }
}
