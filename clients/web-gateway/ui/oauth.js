// OAuth: per HTTP server, what the daemon holds (GET /api/oauth/{id}/status:
// issuer, scopes, expiry, refresh token), "Log in" (the authorization code
// flow: /oauth/authorize/{id} in a new tab, through the authorization
// server's pages to the daemon's /oauth/callback), refresh and log out; and
// the guided debugger (/api/oauth/{id}/flow, flow:advance) as a stepper:
// each of the six steps with what was checked (the flow's log), its HTTP
// exchanges (request and response, headers and bodies; secrets masked) and,
// for a failed step, the error and the hint. The flow is followed live
// (`oauth` events), so a login run from here, the CLI or a refresh shows up.
import { api, enc, ApiError } from './api.js';
import { store, on, serverName } from './state.js';
import { h, clear, field, errorBox, actionButton, toast, dateTimeOf, pretty, webLink } from './util.js';

const STEPS = [
  ['METADATA_DISCOVERY', 'Metadata discovery', 'The 401 challenge, the protected resource metadata (RFC 9728) and the authorization server metadata (RFC 8414); the resource and issuer must match.'],
  ['CLIENT_REGISTRATION', 'Client registration', 'Pre-registered client, client ID metadata document, or dynamic registration (RFC 7591).'],
  ['AUTHORIZATION_REDIRECT', 'Authorization URL', 'PKCE S256, a single-use state and the resource indicator (RFC 8707).'],
  ['AUTHORIZATION_CODE', 'Authorization code', 'The browser leg: the redirect to /oauth/callback; state and iss (RFC 9207) are checked before the code is redeemed.'],
  ['TOKEN_REQUEST', 'Token request', 'The code, the PKCE verifier and the resource, with client authentication.'],
  ['COMPLETE', 'Complete', 'The tokens are stored for the server with their issuer and resource.'],
];
const INDEX = Object.fromEntries(STEPS.map(([s], i) => [s, i]));
const SECRET_KEYS = /^(access_token|refresh_token|id_token|client_secret|code|code_verifier|client_assertion|assertion|subject_token|password|token|private_key|device_code)$/i;
const SECRET_HEADERS = /^(authorization|proxy-authorization|cookie|set-cookie|dpop|x-session-token)$/i;

let root = null;
let serverFilter = null;
let offEvents = null;
let offServers = null;
let shownServers = '';
let shownKey = '';  // what the status and debugger show
let loginNote = null;  // () => the note under the login button, kept across redraws
let reloadTimer = null;
const expanded = new Set();  // steps whose detail is open
// The debugger's form, kept across redraws.
const options = { protocol: '', strategy: '', scopes: '', target: 'COMPLETE', startAt: 'METADATA_DISCOVERY', issuer: '', clientId: '', clientSecret: '' };

function httpServers() {
  return store.servers.filter((s) => s.transport === 'streamableHttp' || s.transport === 'sse');
}

function chosen() {
  const list = httpServers();
  const want = serverFilter === null ? store.current : serverFilter;
  return (list.find((s) => s.id === want) || list[0] || {}).id || '';
}

// --- masking: the daemon masks secrets already; this is the second line ---

function masked(value) {
  const text = String(value ?? '');
  if (text === '' || text.startsWith('***')) return text;
  return `***(${text.length} chars)`;
}

function maskJson(value) {
  if (Array.isArray(value)) return value.map(maskJson);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEYS.test(k) && typeof v === 'string' ? masked(v) : maskJson(v)]));
  }
  return value;
}

// A request or response body: JSON, a form, or text, with secret fields
// masked.
export function maskBody(body) {
  const text = String(body ?? '');
  if (!text) return '';
  try {
    return JSON.stringify(maskJson(JSON.parse(text)), null, 2);
  } catch { /* not JSON */ }
  if (/^[\w.~%-]+=[^&\s]*(&[\w.~%-]+=[^&\s]*)*$/.test(text)) {
    return text.split('&').map((pair) => {
      const [k, ...rest] = pair.split('=');
      const v = rest.join('=');
      let name = k;
      try {
        name = decodeURIComponent(k);
      } catch { /* as is */ }
      return `${k}=${SECRET_KEYS.test(name) ? masked(v) : v}`;
    }).join('&');
  }
  return text;
}

export function maskHeaders(headers) {
  return Object.entries(headers || {}).map(([k, v]) => [k, SECRET_HEADERS.test(k) ? masked(v) : String(v)]);
}

// --- the view ----------------------------------------------------------------

export function mount(container) {
  unmount();
  root = container;
  shownKey = '';
  const list = httpServers();
  shownServers = list.map((s) => `${s.id}=${s.name}`).join(',');
  offServers = on('servers', () => {
    if (root && httpServers().map((s) => `${s.id}=${s.name}`).join(',') !== shownServers) mount(root);
  });
  const server = h('select', { id: 'oauth-server' }, list.map((s) => h('option', { value: s.id, selected: chosen() === s.id }, s.name)));
  server.addEventListener('change', () => {
    serverFilter = server.value;
    expanded.clear();
    loginNote = null;
    // The previous server's buttons go at once: a click while the new
    // server loads must not log in to, or start a flow for, the old one.
    renderLoading(server.value);
    load();
  });
  clear(root,
    h('div', { class: 'view-head' }, h('h2', { id: 'title-oauth' }, 'OAuth')),
    h('p', { class: 'hint' }, 'The daemon is the OAuth client of protected HTTP servers: log in here, or walk the flow one step at a time in the debugger below.'),
    list.length === 0 ? h('p', { class: 'empty' }, 'No HTTP servers: OAuth applies to Streamable HTTP and SSE servers.')
      : [h('form', { class: 'filters', 'aria-label': 'Choose the server', onsubmit: (e) => e.preventDefault() }, field('Server', server)),
        h('section', { id: 'oauth-status', class: 'panel', 'aria-labelledby': 'oauth-status-title' }),
        h('section', { id: 'oauth-debugger', class: 'panel', 'aria-labelledby': 'oauth-debugger-title' })]);
  offEvents = on('oauth', (event) => {
    if (event.oauth.serverId !== chosen()) return;
    const t = event.oauth.transition;
    if (t && t.to === 'COMPLETE' && t.from !== 'COMPLETE' && !t.error) {
      const text = `Signed in to ${serverName(event.oauth.serverId)}`;
      toast(text);
      loginNote = () => `${text} at ${dateTimeOf(Date.now())}.`;
      const note = root && root.querySelector('#oauth-login-note');
      if (note) clear(note, loginNote());
    }
    // Several events arrive per step: one reload for the burst.
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(load, 150);
  });
  if (list.length) {
    renderLoading(chosen());
    load();
  }
}

export function unmount() {
  if (offEvents) offEvents();
  if (offServers) offServers();
  offEvents = null;
  offServers = null;
  clearTimeout(reloadTimer);
  root = null;
}

let loads = 0;
async function load() {
  const id = chosen();
  if (!root || !id) return;
  // Only the latest load draws: an older answer never replaces a newer one.
  const seq = ++loads;
  const [status, flow] = await Promise.all([
    api('GET', `/api/oauth/${enc(id)}/status`).catch((error) => ({ error })),
    api('GET', `/api/oauth/${enc(id)}/flow`).catch((error) => (error instanceof ApiError && error.status === 404 ? null : { error })),
  ]);
  if (!root || id !== chosen() || seq !== loads) return;
  // Redrawn only when something changed, keeping the focus where it was.
  const key = JSON.stringify([id, status && status.error ? String(status.error.message) : status, flow && flow.error ? String(flow.error.message) : flow]);
  if (key === shownKey) return;
  shownKey = key;
  const focused = document.activeElement && root.contains(document.activeElement) ? document.activeElement.id : '';
  renderStatus(id, status);
  renderDebugger(id, flow);
  if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
}

// The chosen server's panels while its status and flow load: headings and
// no control.
function renderLoading(id) {
  if (!root || !root.querySelector('#oauth-status')) return;
  shownKey = '';
  const name = serverName(id);
  clear(root.querySelector('#oauth-status'), h('h3', { id: 'oauth-status-title' }, `Sign-in of ${name}`),
    h('p', { class: 'hint', role: 'status', 'aria-busy': 'true' }, 'Loading…'));
  clear(root.querySelector('#oauth-debugger'), h('h3', { id: 'oauth-debugger-title' }, 'Guided debugger'),
    h('p', { class: 'hint', 'aria-busy': 'true' }, `Loading the flow of ${name}…`));
}

function untilText(iso) {
  if (!iso) return 'no expiry given';
  const left = Date.parse(iso) - Date.now();
  if (Number.isNaN(left)) return iso;
  if (left <= 0) return `${dateTimeOf(Date.parse(iso))} (expired)`;
  const minutes = Math.round(left / 60000);
  return `${dateTimeOf(Date.parse(iso))} (in ${minutes < 90 ? `${minutes} min` : `${Math.round(minutes / 60)} h`})`;
}

function renderStatus(id, status) {
  const box = root.querySelector('#oauth-status');
  const name = serverName(id);
  if (status && status.error) {
    clear(box, h('h3', { id: 'oauth-status-title' }, `Sign-in of ${name}`), errorBox(status.error));
    return;
  }
  const forget = h('input', { type: 'checkbox', id: 'oauth-forget' });
  const rows = status.authenticated ? [
    ['Signed in', 'yes'],
    ['Issuer', status.issuer],
    ['Scopes', (status.scopes || []).join(' ') || '(none granted)'],
    ['Expires', untilText(status.expiresAt)],
    ['Refresh', status.hasRefreshToken ? 'a refresh token is held: the daemon refreshes before expiry' : 'no refresh token: log in again when it expires'],
    ['Token type', status.tokenType],
    ['Obtained', status.obtainedAt ? dateTimeOf(Date.parse(status.obtainedAt)) : ''],
    ['Resource', status.resource],
    ['Client', `${status.clientId || ''}${status.registrationStrategy ? ` (${status.registrationStrategy}${status.tokenEndpointAuthMethod ? `, ${status.tokenEndpointAuthMethod}` : ''})` : ''}`],
  ] : [['Signed in', 'no'], ['Client', status.clientId ? `${status.clientId} (${status.registrationStrategy || 'registered'})` : 'none registered yet']];
  clear(box,
    h('h3', { id: 'oauth-status-title' }, `Sign-in of ${name}`),
    h('dl', { class: 'meta oauth-meta' }, rows.filter(([, v]) => v).map(([k, v]) => [h('dt', {}, k), h('dd', { dataset: { key: k } }, v)])),
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'primary', id: 'oauth-login', onclick: () => login(id) }, status.authenticated ? 'Log in again' : 'Log in'),
      status.hasRefreshToken ? actionButton('Refresh now', async () => {
        const answer = await api('POST', `/oauth/refresh/${enc(id)}`, {});
        toast(answer && answer.success ? `Refreshed: the new token expires ${untilText(answer.expiresAt)}` : 'The refresh did not succeed');
        await load();
      }, { id: 'oauth-refresh' }) : null,
      status.authenticated || status.clientId ? [actionButton('Log out', async () => {
        await api('DELETE', `/oauth/token/${enc(id)}${forget.checked ? '?forgetClient=true' : ''}`);
        toast(`Logged out of ${name}`);
        await load();
      }, { id: 'oauth-logout', class: 'danger' }),
      h('span', { class: 'check' }, forget, h('label', { for: forget.id }, 'also forget the client registration'))] : null),
    h('p', { class: 'hint', id: 'oauth-login-note', role: 'status' }, loginNote ? loginNote() : null));
}

// The authorization code flow in a new tab: the daemon answers
// /oauth/authorize/{id} with a redirect to the authorization server, whose
// pages end at /oauth/callback (which, told the web UI started it, sends
// the person back here); this tab follows the flow's events.
function login(id) {
  const path = `/oauth/authorize/${enc(id)}?startedFrom=web`;
  window.open(path, '_blank', 'noopener');
  const note = root.querySelector('#oauth-login-note');
  loginNote = () => ['Continue in the new tab; this page updates when the sign-in completes. No tab? ',
    h('a', { href: path, target: '_blank', rel: 'noopener noreferrer' }, 'Open the sign-in page'), '.'];
  if (note) clear(note, loginNote());
}

// Opens an authorization URL the daemon built, only when it is http(s).
function openWeb(url) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (parsed && (parsed.protocol === 'https:' || parsed.protocol === 'http:')) window.open(parsed.href, '_blank', 'noopener');
  else toast('The authorization URL is not an http(s) URL: not opened', 'error');
}

function stepStatus(flow, index) {
  const current = INDEX[flow.state] ?? 0;
  if (index < current) return ['pass', 'Done'];
  if (index > current) return ['skip', 'To do'];
  if (flow.latestError) return ['fail', 'Failed'];
  if (flow.state === 'COMPLETE') return ['pass', 'Done'];
  return ['warn', 'Next'];
}

function exchangeView(x) {
  return h('details', { class: 'oauth-exchange' },
    h('summary', {}, h('span', { class: 'mono' }, `${x.method} ${x.url}`), ' ',
      h('span', { class: `check check-${x.status >= 200 && x.status < 400 ? 'pass' : 'fail'}` }, x.status ? String(x.status) : 'no answer'),
      ' ', h('span', { class: 'hint' }, `${Math.round(x.durationMs || 0)} ms`)),
    h('div', { class: 'side-by-side' },
      h('div', {}, h('h5', {}, 'Request'),
        h('pre', { class: 'json' }, `${x.method} ${x.url}\n${maskHeaders(x.requestHeaders).map(([k, v]) => `${k}: ${v}`).join('\n')}`),
        x.requestBody ? h('pre', { class: 'json oauth-body' }, maskBody(x.requestBody)) : null),
      h('div', {}, h('h5', {}, 'Response'),
        h('pre', { class: 'json' }, `${x.status || '(none)'}\n${maskHeaders(x.responseHeaders).map(([k, v]) => `${k}: ${v}`).join('\n')}`),
        x.responseBody ? h('pre', { class: 'json oauth-body' }, maskBody(x.responseBody)) : null,
        x.error ? h('p', { class: 'err' }, x.error) : null)));
}

function renderDebugger(id, flow) {
  const box = root.querySelector('#oauth-debugger');
  const protocol = h('select', { id: 'oauth-protocol' }, [['', 'Negotiate'], ['2025-03-26', '2025-03-26'], ['2025-06-18', '2025-06-18'], ['2025-11-25', '2025-11-25'], ['2026-07-28', '2026-07-28']]
    .map(([v, l]) => h('option', { value: v, selected: options.protocol === v }, l)));
  const strategy = h('select', { id: 'oauth-strategy' }, [['', 'Automatic'], ['dcr', 'Dynamic registration'], ['preregistered', 'Pre-registered'], ['cimd', 'Client ID metadata document']]
    .map(([v, l]) => h('option', { value: v, selected: options.strategy === v }, l)));
  const scopes = h('input', { type: 'text', id: 'oauth-scopes', placeholder: 'mcp:read mcp:admin', value: options.scopes });
  const target = h('select', { id: 'oauth-target' }, STEPS.slice(1).map(([s, label]) => h('option', { value: s, selected: s === options.target }, label)));
  // Starting after discovery: the authorization server is given; after
  // registration, a client registered with it too.
  const startAt = h('select', { id: 'oauth-start-at' }, STEPS.slice(0, 3).map(([s, label]) => h('option', { value: s, selected: s === options.startAt }, label)));
  const issuer = h('input', { type: 'url', id: 'oauth-issuer', placeholder: 'https://auth.example.com', value: options.issuer });
  const clientId = h('input', { type: 'text', id: 'oauth-client-id', value: options.clientId, autocomplete: 'off' });
  const clientSecret = h('input', { type: 'password', id: 'oauth-client-secret', value: options.clientSecret, autocomplete: 'off' });
  const given = h('fieldset', { class: 'filters oauth-given', hidden: startAt.value === 'METADATA_DISCOVERY' },
    h('legend', {}, 'What the skipped steps would have found'),
    field('Authorization server', issuer, 'Its issuer, or the URL of its metadata document; the server\'s own discovery is skipped.'),
    field('Client ID', clientId, 'A client registered with that authorization server (needed to start at the authorization URL).'),
    field('Client secret', clientSecret, 'Only for a confidential client; never shown back.'));
  const keep = () => {
    Object.assign(options, { protocol: protocol.value, strategy: strategy.value, scopes: scopes.value, target: target.value,
      startAt: startAt.value, issuer: issuer.value, clientId: clientId.value, clientSecret: clientSecret.value });
    given.hidden = startAt.value === 'METADATA_DISCOVERY';
  };
  [protocol, strategy, target, startAt].forEach((c) => c.addEventListener('change', keep));
  [scopes, issuer, clientId, clientSecret].forEach((c) => c.addEventListener('input', keep));
  const start = async () => {
    const body = { protocolVersion: protocol.value, registrationStrategy: strategy.value };
    const list = scopes.value.trim().split(/\s+/).filter(Boolean);
    if (list.length) body.scopes = list;
    if (startAt.value !== 'METADATA_DISCOVERY') {
      body.startAt = startAt.value;
      body.authorizationServer = issuer.value.trim();
      if (clientId.value.trim()) body.clientId = clientId.value.trim();
      if (clientSecret.value) body.clientSecret = clientSecret.value;
    }
    expanded.clear();
    const started = await api('POST', `/api/oauth/${enc(id)}/flow`, body);
    if (started.latestError) toast(`Stopped at ${STEPS[INDEX[started.state] ?? 0][1]}: ${started.latestError}`, 'error');
    return started;
  };
  const advance = (body = {}) => api('POST', `/api/oauth/${enc(id)}/flow:advance`, body);
  // Runs the flow up to `want` (starting it when there is none), stopping
  // at the first failed step and at the browser leg.
  const runTo = async (want) => {
    let f = flow && flow.state !== 'COMPLETE' ? flow : await start();
    for (let guard = 0; guard < 8 && (INDEX[f.state] ?? 0) < INDEX[want]; guard++) {
      if (f.state === 'AUTHORIZATION_CODE') break;
      const before = f.state;
      f = await advance();
      if (f.latestError || f.state === before) break;
    }
    await load();
    if (f.latestError) toast(`Stopped at ${STEPS[INDEX[f.state]][1]}: ${f.latestError}`, 'error');
    else if (f.state === 'AUTHORIZATION_CODE' && INDEX[want] > INDEX.AUTHORIZATION_CODE) toast('The browser leg is next: open the authorization URL, paste the redirect, or let the daemon follow it.');
  };
  const redirect = h('input', { type: 'url', id: 'oauth-redirect', placeholder: 'http://127.0.0.1:…/oauth/callback?code=…&state=…' });
  const current = flow && !flow.error ? INDEX[flow.state] ?? 0 : -1;
  const atCode = flow && !flow.error && flow.state === 'AUTHORIZATION_CODE';
  clear(box,
    h('h3', { id: 'oauth-debugger-title' }, 'Guided debugger'),
    h('form', { class: 'filters', 'aria-label': 'Start a flow', onsubmit: (e) => e.preventDefault() },
      field('Protocol', protocol), field('Registration', strategy), field('Scopes', scopes), field('Start at', startAt), field('Run to', target),
      given,
      actionButton(flow && !flow.error ? 'Start over' : 'Start', async () => { await start(); await load(); }, { id: 'oauth-start' }),
      actionButton('Run to step', () => runTo(target.value), { id: 'oauth-run' })),
    flow && flow.error ? errorBox(flow.error) : null,
    !flow ? h('p', { class: 'empty' }, 'No flow for this server yet: Start begins one at the step chosen in Start at; Log in runs one to the end.') : null,
    flow && !flow.error ? [
      h('p', { class: 'oauth-summary', role: 'status' },
        `State: ${STEPS[current] ? STEPS[current][1] : flow.state}`, flow.statusMessage ? ` — ${flow.statusMessage}` : '',
        flow.issuer ? ` · issuer ${flow.issuer}` : '', flow.registrationStrategy ? ` · ${flow.registrationStrategy}` : ''),
      h('div', { class: 'actions' },
        flow.state !== 'COMPLETE' && !atCode ? actionButton(flow.latestError ? 'Retry this step' : 'Advance one step', async () => { await advance(); await load(); }, { id: 'oauth-advance', class: 'primary' }) : null,
        atCode && flow.authorizationUrl ? h('button', { type: 'button', id: 'oauth-open-url', onclick: () => openWeb(flow.authorizationUrl) }, 'Open the authorization URL in a new tab') : null,
        atCode ? actionButton('Let the daemon follow the redirects', async () => { await advance({ followRedirect: true }); await load(); }, { id: 'oauth-follow' }) : null),
      atCode ? h('form', { class: 'filters', 'aria-label': 'Paste the redirected URL', onsubmit: async (e) => {
        e.preventDefault();
        try {
          await advance({ redirectUrl: redirect.value.trim() });
        } catch (error) {
          toast(`${error.code || ''} ${error.message}`, 'error');
        }
        await load();
      } }, field('Redirected URL', redirect, 'Where the browser landed after approving, pasted back (code, state and iss are checked).'),
      h('button', { type: 'submit' }, 'Use this redirect')) : null,
      h('ol', { class: 'oauth-steps' }, STEPS.map(([state, label, about], i) => {
        const [cls, text] = stepStatus(flow, i);
        const logs = (flow.log || []).filter((l) => l.state === state);
        const exchanges = (flow.exchanges || []).filter((x) => x.step === state);
        const failed = cls === 'fail';
        const open = expanded.has(state) || failed || (i === current && state !== 'COMPLETE');
        const detailsId = `oauth-step-${state.toLowerCase()}`;
        return h('li', { class: `oauth-step step-${cls}`, dataset: { step: state }, 'aria-current': i === current ? 'step' : null },
          h('div', { class: 'oauth-step-head' },
            h('span', { class: `check check-${cls} step-mark` }, text),
            h('button', { type: 'button', class: 'link step-toggle', 'aria-expanded': String(open), 'aria-controls': detailsId,
              onclick: (e) => {
                const body = box.querySelector(`#${detailsId}`);
                body.hidden = !body.hidden;
                if (body.hidden) expanded.delete(state);
                else expanded.add(state);
                e.currentTarget.setAttribute('aria-expanded', String(!body.hidden));
              } },
            `${i + 1}. ${label}`),
            h('span', { class: 'hint' }, exchanges.length ? `${exchanges.length} HTTP exchange${exchanges.length > 1 ? 's' : ''}` : '')),
          h('div', { id: detailsId, class: 'oauth-step-body', hidden: !open },
            h('p', { class: 'hint' }, about),
            failed ? h('div', { class: 'error-box step-error', role: 'alert' }, h('strong', {}, 'Failed: '), flow.latestError,
              flow.hint ? h('p', { class: 'step-hint' }, h('strong', {}, 'Hint: '), flow.hint) : null) : null,
            logs.length ? [h('h4', {}, 'What was checked'), h('ul', { class: 'oauth-log' }, logs.map((l) => h('li', { class: l.error ? 'err' : '' }, l.message, l.error ? ` — ${l.error}` : '')))] : null,
            exchanges.length ? [h('h4', {}, 'HTTP exchanges'), exchanges.map(exchangeView)] : null,
            state === 'METADATA_DISCOVERY' && Object.keys(flow.authorizationServerMetadata || {}).length
              ? h('details', {}, h('summary', {}, 'Metadata found'), h('pre', { class: 'json' }, pretty(maskJson({ resource: flow.resourceMetadata, authorizationServer: flow.authorizationServerMetadata })))) : null,
            state === 'CLIENT_REGISTRATION' && Object.keys(flow.clientInfo || {}).length
              ? h('pre', { class: 'json' }, pretty(maskJson(flow.clientInfo))) : null,
            state === 'AUTHORIZATION_REDIRECT' && flow.authorizationUrl
              ? h('p', {}, 'Authorization URL: ', webLink(flow.authorizationUrl), h('br'), `PKCE ${flow.codeChallengeMethod || ''} challenge ${flow.codeChallenge || ''}; state ${masked(flow.oauthState)}; scopes asked: ${(flow.requestedScopes || []).join(' ')}`) : null,
            state === 'COMPLETE' && flow.state === 'COMPLETE'
              ? h('pre', { class: 'json' }, pretty(maskJson({ tokens: flow.tokens, grantedScopes: flow.grantedScopes }))) : null));
      }))] : null);
}
