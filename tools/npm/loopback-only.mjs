// Preload for third-party test peers that listen on every interface, such as
// server-everything (`app.listen(PORT)`): makes every TCP listen that names
// no host bind 127.0.0.1 instead, so tests never expose a port beyond this
// machine.
//
//   node --import /path/to/tools/npm/loopback-only.mjs <server> ...
import net from 'node:net';

const listen = net.Server.prototype.listen;
const isPort = (value) => typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));

net.Server.prototype.listen = function listenOnLoopback(...args) {
  if (isPort(args[0]) && typeof args[1] !== 'string') {
    args.splice(1, 0, '127.0.0.1'); // listen(port[, backlog][, callback])
  } else if (args[0] !== null && typeof args[0] === 'object' && !(args[0] instanceof net.Server) &&
             args[0].path === undefined && args[0].host === undefined && args[0].fd === undefined &&
             args[0].handle === undefined && args[0]._handle === undefined) {
    args[0] = { ...args[0], host: '127.0.0.1' }; // listen({port, ...})
  }
  return listen.apply(this, args);
};
