#!/usr/bin/env node
// The floor under every HTTP bridge in bridge_bench.mjs: a Streamable HTTP
// MCP endpoint that answers at once, with no MCP server behind it, on raw
// TCP (node:net) so that its own cost is as small as Node allows. The
// time an SDK client spends on a tools/call against it is the client's own
// HTTP cost, which every HTTP bridge pays on top of its own work and which
// a stdio client does not. It speaks just enough: initialize (answered
// with an Mcp-Session-Id), notifications (202), tools/call of echo
// ("Echo: <message>"), GET (405: no standalone stream) and DELETE (200).
//
//   node tools/perf/http_floor_server.mjs PORT
//
// Listens on 127.0.0.1:PORT and prints "listening" once it does.
import net from 'node:net';
import process from 'node:process';

const port = Number(process.argv[2] ?? 0);

function reply(socket, status, headers, body) {
  const head = [`HTTP/1.1 ${status} ${status === 200 ? 'OK' : status === 202 ? 'Accepted' : 'Method Not Allowed'}`,
    `Content-Length: ${Buffer.byteLength(body)}`, ...headers];
  socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
}

function answer(socket, method, body) {
  if (method === 'GET') return reply(socket, 405, ['Allow: POST, DELETE'], '');
  if (method === 'DELETE') return reply(socket, 200, [], '');
  let message;
  try {
    message = JSON.parse(body);
  } catch {
    return reply(socket, 400, ['Content-Type: application/json'], '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
  }
  if (message.id === undefined) return reply(socket, 202, [], '');
  const json = ['Content-Type: application/json'];
  if (message.method === 'initialize') {
    return reply(socket, 200, [...json, 'Mcp-Session-Id: floor'], JSON.stringify({
      jsonrpc: '2.0', id: message.id,
      result: { protocolVersion: message.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {} },
        serverInfo: { name: 'http-floor', version: '1.0.0' } },
    }));
  }
  if (message.method === 'tools/call') {
    return reply(socket, 200, json, JSON.stringify({
      jsonrpc: '2.0', id: message.id,
      result: { content: [{ type: 'text', text: `Echo: ${message.params?.arguments?.message ?? ''}` }] },
    }));
  }
  return reply(socket, 200, json, JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let buffer = Buffer.alloc(0);
  socket.on('data', (data) => {
    buffer = Buffer.concat([buffer, data]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffer.subarray(0, end).toString('latin1');
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
      buffer = buffer.subarray(end + 4 + length);
      answer(socket, head.slice(0, head.indexOf(' ')), body);
    }
  });
  socket.on('error', () => {});
});
server.listen(port, '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
