#!/usr/bin/python3
"""A small MCP-ish HTTP server for the HTTP transport tests (stdlib only).

Listens on 127.0.0.1 with a port chosen by the kernel, prints "PORT <n>" as
its first stdout line and serves until stdin closes. While it runs, the test
can send commands on stdin, one per line; each is answered by one line:
  state    -> a JSON object with what the server saw (see State.snapshot)
  release  -> "ok"; lets the pending "slow" requests answer

Streamable HTTP, path /mcp (query parameters apply to every request, since a
transport always uses the same URL):
  POST, JSON-RPC method
    initialize      JSON answer; assigns Mcp-Session-Id (unless ?session=none)
    echo            JSON answer echoing params and the MCP headers seen
    sse_echo        SSE: a priming event (id, empty data), a progress
                    notification, then the answer
    sse_drop        SSE: priming event, progress notification, then the
                    connection breaks (no terminating chunk); a GET with
                    Last-Event-ID gets the answer
    sse_poll        like sse_drop, but the stream ends cleanly (SSE polling)
    slow            JSON answer once the test sends "release"
    fail            answers HTTP params.status with body "boom: ..." and
                    the headers of params.headers (an object)
    big             JSON answer padded to params.size bytes
    big_sse         SSE event with params.size bytes of data
    not_json        200 text/plain "this is not json"
    expire          forgets the session (later requests get 404)
    anything else   JSON answer (like echo)
    notifications and responses (no id) get 202.
  A request with an unknown Mcp-Session-Id gets 404. A request carrying a
  session id but no MCP-Protocol-Version gets 400.
  GET: the standalone stream: a server-initiated ping request, then
    keep-alive comments. ?get=405 answers 405. ?getdrop=1: the first GET
    sends "retry: 10" and the ping (id g-1), then ends; later GETs send a
    second ping (id g-2). A GET with the Last-Event-ID of a dropped POST
    stream gets that stream's remaining events.
  DELETE: records the session end (?delete=405 answers 405 instead).

Legacy HTTP+SSE, path /sse and /messages:
  GET /sse[?endpoint=relative|rooted|absolute|cross][&retry=ms][&mode=M]
    sends an `endpoint` event (default relative "messages?sessionId=..."),
    then every answer to a POST as a `message` event. ?status=N answers N.
    mode=drop: the first connection ends after its first message; later
    connections are normal. mode=die: like drop, but later connections get
    500. mode=noendpoint: never sends the endpoint.
  POST /messages?sessionId=S: 202; requests are answered on the stream
    (method fail -> HTTP 500 instead). Unknown session -> 404.
"""

import itertools
import json
import queue
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.sessions = set()
        self.deleted = []
        self.posts = []
        self.gets = []
        self.deletes = 0
        self.sse_connections = 0
        self.legacy_posts = 0
        self.counter = itertools.count(1)
        self.release = threading.Event()
        self.shutdown = threading.Event()
        self.resumable = {}  # last event id -> list of (id, data)
        self.legacy = {}  # legacy session id -> queue of messages
        self.get_connections = 0

    def snapshot(self):
        with self.lock:
            return {
                "sessions": sorted(self.sessions),
                "deleted": list(self.deleted),
                "deletes": self.deletes,
                "posts": list(self.posts),
                "gets": list(self.gets),
                "sseConnections": self.sse_connections,
                "legacyPosts": self.legacy_posts,
            }


STATE = State()


def response(msg_id, result):
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    # --- helpers -----------------------------------------------------------

    def query(self):
        parsed = urllib.parse.urlparse(self.path)
        return parsed.path, {k: v[0] for k, v in
                             urllib.parse.parse_qs(parsed.query).items()}

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send_plain(self, status, body, content_type="text/plain",
                   headers=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_json(self, body, headers=None):
        self.send_plain(200, body, "application/json", headers)

    def start_sse(self, headers=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True

    def chunk(self, text):
        data = text.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def event(self, data, event_id=None, event=None):
        text = ""
        if event:
            text += "event: %s\n" % event
        if event_id is not None:
            text += "id: %s\n" % event_id
        for line in data.split("\n"):
            text += "data: %s\n" % line
        self.chunk(text + "\n")

    def end_sse(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def keep_alive(self, stop=None):
        """Sends comments until shutdown, `stop`, or the client leaves."""
        try:
            while not STATE.shutdown.is_set():
                if stop is not None and stop():
                    return True
                self.chunk(": keep-alive\n\n")
                STATE.shutdown.wait(0.1)
        except OSError:
            return False
        return True

    # --- dispatch ----------------------------------------------------------

    def parse_json(self, raw):
        """(the message in `raw`, its method or None); None after answering
        400 if `raw` is not JSON."""
        try:
            msg = json.loads(raw)
        except ValueError:
            self.send_plain(400, "body is not JSON")
            return None
        return msg, (msg.get("method") if isinstance(msg, dict) else None)

    def route(self, handlers):
        """Calls the handler of the request's path with its query; 404 if
        `handlers` has none."""
        path, q = self.query()
        handler = handlers.get(path)
        if handler is None:
            self.send_plain(404, "no such path")
        else:
            handler(q)

    def do_POST(self):
        self.route({"/mcp": self.mcp_post, "/messages": self.legacy_post})

    def do_GET(self):
        self.route({"/mcp": self.mcp_get, "/sse": self.legacy_sse})

    def do_DELETE(self):
        path, q = self.query()
        if path != "/mcp":
            self.send_plain(404, "no such path")
            return
        sid = self.headers.get("Mcp-Session-Id")
        with STATE.lock:
            STATE.deletes += 1
        if q.get("delete") == "405":
            self.send_plain(405, "", headers={"Allow": "GET, POST"})
            return
        with STATE.lock:
            STATE.deleted.append(sid)
            STATE.sessions.discard(sid)
        self.send_plain(200, "")

    # --- Streamable HTTP ---------------------------------------------------

    def mcp_post(self, q):
        raw = self.read_body()
        sid = self.headers.get("Mcp-Session-Id")
        version = self.headers.get("MCP-Protocol-Version")
        parsed = self.parse_json(raw)
        if parsed is None:
            return
        msg, method = parsed
        with STATE.lock:
            STATE.posts.append({
                "method": method,
                "session": sid,
                "version": version,
                "accept": self.headers.get("Accept"),
                "contentType": self.headers.get("Content-Type"),
                "custom": self.headers.get("X-Custom"),
            })
        if method == "initialize":
            headers = {}
            if q.get("session") != "none":
                new_sid = "sess-%d" % next(STATE.counter)
                with STATE.lock:
                    STATE.sessions.add(new_sid)
                headers["mcp-session-id"] = new_sid  # lower case on purpose
            self.send_json(response(msg.get("id"), {
                "protocolVersion": msg.get("params", {}).get(
                    "protocolVersion", "2025-06-18"),
                "capabilities": {},
                "serverInfo": {"name": "test", "version": "1"},
            }), headers)
            return
        if sid is not None:
            with STATE.lock:
                known = sid in STATE.sessions
            if not known:
                self.send_plain(404, "unknown session")
                return
            if version is None:
                self.send_plain(400, "missing MCP-Protocol-Version")
                return
        if not isinstance(msg, dict) or "id" not in msg or method is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        msg_id = msg["id"]
        params = msg.get("params") or {}
        echo = {"method": method, "params": params, "session": sid,
                "protocolVersion": version,
                "accept": self.headers.get("Accept")}
        progress = json.dumps({"jsonrpc": "2.0",
                               "method": "notifications/progress",
                               "params": {"progressToken": msg_id,
                                          "progress": 1}})
        if method == "sse_echo":
            self.start_sse()
            stream = "s%d" % next(STATE.counter)
            self.event("", "%s-0" % stream)
            self.event(progress, "%s-1" % stream)
            self.event(response(msg_id, echo), "%s-2" % stream)
            self.end_sse()
        elif method in ("sse_drop", "sse_poll"):
            self.start_sse()
            stream = "s%d" % next(STATE.counter)
            with STATE.lock:
                STATE.resumable["%s-1" % stream] = [
                    ("%s-2" % stream, response(msg_id, echo))]
            self.chunk("retry: 10\n\n")
            self.event("", "%s-0" % stream)
            self.event(progress, "%s-1" % stream)
            if method == "sse_poll":
                self.end_sse()
            # sse_drop: close without the terminating chunk.
        elif method == "slow":
            STATE.release.wait(30)
            self.send_json(response(msg_id, echo))
        elif method == "fail":
            self.send_plain(int(params.get("status", 500)),
                            "boom: internal failure",
                            headers=params.get("headers"))
        elif method == "big":
            pad = "x" * int(params.get("size", 1000))
            self.send_json(response(msg_id, {"pad": pad}))
        elif method == "big_sse":
            self.start_sse()
            pad = "x" * int(params.get("size", 1000))
            self.event(response(msg_id, {"pad": pad}), "b-1")
            self.end_sse()
        elif method == "not_json":
            self.send_plain(200, "this is not json")
        elif method == "expire":
            with STATE.lock:
                STATE.sessions.discard(sid)
            self.send_json(response(msg_id, {}))
        else:
            self.send_json(response(msg_id, echo))

    def mcp_get(self, q):
        sid = self.headers.get("Mcp-Session-Id")
        last = self.headers.get("Last-Event-ID")
        with STATE.lock:
            STATE.gets.append({
                "session": sid,
                "version": self.headers.get("MCP-Protocol-Version"),
                "accept": self.headers.get("Accept"),
                "lastEventId": last,
            })
            replay = STATE.resumable.pop(last, None) if last else None
        if replay is not None:
            self.start_sse()
            for event_id, data in replay:
                self.event(data, event_id)
            self.end_sse()
            return
        if q.get("get") == "405":
            self.send_plain(405, "", headers={"Allow": "POST, DELETE"})
            return
        if sid is None:
            self.send_plain(400, "missing Mcp-Session-Id")
            return
        with STATE.lock:
            known = sid in STATE.sessions
            STATE.get_connections += 1
            first = STATE.get_connections == 1
        if not known:
            self.send_plain(404, "unknown session")
            return
        self.start_sse()
        try:
            if q.get("getdrop") == "1" and first:
                self.chunk("retry: 10\n\n")
                self.event(json.dumps({"jsonrpc": "2.0", "id": "srv-1",
                                       "method": "ping"}), "g-1")
                self.end_sse()
                return
            if q.get("getdrop") == "1":
                self.event(json.dumps({"jsonrpc": "2.0", "id": "srv-2",
                                       "method": "ping"}), "g-2")
            else:
                self.event(json.dumps({"jsonrpc": "2.0", "id": "srv-1",
                                       "method": "ping"}), "g-1")
            if self.keep_alive():
                self.end_sse()
        except OSError:
            pass

    # --- legacy HTTP+SSE ---------------------------------------------------

    def legacy_sse(self, q):
        with STATE.lock:
            STATE.sse_connections += 1
            connection = STATE.sse_connections
        if "status" in q:
            self.send_plain(int(q["status"]), "refused by test")
            return
        mode = q.get("mode", "")
        if mode == "die" and connection > 1:
            self.send_plain(500, "gone for good")
            return
        sid = "L%d" % next(STATE.counter)
        messages = queue.Queue()
        with STATE.lock:
            STATE.legacy[sid] = messages
        host, port = self.server.server_address[:2]
        kind = q.get("endpoint", "relative")
        endpoint = {
            "relative": "messages?sessionId=%s" % sid,
            "rooted": "/messages?sessionId=%s" % sid,
            "absolute": "http://%s:%d/messages?sessionId=%s" % (host, port,
                                                                sid),
            "cross": "http://example.invalid:%d/messages?sessionId=%s" % (
                port, sid),
        }[kind]
        self.start_sse()
        drop_after = 1 if mode in ("drop", "die") and connection == 1 else 0
        sent = 0
        try:
            if "retry" in q:
                self.chunk("retry: %s\n\n" % q["retry"])
            if mode != "noendpoint":
                self.event(endpoint, event="endpoint")
            while not STATE.shutdown.is_set():
                try:
                    data = messages.get(timeout=0.1)
                except queue.Empty:
                    self.chunk(": keep-alive\n\n")
                    continue
                # Alternate between typed and untyped message events.
                self.event(data, event="message" if sent % 2 == 0 else None)
                sent += 1
                if drop_after and sent >= drop_after:
                    break
            self.end_sse()
        except OSError:
            pass
        finally:
            with STATE.lock:
                STATE.legacy.pop(sid, None)

    def legacy_post(self, q):
        raw = self.read_body()
        sid = q.get("sessionId")
        with STATE.lock:
            STATE.legacy_posts += 1
            messages = STATE.legacy.get(sid)
        if messages is None:
            self.send_plain(404, "unknown session")
            return
        parsed = self.parse_json(raw)
        if parsed is None:
            return
        msg, method = parsed
        if method == "fail":
            self.send_plain(500, "boom: legacy failure")
            return
        self.send_plain(202, "Accepted")
        if isinstance(msg, dict) and "id" in msg and method is not None:
            messages.put(response(msg["id"], {
                "method": method, "params": msg.get("params") or {},
                "session": sid,
                "contentType": self.headers.get("Content-Type")}))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


def main():
    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,),
                              daemon=True)
    thread.start()
    print("PORT %d" % server.server_address[1], flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "state":
            print(json.dumps(STATE.snapshot()), flush=True)
        elif command == "release":
            STATE.release.set()
            print("ok", flush=True)
        else:
            print("unknown command", flush=True)
    STATE.shutdown.set()
    server.shutdown()
    server.server_close()


if __name__ == "__main__":
    main()
