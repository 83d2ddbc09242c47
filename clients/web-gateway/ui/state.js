// What every view shares: the servers, their statuses, the pending
// requests, the chosen server, and a small event hub fed by /api/events.
import { api, enc } from './api.js';

export const store = {
  servers: [],            // ServerConfig objects from GET /config
  statuses: new Map(),    // server id -> ServerStatus
  pending: new Map(),     // pending id -> PendingRequest
  current: '',            // the chosen server's id
};

/** @type {Map<string, Set<(data: any) => void>>} */
const listeners = new Map();
/**
 * Calls `listener` with each `type` event ('servers', 'status', 'message',
 * 'oauth', ...); answers the function that stops it.
 * @param {string} type
 * @param {(data: any) => void} listener
 * @returns {() => boolean}
 */
export function on(type, listener) {
  if (!listeners.has(type)) listeners.set(type, new Set());
  listeners.get(type).add(listener);
  return () => listeners.get(type).delete(listener);
}
// Calls `changed` when a server is added, removed or renamed (not when one
// only connects or fails), for views whose server choice lists the names;
// answers the function that stops it.
/** @param {() => void} changed @returns {() => boolean} */
export function onServerListChange(changed) {
  const names = () => store.servers.map((s) => `${s.id}=${s.name}`).join(',');
  let shown = names();
  return on('servers', () => {
    const now = names();
    if (now === shown) return;
    shown = now;
    changed();
  });
}
/** @param {string} type @param {any} data */
export function emit(type, data) {
  for (const listener of listeners.get(type) || []) {
    try {
      listener(data);
    } catch (error) {
      console.error(error);
    }
  }
}

/** @param {string} id @returns {string} its name, else a short id */
export function serverName(id) {
  const server = store.servers.find((s) => s.id === id);
  return server ? server.name : (id ? id.slice(0, 8) : '');
}

export function currentServer() {
  return store.servers.find((s) => s.id === store.current) || null;
}

/** @param {string} id */
export function setCurrent(id) {
  store.current = id || '';
  if (id) sessionStorage.setItem('inspector.current', id);
  emit('current', store.current);
}

export async function loadServers() {
  const answer = await api('GET', '/config');
  store.servers = (answer && answer.servers) || [];
  store.servers.sort((a, b) => a.name.localeCompare(b.name));
  if (!store.servers.some((s) => s.id === store.current)) {
    const remembered = sessionStorage.getItem('inspector.current');
    const pick = store.servers.find((s) => s.id === remembered) || store.servers[0];
    store.current = pick ? pick.id : '';
  }
  emit('servers', store.servers);
  await Promise.all(store.servers.map((s) => loadStatus(s.id)));
  return store.servers;
}

export async function loadStatus(id) {
  try {
    const status = await api('GET', `/api/servers/${enc(id)}/status`);
    store.statuses.set(id, status);
    emit('status', status);
  } catch {
    // The server may have been deleted meanwhile.
  }
}

// Replaces what the list knew before the call started; items that arrived
// on the event stream meanwhile stay.
export async function loadPending() {
  const asked = Date.now();
  const answer = await api('GET', '/api/pending');
  const listed = new Map(((answer && answer.pending) || []).map((item) => [item.id, item]));
  for (const [id, item] of store.pending) {
    if (!listed.has(id) && item.seenAt < asked) store.pending.delete(id);
  }
  for (const [id, item] of listed) store.pending.set(id, { ...item, seenAt: asked });
  emit('pending', null);
}

// One EventSource for the whole page: same origin, so the sign-in cookie
// goes with it and no token is ever put in its URL.
let source = null;
/** @param {(live: boolean) => void} onLive told when the stream opens or breaks */
export function startEvents(onLive) {
  if (source) source.close();
  source = new EventSource('/api/events?backlog=500');
  source.onopen = () => onLive(true);
  source.onerror = () => onLive(false);
  source.onmessage = (e) => {
    let event;
    try {
      event = JSON.parse(e.data);
    } catch {
      return;
    }
    if (event.message) emit('message', event);
    if (event.state) {
      const status = store.statuses.get(event.state.serverId) || { serverId: event.state.serverId };
      status.state = event.state.to;
      if (event.state.to === 'ERROR') {
        status.errorCode = event.state.errorCode;
        status.errorMessage = event.state.errorMessage;
      }
      store.statuses.set(event.state.serverId, status);
      emit('status', status);
      // The rest (pid, protocol, capabilities) comes with the status call.
      loadStatus(event.state.serverId);
    }
    if (event.pending) {
      const item = event.pending;
      if (item.status === 'PENDING') store.pending.set(item.id, { ...item, seenAt: Date.now() });
      else store.pending.delete(item.id);
      emit('pending', item);
    }
    if (event.config) loadServers().catch(() => {});
    if (event.listChanged) emit('listChanged', event.listChanged);
    if (event.log) emit('log', event);
    if (event.dropped) emit('dropped', event.dropped);
    if (event.held) emit('held', event.held);
    if (event.task) emit('task', event);
    if (event.oauth) emit('oauth', event);
    if (event.catalogChanged) emit('catalogChanged', event.catalogChanged);
  };
}
