// Preload for third-party test peers that listen on every interface, such as
// server-everything (`app.listen(PORT)`) and the conformance suite's test
// servers (`listen(0)`): makes every TCP listen that names no host bind
// 127.0.0.1 instead, so tests never expose a port beyond this machine.
//
//   node --import /path/to/tools/npm/loopback-only.mjs <server> ...
//
// A listen without a host binds at once, so callers may read
// `server.address().port` right after `listen(0)` (the conformance suite
// does). A listen with a host resolves it through dns.lookup first, which
// answers later even for an IP literal; while a rewritten listen runs, the
// lookup of the host it added answers at once instead, which keeps the bind
// synchronous as the caller expects.
import dns from 'node:dns';
import net from 'node:net';

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;
const lookup = dns.lookup;
const isPort = (value) => typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
let bindingLoopback = false;

dns.lookup = function lookupLoopbackAtOnce(hostname, ...rest) {
  const callback = rest[rest.length - 1];
  if (bindingLoopback && hostname === LOOPBACK && typeof callback === 'function') {
    const options = rest.length > 1 ? rest[0] : undefined;
    if (options !== null && typeof options === 'object' && options.all) {
      callback(null, [{ address: LOOPBACK, family: 4 }]);
    } else {
      callback(null, LOOPBACK, 4);
    }
    return {};
  }
  return lookup.call(this, hostname, ...rest);
};

net.Server.prototype.listen = function listenOnLoopback(...args) {
  let rewritten = false;
  if (args.length === 0 || typeof args[0] === 'function') {
    args.unshift(0, LOOPBACK); // listen([callback]): any free port
    rewritten = true;
  } else if (isPort(args[0]) && typeof args[1] !== 'string') {
    args.splice(1, 0, LOOPBACK); // listen(port[, backlog][, callback])
    rewritten = true;
  } else if (args[0] !== null && typeof args[0] === 'object' && !(args[0] instanceof net.Server) &&
             args[0].path === undefined && args[0].host === undefined && args[0].fd === undefined &&
             args[0].handle === undefined && args[0]._handle === undefined) {
    args[0] = { ...args[0], host: LOOPBACK }; // listen({port, ...})
    rewritten = true;
  }
  if (!rewritten) return listen.apply(this, args);
  bindingLoopback = true;
  try {
    return listen.apply(this, args);
  } finally {
    bindingLoopback = false;
  }
};
