// bridge_bench.mjs's hand-written MCP clients, so that the figures are the
// bridges' rather than the client's: a Streamable HTTP client on node:http
// with a keep-alive agent (RawHttpSession, --client raw), the same written
// and parsed by hand on one net.Socket (SocketHttpSession, --client
// socket), and a JSON-lines stdio client for the direct baseline
// (RawStdioSession). Each session belongs to the one benchmark loop that
// opened it: open(), then echo() calls one at a time, then close().
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';

// The raw client: the least a Streamable HTTP client must do, so that the
// figures are the bridges' rather than the client's.
export const PROTOCOL_VERSION = '2025-06-18';
export const CLIENT_INFO = { name: 'bridge-bench', version: '1.0.0' };

// What both HTTP clients do with a session, given post(message, id), which
// resolves with the JSON-RPC message answering `id` (null for a
// notification), and connect().
export class HttpSession {
  async open() {
    await this.connect();
    const id = this.nextId++;
    const answer = await this.post({
      jsonrpc: '2.0', id, method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    }, id);
    if (!answer.result) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
    this.protocolVersion = answer.result.protocolVersion;
    await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' }, null);
  }

  async echo(payload) {
    const id = this.nextId++;
    const answer = await this.post({
      jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { message: payload } },
    }, id);
    if (answer.error) throw new Error(JSON.stringify(answer.error));
    return answer.result?.content?.[0]?.text ?? '';
  }
}

export class RawHttpSession extends HttpSession {
  constructor(url) {
    super();
    this.url = url;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    this.sessionId = null;
    this.protocolVersion = null;
    this.nextId = 1;
  }

  async connect() {}

  // POSTs `message`; resolves with the JSON-RPC message answering `id`
  // (null for a notification), read from a JSON body or an SSE stream.
  post(message, id) {
    const body = JSON.stringify(message);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'content-length': Buffer.byteLength(body),
    };
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    if (this.protocolVersion) headers['mcp-protocol-version'] = this.protocolVersion;
    return new Promise((resolve, reject) => {
      const request = http.request({
        host: this.url.hostname, port: this.url.port, path: this.url.pathname, method: 'POST',
        agent: this.agent, headers,
      }, (response) => {
        if (response.headers['mcp-session-id']) this.sessionId = response.headers['mcp-session-id'];
        const sse = String(response.headers['content-type'] ?? '').includes('text/event-stream');
        let text = '';
        let answered = false;
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
          if (!sse || answered) return;
          // Events end with a blank line; the answer may come before the
          // stream ends.
          let end;
          while ((end = text.indexOf('\n\n')) >= 0) {
            const event = text.slice(0, end);
            text = text.slice(end + 2);
            const data = event.split('\n').filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart()).join('\n');
            if (!data) continue;
            const parsed = JSON.parse(data);
            if (parsed.id === id && ('result' in parsed || 'error' in parsed)) {
              answered = true;
              resolve(parsed);
              return;
            }
          }
        });
        response.on('end', () => {
          if (answered) return;
          if (response.statusCode >= 400) {
            reject(new Error(`HTTP ${response.statusCode}: ${text}`));
          } else if (id === null) {
            resolve(null);
          } else if (!sse && text) {
            resolve(JSON.parse(text));
          } else {
            reject(new Error(`no answer to ${id} (HTTP ${response.statusCode})`));
          }
        });
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  async close() {
    if (this.sessionId) {
      await new Promise((resolve) => {
        const request = http.request({
          host: this.url.hostname, port: this.url.port, path: this.url.pathname, method: 'DELETE',
          agent: this.agent, headers: { 'mcp-session-id': this.sessionId },
        }, (response) => { response.resume(); response.on('end', resolve); });
        request.on('error', resolve);
        request.end();
      });
    }
    this.agent.destroy();
  }
}

// The same session as RawHttpSession, with HTTP/1.1 written and read by
// hand on one net.Socket (--client socket): a client that spends as little
// as a Node client can per call, so that its share of the machine's CPU
// hides as little as possible of what the bridges spend.
export class SocketHttpSession extends HttpSession {
  constructor(url) {
    super();
    this.url = url;
    this.sessionId = null;
    this.protocolVersion = null;
    this.nextId = 1;
    this.buffer = Buffer.alloc(0);
    // Responses not yet read whole, oldest first: { id, resolve, reject,
    // settled }.
    this.waiting = [];
    this.response = null;  // the head of the one being read
  }

  connect() {
    return new Promise((resolve, reject) => {
      this.socket = net.connect(Number(this.url.port), this.url.hostname, resolve);
      this.socket.setNoDelay(true);
      this.socket.once('error', reject);
      this.socket.on('error', (error) => this.fail(error));
      this.socket.on('close', () => this.fail(new Error('connection closed')));
      this.socket.on('data', (chunk) => {
        this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
        this.read();
      });
    });
  }

  fail(error) {
    for (const waiter of this.waiting.splice(0)) if (!waiter.settled) waiter.reject(error);
  }

  // Takes whole responses (and SSE events of a streamed one) off the buffer.
  read() {
    for (;;) {
      const waiter = this.waiting[0];
      if (!waiter) return;
      if (!this.response) {
        const end = this.buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = this.buffer.toString('latin1', 0, end).split('\r\n');
        const headers = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        this.buffer = this.buffer.subarray(end + 4);
        this.response = {
          status: Number(lines[0].split(' ')[1]), headers, body: '',
          sse: (headers['content-type'] ?? '').includes('text/event-stream'),
          chunked: (headers['transfer-encoding'] ?? '').toLowerCase() === 'chunked',
          left: Number(headers['content-length'] ?? 0),
        };
        if (headers['mcp-session-id']) this.sessionId = headers['mcp-session-id'];
      }
      const response = this.response;
      let done = false;
      if (response.chunked) {
        for (;;) {
          const line = this.buffer.indexOf('\r\n');
          if (line < 0) break;
          const size = parseInt(this.buffer.toString('latin1', 0, line), 16);
          if (this.buffer.length < line + 2 + size + 2) break;
          response.body += this.buffer.toString('utf8', line + 2, line + 2 + size);
          this.buffer = this.buffer.subarray(line + 2 + size + 2);
          if (size === 0) {
            done = true;
            break;
          }
        }
      } else {
        const take = Math.min(response.left, this.buffer.length);
        response.body += this.buffer.toString('utf8', 0, take);
        this.buffer = this.buffer.subarray(take);
        response.left -= take;
        done = response.left === 0;
      }
      if (response.sse && !waiter.settled) this.answerFromEvents(waiter, response);
      if (!done) return;
      this.response = null;
      this.waiting.shift();
      if (waiter.settled) continue;
      if (response.status >= 400) {
        waiter.reject(new Error(`HTTP ${response.status}: ${response.body}`));
      } else if (waiter.id === null) {
        waiter.resolve(null);
      } else if (!response.sse && response.body) {
        waiter.resolve(JSON.parse(response.body));
      } else {
        waiter.reject(new Error(`no answer to ${waiter.id} (HTTP ${response.status})`));
      }
      waiter.settled = true;
    }
  }

  // Events end with a blank line; the answer may come before the stream
  // ends.
  answerFromEvents(waiter, response) {
    let end;
    while ((end = response.body.indexOf('\n\n')) >= 0) {
      const event = response.body.slice(0, end);
      response.body = response.body.slice(end + 2);
      const data = event.split('\n').filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart()).join('\n');
      if (!data) continue;
      const parsed = JSON.parse(data);
      if (parsed.id === waiter.id && ('result' in parsed || 'error' in parsed)) {
        waiter.settled = true;
        waiter.resolve(parsed);
        return;
      }
    }
  }

  send(method, body, id) {
    let head = `${method} ${this.url.pathname} HTTP/1.1\r\nHost: ${this.url.host}\r\n`;
    if (body !== null) {
      head += 'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n`;
    }
    if (this.sessionId) head += `Mcp-Session-Id: ${this.sessionId}\r\n`;
    if (this.protocolVersion) head += `Mcp-Protocol-Version: ${this.protocolVersion}\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting.push({ id, resolve, reject, settled: false });
      this.socket.write(`${head}\r\n${body ?? ''}`);
    });
  }

  post(message, id) {
    return this.send('POST', JSON.stringify(message), id);
  }

  async close() {
    if (this.sessionId) await this.send('DELETE', null, null).catch(() => {});
    this.socket.destroy();
  }
}

// One server process spawned here, spoken to over its stdin and stdout in
// JSON lines: the direct baseline of --client raw and socket.
export class RawStdioSession {
  constructor(command, args) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    this.waiting = new Map();
    this.nextId = 1;
    let buffer = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let end;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (!line.trim()) continue;
        const message = JSON.parse(line);
        const waiter = this.waiting.get(message.id);
        if (waiter && ('result' in message || 'error' in message)) {
          this.waiting.delete(message.id);
          waiter(message);
        }
      }
    });
  }

  send(message) {
    return new Promise((resolve) => {
      if (message.id !== undefined) this.waiting.set(message.id, resolve);
      this.child.stdin.write(`${JSON.stringify(message)}\n`);
      if (message.id === undefined) resolve(null);
    });
  }

  async open() {
    const answer = await this.send({
      jsonrpc: '2.0', id: this.nextId++, method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
    });
    if (!answer.result) throw new Error(`initialize failed: ${JSON.stringify(answer)}`);
    await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async echo(payload) {
    const answer = await this.send({
      jsonrpc: '2.0', id: this.nextId++, method: 'tools/call',
      params: { name: 'echo', arguments: { message: payload } },
    });
    if (answer.error) throw new Error(JSON.stringify(answer.error));
    return answer.result?.content?.[0]?.text ?? '';
  }

  async close() {
    this.child.stdin.end();
    this.child.kill('SIGTERM');
  }
}
