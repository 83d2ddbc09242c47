#!/usr/bin/python3
"""End-to-end OAuth checks of a real inspectord and inspectorctl against a
protected MCP server and an authorization server of this script's own
(threads of this process, on 127.0.0.1, ports chosen by the system).

  INSPECTORD=... INSPECTORCTL=... oauth_e2e_test.py --case CASE

Cases (one CTest case each):

  watch-events      `inspectorctl auth login` while `inspectorctl watch --kind
                    oauth` and the REST stream (GET /api/events) run: both
                    show the flow's transitions through the six states and
                    its HTTP exchanges, with every secret masked.
  no-secret-leak    after a login, tool calls and a refresh, no token, code,
                    verifier or client secret appears in the daemon's log,
                    its recorded messages and logs (history), a session
                    export, `auth status`, `auth login`'s output or on Watch.
  other-origin      the protected server answers a request with a redirect
                    to another origin: the daemon does not follow it, and
                    the other origin never sees the token (nor any request).

Every secret the authorization server hands out starts with SECRET-, so a
leak is found by looking for that string. Every wait has a deadline; the
daemon and the watchers are stopped at the end, however it ends.
"""
import argparse
import base64
import hashlib
import http.client
import http.server
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

SECRET = "SECRET-"
DEADLINE_S = 30


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


class Handler(http.server.BaseHTTPRequestHandler):
    """Dispatches to the World's routes; quiet."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _serve(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        world = self.server.world
        world.record(self.server.role, method, self.path, dict(self.headers), body)
        status, headers, payload = world.route(self.server.role, method, self.path,
                                               self.headers, body)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if status in (202, 204, 302, 307) and not payload:
            data = b""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if data or status not in (204,):
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    def do_GET(self):
        self._serve("GET")

    def do_POST(self):
        self._serve("POST")

    def do_DELETE(self):
        self._serve("DELETE")


class World:
    """The protected MCP server, its authorization server and a decoy on a
    third origin."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []  # (role, method, path, headers, body)
        self.tokens = set()
        self.refresh_tokens = set()
        self.codes = {}  # code -> code_challenge
        self.counter = 0
        self.redirect_to_decoy = False
        self.servers = {}
        for role in ("resource", "as", "decoy"):
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            server.world = self
            server.role = role
            server.daemon_threads = True
            self.servers[role] = server
            threading.Thread(target=server.serve_forever, daemon=True).start()

    def url(self, role):
        return f"http://127.0.0.1:{self.servers[role].server_address[1]}"

    def stop(self):
        for server in self.servers.values():
            server.shutdown()
            server.server_close()

    def record(self, role, method, path, headers, body):
        with self.lock:
            self.requests.append((role, method, path, headers, body))

    def seen(self, role):
        with self.lock:
            return [r for r in self.requests if r[0] == role]

    def secret(self, kind):
        with self.lock:
            self.counter += 1
            return f"{SECRET}{kind}-{self.counter}-{os.urandom(6).hex()}"

    def route(self, role, method, path, headers, body):
        if role == "decoy":
            return 200, {"Content-Type": "application/json"}, {"decoy": True}
        if role == "as":
            return self.route_as(method, path, headers, body)
        return self.route_resource(method, path, headers, body)

    # --- the authorization server ----------------------------------------
    def route_as(self, method, path, headers, body):
        issuer = self.url("as")
        parsed = urllib.parse.urlsplit(path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        json_type = {"Content-Type": "application/json"}
        if parsed.path == "/.well-known/oauth-authorization-server":
            return 200, json_type, {
                "issuer": issuer,
                "authorization_endpoint": f"{issuer}/authorize",
                "token_endpoint": f"{issuer}/token",
                "registration_endpoint": f"{issuer}/register",
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_post"],
                "authorization_response_iss_parameter_supported": True,
                "scopes_supported": ["mcp"],
            }
        if parsed.path == "/register" and method == "POST":
            request = json.loads(body or b"{}")
            self.registration = request
            return 201, json_type, {
                "client_id": "e2e-client",
                "client_secret": self.secret("client-secret"),
                "token_endpoint_auth_method": "client_secret_post",
                "redirect_uris": request.get("redirect_uris", []),
            }
        if parsed.path == "/authorize":
            code = self.secret("code")
            with self.lock:
                self.codes[code] = query.get("code_challenge", "")
            location = query["redirect_uri"] + "?" + urllib.parse.urlencode(
                {"code": code, "state": query.get("state", ""), "iss": issuer})
            return 302, {"Location": location}, b""
        if parsed.path == "/token" and method == "POST":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            if form.get("grant_type") == "authorization_code":
                with self.lock:
                    challenge = self.codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "").encode()
                expected = base64.urlsafe_b64encode(
                    hashlib.sha256(verifier).digest()).rstrip(b"=").decode()
                if challenge is None or challenge != expected:
                    return 400, json_type, {"error": "invalid_grant"}
            elif form.get("grant_type") == "refresh_token":
                with self.lock:
                    if form.get("refresh_token") not in self.refresh_tokens:
                        return 400, json_type, {"error": "invalid_grant"}
            else:
                return 400, json_type, {"error": "unsupported_grant_type"}
            token, refresh = self.secret("access-token"), self.secret("refresh-token")
            with self.lock:
                self.tokens.add(token)
                self.refresh_tokens.add(refresh)
            return 200, json_type, {"access_token": token, "refresh_token": refresh,
                                    "token_type": "Bearer", "expires_in": 3600,
                                    "scope": "mcp"}
        return 404, json_type, {"error": "not_found"}

    # --- the protected MCP server (2025-06-18 style, JSON answers) -------
    def route_resource(self, method, path, headers, body):
        json_type = {"Content-Type": "application/json"}
        prm = f"{self.url('resource')}/.well-known/oauth-protected-resource/mcp"
        if path == "/.well-known/oauth-protected-resource/mcp":
            return 200, json_type, {"resource": f"{self.url('resource')}/mcp",
                                    "authorization_servers": [self.url("as")],
                                    "scopes_supported": ["mcp"]}
        if not path.startswith("/mcp"):
            return 404, json_type, {"error": "not_found"}
        if self.redirect_to_decoy:
            return 307, {"Location": f"{self.url('decoy')}/mcp"}, b""
        authorization = headers.get("Authorization", "")
        with self.lock:
            valid = authorization.startswith("Bearer ") and authorization[7:] in self.tokens
        if not valid:
            return 401, {"Content-Type": "application/json",
                         "WWW-Authenticate": f'Bearer resource_metadata="{prm}", scope="mcp"'}, \
                {"error": "invalid_token"}
        if method == "GET":
            return 405, json_type, {"error": "no stream"}
        if method == "DELETE":
            return 200, json_type, {}
        message = json.loads(body or b"{}")
        if "id" not in message:
            return 202, {}, b""
        name = message.get("method")
        params = message.get("params") or {}
        if name == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-e2e", "version": "1"}}
        elif name == "tools/list":
            result = {"tools": [{"name": "echo", "description": "says ok",
                                 "inputSchema": {"type": "object"}}]}
        elif name == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
        elif name == "ping":
            result = {}
        else:
            return 200, json_type, {"jsonrpc": "2.0", "id": message["id"],
                                    "error": {"code": -32601, "message": "not found"}}
        return 200, json_type, {"jsonrpc": "2.0", "id": message["id"], "result": result}


class Daemon:
    def __init__(self, work, http):
        self.work = work
        self.log_path = os.path.join(work, "inspectord.log")
        self.db = os.path.join(work, "inspector.db")
        args = [os.environ["INSPECTORD"], "--listen", "127.0.0.1:0", "--db", self.db,
                "--token-file", os.path.join(work, "token"),
                "--ready-file", os.path.join(work, "address"), "--log-level", "debug"]
        if http:
            args += ["--http", "127.0.0.1:0"]
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + DEADLINE_S
        ready = os.path.join(work, "address")
        while not (os.path.exists(ready) and os.path.getsize(ready) > 0):
            if self.proc.poll() is not None:
                fail(f"inspectord exited {self.proc.returncode}:\n{self.read_log()}")
            if time.monotonic() > deadline:
                fail("inspectord did not serve in time")
            time.sleep(0.05)
        with open(ready) as f:
            self.address = f.readline().strip()
        with open(os.path.join(work, "token")) as f:
            self.token = f.read().strip()
        self.http = None
        if http:
            while self.http is None:
                match = re.search(r"REST on (\S+)", self.read_log())
                if match:
                    self.http = match.group(1)
                elif time.monotonic() > deadline:
                    fail("inspectord did not log its REST address")
                else:
                    time.sleep(0.05)
        self.env = dict(os.environ, INSPECTOR_ADDR=self.address,
                        INSPECTOR_TOKEN_FILE=os.path.join(work, "token"), NO_COLOR="1")
        self.env.pop("INSPECTOR_TOKEN", None)

    def read_log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def ctl(self, *args, check=True):
        result = subprocess.run([os.environ["INSPECTORCTL"], "--no-color", "--timeout", "20",
                                 *args], env=self.env, capture_output=True, text=True,
                                timeout=60)
        if check and result.returncode != 0:
            fail(f"inspectorctl {' '.join(args)} exited {result.returncode}:\n"
                 f"{result.stdout}{result.stderr}\n---- daemon log ----\n{self.read_log()[-4000:]}")
        return result

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Watcher:
    """`inspectorctl watch --kind oauth --kind config --json` in the
    background, subscribed before start() returns."""

    def __init__(self, daemon, server_name):
        self.path = os.path.join(daemon.work, f"watch-{id(self)}.ndjson")
        self.out = open(self.path, "wb")
        self.proc = subprocess.Popen(
            [os.environ["INSPECTORCTL"], "--no-color", "watch", "--kind", "oauth",
             "--kind", "config", "--json"], env=daemon.env, stdout=self.out,
            stderr=subprocess.STDOUT)
        # A configuration change shows once the watch is subscribed.
        deadline = time.monotonic() + DEADLINE_S
        n = 0
        while '"config"' not in self.text():
            if self.proc.poll() is not None:
                fail(f"inspectorctl watch exited: {self.text()}")
            if time.monotonic() > deadline:
                fail("inspectorctl watch showed no configuration event in time")
            n += 1
            daemon.ctl("servers", "update", server_name, "--request-timeout", str(60000 + n))
            time.sleep(0.1)

    def text(self):
        with open(self.path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def events(self):
        return [json.loads(line) for line in self.text().splitlines() if line.strip()]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


class RestWatcher:
    """GET /api/events?kinds=oauth as Server-Sent Events, read on a thread
    into a list; open (headers received) before the constructor returns."""

    def __init__(self, daemon):
        self.lines = []
        self.error = None
        host, port = daemon.http.rsplit(":", 1)
        self.connection = http.client.HTTPConnection(host, int(port), timeout=DEADLINE_S * 2)
        self.connection.request("GET", "/api/events?kinds=oauth",
                                headers={"X-Session-Token": daemon.token,
                                         "Accept": "text/event-stream"})
        self.response = self.connection.getresponse()
        if self.response.status != 200:
            fail(f"GET /api/events answered {self.response.status}: {self.response.read()!r}")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        try:
            for raw in self.response:
                self.lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except Exception as e:  # the stream ends when the test hangs up
            self.error = e

    def events(self):
        out = []
        for line in list(self.lines):
            if line.startswith("data:"):
                try:
                    out.append(json.loads(line[5:].strip()))
                except ValueError:
                    pass
        return out

    def stop(self):
        # Hang up: the reading thread sees the end of the stream at once.
        try:
            self.connection.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.thread.join(timeout=DEADLINE_S)
        self.connection.close()


def oauth_of(event):
    """The OAuthFlowEvent of a proto3-JSON Event (or of an SSE wrapper)."""
    if "result" in event and isinstance(event["result"], dict):
        event = event["result"]
    return event.get("oauth")


def transitions(events):
    out = []
    for event in events:
        oauth = oauth_of(event)
        if oauth and "transition" in oauth:
            t = oauth["transition"]
            out.append((t.get("from", "OAUTH_FLOW_STATE_UNSPECIFIED"), t.get("to"),
                        t.get("error", "")))
    return out


def exchanges(events):
    return [oauth_of(e)["exchange"] for e in events
            if oauth_of(e) and "exchange" in oauth_of(e)]


def wait_for(predicate, what):
    deadline = time.monotonic() + DEADLINE_S
    while not predicate():
        if time.monotonic() > deadline:
            fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def add_server(daemon, world, name="protected"):
    daemon.ctl("servers", "add", name, "--url", f"{world.url('resource')}/mcp",
               "--transport", "streamableHttp", "--protocol", "legacy")
    return name


def login(daemon, name):
    return daemon.ctl("auth", "login", name, "--headless")


def assert_no_secret(where, text):
    if SECRET in text:
        at = text.index(SECRET)
        fail(f"a secret appears in {where}: ...{text[max(0, at - 80):at + 40]}...")


FLOW = ["METADATA_DISCOVERY", "CLIENT_REGISTRATION", "AUTHORIZATION_REDIRECT",
        "AUTHORIZATION_CODE", "TOKEN_REQUEST", "COMPLETE"]


def case_watch_events(work, world):
    daemon = Daemon(work, http=True)
    watchers = []
    try:
        name = add_server(daemon, world)
        cli = Watcher(daemon, name)
        watchers.append(cli)
        rest = RestWatcher(daemon)
        watchers.append(rest)
        login(daemon, name)
        # Both streams show every transition of the flow, in order.
        expected = [("OAUTH_FLOW_STATE_UNSPECIFIED", "METADATA_DISCOVERY", "")] + \
            [(a, b, "") for a, b in zip(FLOW, FLOW[1:])]
        for label, watcher in (("inspectorctl watch", cli), ("GET /api/events", rest)):
            wait_for(lambda: transitions(watcher.events())[-1:] == expected[-1:],
                     f"{label} to show the flow completing")
            seen = transitions(watcher.events())
            if seen != expected:
                fail(f"{label} showed the transitions {seen}, expected {expected}")
            ex = exchanges(watcher.events())
            posts = [(e.get("method"), urllib.parse.urlsplit(e.get("url", "")).path,
                      e.get("status")) for e in ex]
            for wanted in (("POST", "/register", 201), ("POST", "/token", 200)):
                if wanted not in posts:
                    fail(f"{label} did not show the exchange {wanted}; it showed {posts}")
            token_exchange = next(e for e in ex if e.get("url", "").endswith("/token"))
            body = token_exchange.get("responseBody", "")
            if "access_token" not in body or "***" not in body:
                fail(f"{label}: the token answer should be shown masked, got {body!r}")
            for event in watcher.events():
                oauth = oauth_of(event)
                if oauth and oauth.get("serverName", "") not in ("", name):
                    fail(f"{label}: an event names server {oauth.get('serverName')!r}")
            assert_no_secret(label, json.dumps(watcher.events()))
        # The stream's kinds filter: only OAuth events on the REST stream.
        for event in rest.events():
            if oauth_of(event) is None:
                fail(f"GET /api/events?kinds=oauth sent another event: {event}")
        # A failing step is shown with its error and stays at its state.
        daemon.ctl("auth", "logout", name, "--all")
        original = world.route_as

        def refusing(method, path, headers, body):
            if path.startswith("/register"):
                return 400, {"Content-Type": "application/json"}, \
                    {"error": "invalid_client_metadata", "error_description": "no thanks"}
            return original(method, path, headers, body)
        world.route_as = refusing
        try:
            result = daemon.ctl("auth", "login", name, "--headless", check=False)
        finally:
            world.route_as = original
        if result.returncode == 0:
            fail("auth login succeeded although the registration was refused")
        wait_for(lambda: any(t[0] == "CLIENT_REGISTRATION" and t[2]
                             for t in transitions(cli.events())),
                 "inspectorctl watch to show the failed registration")
        failed = [t for t in transitions(cli.events()) if t[2]]
        if failed[-1][:2] != ("CLIENT_REGISTRATION", "CLIENT_REGISTRATION") or \
                "invalid_client_metadata" not in failed[-1][2]:
            fail(f"the failed step was shown as {failed[-1]}")
        print(f"OK: both streams showed {len(expected)} transitions and "
              f"{len(exchanges(cli.events()))} exchanges, secrets masked", flush=True)
    finally:
        for watcher in watchers:
            watcher.stop()
        daemon.stop()


def case_no_secret_leak(work, world):
    daemon = Daemon(work, http=False)
    watcher = None
    try:
        name = add_server(daemon, world)
        watcher = Watcher(daemon, name)
        outputs = [login(daemon, name)]
        outputs.append(daemon.ctl("connect", name))
        outputs.append(daemon.ctl("tools", name, "--all"))
        outputs.append(daemon.ctl("call", name, "echo"))
        outputs.append(daemon.ctl("auth", "refresh", name))
        outputs.append(daemon.ctl("call", name, "echo"))
        outputs.append(daemon.ctl("-o", "json", "auth", "status", name))
        outputs.append(daemon.ctl("-o", "json", "history", "--server", name))
        # The token was used: the resource saw it on its tool calls.
        used = [r for r in world.seen("resource")
                if r[3].get("Authorization", "").startswith(f"Bearer {SECRET}")]
        if not used:
            fail("the protected server never received a token: the test would prove nothing")
        wait_for(lambda: any(t[2] == "" and t[1] == "COMPLETE"
                             for t in transitions(watcher.events())),
                 "Watch to show the completed flow")
        watcher.stop()
        sessions = json.loads(daemon.ctl("-o", "json", "sessions", "list").stdout or "{}")
        items = sessions.get("sessions", []) if isinstance(sessions, dict) else sessions
        if not items:
            fail("no recorded session to export")
        for session in items:
            outputs.append(daemon.ctl("sessions", "export", session["id"]))
        for result in outputs:
            assert_no_secret(f"the output of `inspectorctl {' '.join(result.args[4:])}`",
                             result.stdout + result.stderr)
        assert_no_secret("Watch", watcher.text())
        if '"oauth"' not in watcher.text():
            fail("Watch showed no OAuth event")
        daemon.stop()
        assert_no_secret("inspectord's log", daemon.read_log())
        db = sqlite3.connect(daemon.db)
        for table, column in (("messages", "raw"), ("logs", "message"),
                              ("logs", "data_json")):
            for (value,) in db.execute(f"SELECT {column} FROM {table}"):
                assert_no_secret(f"{table}.{column}", value or "")
        count = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        if count == 0:
            fail("no message was recorded: the history check would prove nothing")
        print(f"OK: no secret in the log, {count} recorded messages, the logs, "
              "the session export, the CLI's output or Watch", flush=True)
    finally:
        if watcher is not None:
            watcher.stop()
        daemon.stop()


def case_other_origin(work, world):
    daemon = Daemon(work, http=False)
    try:
        name = add_server(daemon, world)
        login(daemon, name)
        daemon.ctl("connect", name)
        daemon.ctl("tools", name, "--all")
        before = [r for r in world.seen("resource")
                  if r[3].get("Authorization", "").startswith("Bearer ")]
        if not before:
            fail("the protected server never received the token")
        world.redirect_to_decoy = True
        result = daemon.ctl("call", name, "echo", check=False)
        redirected = [r for r in world.seen("resource")
                      if r[1] == "POST" and r[0] == "resource"]
        if result.returncode == 0:
            fail(f"the call succeeded through a redirect to another origin: {result.stdout}")
        if not redirected:
            fail("the protected server was not asked again")
        decoy = world.seen("decoy")
        if decoy:
            fail("the other origin received requests: " +
                 "; ".join(f"{r[1]} {r[2]} Authorization={r[3].get('Authorization', '')!r}"
                           for r in decoy))
        print("OK: the redirect to another origin was not followed; it saw no token",
              flush=True)
    finally:
        daemon.stop()


CASES = {"watch-events": case_watch_events, "no-secret-leak": case_no_secret_leak,
         "other-origin": case_other_origin}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    for variable in ("INSPECTORD", "INSPECTORCTL"):
        if not os.access(os.environ.get(variable, ""), os.X_OK):
            fail(f"${variable} must name the built binary; CTest sets it")
    world = World()
    try:
        with tempfile.TemporaryDirectory(prefix="oauth-e2e-") as work:
            CASES[args.case](work, world)
    finally:
        world.stop()


if __name__ == "__main__":
    main()
