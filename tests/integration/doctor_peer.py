#!/usr/bin/env python3
"""Small loopback HTTP(S) servers for the connection doctor's tests.

  doctor_peer.py tls CERT KEY   HTTPS with the given certificate; every
                                request gets 200 application/json "{}"
  doctor_peer.py oauth          HTTP; POST /mcp gets 401 with a Bearer
                                challenge naming its RFC 9728 document, and
                                the RFC 9728 and RFC 8414 documents are
                                served under /.well-known/

Listens on 127.0.0.1, a port the kernel picks, and prints
{"listening": PORT} on stdout once it accepts connections. Exits when its
stdin closes (the test ends) or on SIGTERM.
"""
import http.server
import json
import ssl
import sys
import threading


def make_handler(mode, port_box):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send_json(self, status, body, headers=()):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def origin(self):
            return "http://127.0.0.1:%d" % port_box[0]

        def handle_any(self):
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if mode == "tls":
                self.send_json(200, {})
                return
            origin = self.origin()
            if self.path == "/.well-known/oauth-protected-resource/mcp":
                self.send_json(200, {
                    "resource": origin + "/mcp",
                    "authorization_servers": [origin + "/auth"],
                    "scopes_supported": ["mcp:tools"],
                })
            elif self.path == "/.well-known/oauth-authorization-server/auth":
                self.send_json(200, {
                    "issuer": origin + "/auth",
                    "authorization_endpoint": origin + "/auth/authorize",
                    "token_endpoint": origin + "/auth/token",
                    "registration_endpoint": origin + "/auth/register",
                    "code_challenge_methods_supported": ["S256"],
                })
            elif self.path == "/mcp":
                challenge = ('Bearer resource_metadata="%s/.well-known/'
                             'oauth-protected-resource/mcp"' % origin)
                self.send_json(401, {"error": "invalid_token"},
                               [("WWW-Authenticate", challenge)])
            else:
                self.send_json(404, {"error": "not found"})

        do_GET = handle_any
        do_POST = handle_any
        do_DELETE = handle_any

    return Handler


def main():
    mode = sys.argv[1]
    port_box = [0]
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), make_handler(mode, port_box))
    server.daemon_threads = True
    if mode == "tls":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[2], sys.argv[3])
        server.socket = context.wrap_socket(server.socket, server_side=True)
    port_box[0] = server.server_address[1]

    def watch_stdin():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"listening": port_box[0]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
