#!/usr/bin/python3
"""Smoke test of the MCP peers the end-to-end tests talk to.

Starts our fixture server (tools/fixture-server/server.mjs) and the reference
@modelcontextprotocol/server-everything (installed by tools/npm/install.sh)
in each of their three transports (stdio, Streamable HTTP, legacy HTTP+SSE)
and runs a short MCP session against each, with nothing but the Python
standard library: over pipes, over HTTP POST with JSON or SSE replies, and
over a GET /sse stream. A peer that fails to start, answers wrongly or not
at all fails the test.

HTTP peers listen on 127.0.0.1 only, on a free port: the fixture server
announces `{"listening": PORT}` on stderr; server-everything gets a free port
in $PORT and is polled with connect() until it accepts. Every wait is
bounded by a deadline, and every process is stopped at the end.
"""
import argparse
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import unittest
import urllib.parse
import urllib.request

ARGS = None
PROTOCOL_VERSION = "2025-11-25"
TIMEOUT = 30  # seconds any single step may take before the test fails

CLIENT_INFO = {"name": "peers-smoke-test", "version": "1.0.0"}


def initialize_params():
    return {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}


def request(id_, method, params=None):
    message = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method):
    return {"jsonrpc": "2.0", "method": method}


def free_port():
    """A port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fixture_command(mode, *flags):
    return ["node", ARGS.fixture_server, mode, *flags]


def everything_command(mode):
    # The package's bin (mcp-server-everything) is dist/index.js; its first
    # argument picks the transport. The preload keeps its listener on loopback.
    package_dir = os.path.join(ARGS.node_modules, "@modelcontextprotocol", "server-everything")
    with open(os.path.join(package_dir, "package.json"), encoding="utf-8") as f:
        entry = json.load(f)["bin"]["mcp-server-everything"]
    preload = os.path.join(os.path.dirname(ARGS.node_modules), "loopback-only.mjs")
    return ["node", "--import", preload, os.path.join(package_dir, entry), mode]


class Peer:
    """A peer process. Its stdout and stderr are read by threads into
    queues of lines, so the pipes never fill up and a test can wait for a
    line with a deadline."""

    def __init__(self, command, env=None, stops_on_stdin_close=True):
        self.stops_on_stdin_close = stops_on_stdin_close
        full_env = dict(os.environ)
        full_env["FIXTURE_NODE_MODULES"] = ARGS.node_modules
        full_env.update(env or {})
        self.command = command
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=full_env, start_new_session=True)
        self.stdout_lines = queue.Queue()
        self.stderr_lines = queue.Queue()
        self.transcript = []  # everything the peer printed, for failure messages
        self._threads = [
            threading.Thread(target=self._pump, args=(self.proc.stdout, self.stdout_lines), daemon=True),
            threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr_lines), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _pump(self, stream, lines):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            self.transcript.append(line)
            lines.put(line)
        lines.put(None)  # end of stream

    def next_line(self, lines, deadline):
        """The next line of `lines`, or None at end of stream; fails at the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out waiting for output of {self.command}\n{self.describe()}")
        try:
            return lines.get(timeout=remaining)
        except queue.Empty:
            raise AssertionError(
                f"timed out waiting for output of {self.command}\n{self.describe()}") from None

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def describe(self):
        return "peer output:\n" + "".join(self.transcript[-40:])

    def stop(self):
        """Stops the process and returns its exit code: closes its stdin and,
        for a peer that does not exit on that, sends SIGTERM; SIGKILL if it
        is still running after a grace period."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if self.proc.poll() is None and not self.stops_on_stdin_close:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode


# ---------------------------------------------------------------------------
# stdio

class StdioSession:
    """JSON-RPC over the peer's stdin/stdout, one message per line."""

    def __init__(self, peer):
        self.peer = peer
        self.notifications = []

    def call(self, id_, method, params=None):
        self.peer.send(request(id_, method, params))
        return self.wait_response(id_)

    def wait_response(self, id_):
        deadline = time.monotonic() + TIMEOUT
        while True:
            line = self.peer.next_line(self.peer.stdout_lines, deadline)
            if line is None:
                raise AssertionError(f"stdout closed before response {id_}\n{self.peer.describe()}")
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                raise AssertionError(f"non-JSON line on stdout: {line!r}\n{self.peer.describe()}") from None
            if message.get("id") == id_ and ("result" in message or "error" in message):
                return message
            if "method" in message and "id" not in message:
                self.notifications.append(message)
                continue
            raise AssertionError(f"unexpected message while waiting for {id_}: {message}")

    def notify(self, method):
        self.peer.send(notification(method))


# ---------------------------------------------------------------------------
# Server-Sent Events

def sse_events(response):
    """Yields (event, data, id) for each event of an SSE response."""
    event, data, event_id = "message", [], None
    for raw in iter(response.readline, b""):
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            # As in the SSE spec, an event with empty data is not dispatched
            # (the Streamable HTTP priming event "id: N\ndata: \n\n" is one).
            if "\n".join(data):
                yield event, "\n".join(data), event_id
            event, data, event_id = "message", [], None
        elif line.startswith(":"):
            continue  # comment (keep-alive)
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                event_id = value


# ---------------------------------------------------------------------------
# Streamable HTTP

class StreamableHttpSession:
    def __init__(self, url):
        self.url = url
        self.session_id = None
        self.notifications = []

    def post(self, message):
        """POSTs one message; returns (status, headers, response messages)."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
            headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
        req = urllib.request.Request(self.url, data=json.dumps(message).encode(), headers=headers,
                                     method="POST")
        with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
            content_type = response.headers.get("Content-Type", "")
            messages = []
            if response.status == 202:
                pass
            elif content_type.startswith("application/json"):
                body = json.loads(response.read())
                messages = body if isinstance(body, list) else [body]
            elif content_type.startswith("text/event-stream"):
                for event, data, _ in sse_events(response):
                    if event != "message":
                        continue
                    messages.append(json.loads(data))
                    if "id" in messages[-1] and "method" not in messages[-1]:
                        break  # the response: the stream may stay open for more
            else:
                raise AssertionError(f"unexpected Content-Type {content_type!r}")
            return response.status, response.headers, messages

    def call(self, id_, method, params=None):
        status, headers, messages = self.post(request(id_, method, params))
        if status != 200:
            raise AssertionError(f"{method}: HTTP {status}")
        if self.session_id is None:
            self.session_id = headers.get("Mcp-Session-Id")
        responses = [m for m in messages if m.get("id") == id_ and "method" not in m]
        self.notifications += [m for m in messages if "method" in m and "id" not in m]
        if len(responses) != 1:
            raise AssertionError(f"{method}: expected one response with id {id_}, got {messages}")
        return responses[0]

    def notify(self, method):
        status, _, _ = self.post(notification(method))
        if status != 202:
            raise AssertionError(f"{method}: HTTP {status}, want 202")

    def delete(self):
        req = urllib.request.Request(self.url, method="DELETE", headers={
            "Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": PROTOCOL_VERSION})
        with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
            return response.status


# ---------------------------------------------------------------------------
# Legacy HTTP+SSE

class SseSession:
    """GET /sse carries the replies; messages are POSTed to the URL named by
    the stream's first event, `endpoint`."""

    def __init__(self, base_url):
        req = urllib.request.Request(base_url + "/sse", headers={"Accept": "text/event-stream"})
        self.stream = urllib.request.urlopen(req, timeout=TIMEOUT)
        if not self.stream.headers.get("Content-Type", "").startswith("text/event-stream"):
            raise AssertionError(f"GET /sse: Content-Type {self.stream.headers.get('Content-Type')}")
        self.events = sse_events(self.stream)
        event, data, _ = next(self.events)
        if event != "endpoint":
            raise AssertionError(f"first SSE event is {event!r}, want 'endpoint'")
        self.endpoint = urllib.parse.urljoin(base_url + "/sse", data)
        self.notifications = []

    def post(self, message):
        req = urllib.request.Request(self.endpoint, data=json.dumps(message).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=TIMEOUT) as response:
            if response.status != 202:
                raise AssertionError(f"POST {self.endpoint}: HTTP {response.status}, want 202")

    def call(self, id_, method, params=None):
        self.post(request(id_, method, params))
        for event, data, _ in self.events:
            if event != "message":
                continue
            message = json.loads(data)
            if message.get("id") == id_ and "method" not in message:
                return message
            if "method" in message and "id" not in message:
                self.notifications.append(message)
                continue
            raise AssertionError(f"unexpected message while waiting for {id_}: {message}")
        raise AssertionError(f"SSE stream ended before response {id_}")

    def notify(self, method):
        self.post(notification(method))

    def close(self):
        self.stream.close()


# ---------------------------------------------------------------------------
# Starting HTTP peers

def wait_for_announced_port(peer):
    """Reads the fixture server's stderr up to its `{"listening": PORT}` line."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        line = peer.next_line(peer.stderr_lines, deadline)
        if line is None:
            raise AssertionError(f"exited before listening (code {peer.proc.wait()})\n{peer.describe()}")
        try:
            announcement = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(announcement, dict) and isinstance(announcement.get("listening"), int):
            return announcement["listening"]


def wait_until_accepting(peer, port, attempts=300):
    """Connects to 127.0.0.1:port until it accepts (attempts are 50 ms apart)."""
    for _ in range(attempts):
        if peer.proc.poll() is not None:
            raise AssertionError(f"exited with code {peer.proc.returncode}\n{peer.describe()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"127.0.0.1:{port} never accepted a connection\n{peer.describe()}")


class PeerTestCase(unittest.TestCase):
    def start(self, command, env=None, stops_on_stdin_close=True):
        peer = Peer(command, env, stops_on_stdin_close)
        self.addCleanup(peer.stop)
        return peer

    def start_fixture_http(self, mode, *flags):
        peer = self.start(fixture_command(mode, *flags))
        return peer, f"http://127.0.0.1:{wait_for_announced_port(peer)}"

    def start_everything_http(self, mode):
        port = free_port()
        peer = self.start(everything_command(mode), env={"PORT": str(port)},
                          stops_on_stdin_close=False)
        wait_until_accepting(peer, port)
        return peer, f"http://127.0.0.1:{port}"

    def handshake(self, session):
        init = session.call(1, "initialize", initialize_params())
        self.assertIn("result", init, init)
        self.assertEqual(init["result"]["protocolVersion"], PROTOCOL_VERSION)
        self.assertIn("capabilities", init["result"])
        session.notify("notifications/initialized")
        return init["result"]

    def assert_text(self, response, expected):
        self.assertIn("result", response, response)
        self.assertFalse(response["result"].get("isError", False), response)
        self.assertEqual(response["result"]["content"][0], {"type": "text", "text": expected})


# ---------------------------------------------------------------------------
# The fixture server

class FixtureServerTest(PeerTestCase):
    def check_full_session(self, session):
        result = self.handshake(session)
        self.assertEqual(result["serverInfo"]["name"], "inspectord-fixture")
        for capability in ("tools", "resources", "prompts", "logging", "completions"):
            self.assertIn(capability, result["capabilities"])

        tools = session.call(2, "tools/list")["result"]
        names = [tool["name"] for tool in tools["tools"]]
        for name in ("echo", "add", "slow", "fail", "throw", "large", "sample", "elicit", "roots",
                     "notify_tools_changed", "log", "bump"):
            self.assertIn(name, names)
        self.assertNotIn("nextCursor", tools)

        self.assert_text(session.call(3, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
                         "hi")
        hello = session.call(4, "resources/read", {"uri": "fixture://static/hello"})
        self.assertEqual(hello["result"]["contents"][0]["text"], "hello")
        greeting = session.call(5, "prompts/get",
                                {"name": "greeting", "arguments": {"name": "Alice"}})
        self.assertEqual(greeting["result"]["messages"][0]["content"]["text"], "Please greet Alice.")

        added = session.call(6, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
        self.assertEqual(added["result"]["structuredContent"], {"sum": 42})
        self.assertTrue(session.call(7, "tools/call", {"name": "fail"})["result"]["isError"])
        thrown = session.call(8, "tools/call", {"name": "throw"})
        self.assertEqual(thrown["error"]["code"], -32603, thrown)

        slow = session.call(9, "tools/call", {"name": "slow", "arguments": {"steps": 3, "delayMs": 1},
                                              "_meta": {"progressToken": "p9"}})
        self.assert_text(slow, "done after 3 steps")
        progress = [n["params"]["progress"] for n in session.notifications
                    if n["method"] == "notifications/progress" and n["params"]["progressToken"] == "p9"]
        self.assertEqual(progress, [1, 2, 3])

    def test_stdio(self):
        peer = self.start(fixture_command("stdio"))
        self.check_full_session(StdioSession(peer))
        self.assertEqual(peer.stop(), 0)  # closing stdin ends it

    def test_streamable_http(self):
        peer, base = self.start_fixture_http("streamableHttp")
        session = StreamableHttpSession(base + "/mcp")
        self.check_full_session(session)
        self.assertTrue(session.session_id)
        self.assertEqual(session.delete(), 200)
        self.assertEqual(peer.stop(), 0)

    def test_streamable_http_json_response(self):
        peer, base = self.start_fixture_http("streamableHttp", "--json-response")
        session = StreamableHttpSession(base + "/mcp")
        self.handshake(session)
        status, headers, messages = session.post(
            request(2, "tools/call", {"name": "echo", "arguments": {"message": "json"}}))
        self.assertTrue(headers["Content-Type"].startswith("application/json"))
        self.assert_text(messages[0], "json")

    def test_sse(self):
        peer, base = self.start_fixture_http("sse")
        session = SseSession(base)
        self.addCleanup(session.close)
        self.check_full_session(session)
        self.assertEqual(peer.stop(), 0)

    def test_pagination(self):
        peer = self.start(fixture_command("stdio"), env={"FIXTURE_PAGE_SIZE": "5"})
        session = StdioSession(peer)
        self.handshake(session)
        names, cursor, pages = [], None, 0
        while True:
            page = session.call(10 + pages, "tools/list", {"cursor": cursor} if cursor else None)
            self.assertLessEqual(len(page["result"]["tools"]), 5)
            names += [tool["name"] for tool in page["result"]["tools"]]
            pages += 1
            cursor = page["result"].get("nextCursor")
            if not cursor:
                break
        self.assertEqual(pages, 3)
        self.assertEqual(len(names), 13)

    def test_garbage_flag(self):
        peer = self.start(fixture_command("stdio", "--garbage"))
        peer.send(request(1, "initialize", initialize_params()))
        deadline = time.monotonic() + TIMEOUT
        first = peer.next_line(peer.stdout_lines, deadline)
        with self.assertRaises(json.JSONDecodeError):
            json.loads(first)
        self.assertEqual(json.loads(peer.next_line(peer.stdout_lines, deadline))["id"], 1)

    def test_crash_after_flag(self):
        peer = self.start(fixture_command("stdio", "--crash-after", "2"))
        session = StdioSession(peer)
        self.handshake(session)                   # request 1
        self.assertIn("result", session.call(2, "ping"))  # request 2
        peer.send(request(3, "ping"))             # request 3: exits instead
        deadline = time.monotonic() + TIMEOUT
        self.assertIsNone(peer.next_line(peer.stdout_lines, deadline))
        self.assertEqual(peer.proc.wait(timeout=TIMEOUT), 3)

    def test_never_answer_flag(self):
        peer = self.start(fixture_command("stdio", "--never-answer"))
        session = StdioSession(peer)
        self.handshake(session)  # initialize is still answered
        peer.send(request(2, "ping"))
        peer.proc.stdin.close()  # the server exits at end of input, not having answered
        deadline = time.monotonic() + TIMEOUT
        self.assertIsNone(peer.next_line(peer.stdout_lines, deadline))
        self.assertEqual(peer.proc.wait(timeout=TIMEOUT), 0)


# ---------------------------------------------------------------------------
# server-everything

class ServerEverythingTest(PeerTestCase):
    def check_session(self, session):
        result = self.handshake(session)
        self.assertEqual(result["serverInfo"]["name"], "mcp-servers/everything")
        tools = session.call(2, "tools/list")["result"]["tools"]
        self.assertIn("echo", [tool["name"] for tool in tools])
        self.assert_text(session.call(3, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}),
                         "Echo: hi")
        resources = session.call(4, "resources/list")["result"]["resources"]
        self.assertTrue(resources)
        prompt = session.call(5, "prompts/get", {"name": "simple-prompt"})
        self.assertTrue(prompt["result"]["messages"], prompt)

    def test_stdio(self):
        peer = self.start(everything_command("stdio"), stops_on_stdin_close=False)
        self.check_session(StdioSession(peer))

    def test_streamable_http(self):
        peer, base = self.start_everything_http("streamableHttp")
        session = StreamableHttpSession(base + "/mcp")
        self.check_session(session)
        self.assertTrue(session.session_id)

    def test_sse(self):
        peer, base = self.start_everything_http("sse")
        session = SseSession(base)
        self.addCleanup(session.close)
        self.check_session(session)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fixture-server", required=True, help="tools/fixture-server/server.mjs")
    parser.add_argument("--node-modules", required=True, help="tools/npm/node_modules")
    ARGS, rest = parser.parse_known_args()
    ARGS.fixture_server = os.path.abspath(ARGS.fixture_server)
    ARGS.node_modules = os.path.abspath(ARGS.node_modules)
    for path in (ARGS.fixture_server, os.path.join(ARGS.node_modules, "@modelcontextprotocol")):
        if not os.path.exists(path):
            sys.exit(f"peers_test: {path} is missing; run tools/npm/install.sh")
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
