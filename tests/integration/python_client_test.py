#!/usr/bin/python3
"""A gRPC client in another language, built only from proto/.

Generates Python stubs from proto/inspector/v1 with protoc and Debian's
grpc_python_plugin, starts a real inspectord on 127.0.0.1:0 and checks that
the client can list and create servers with the session token, is refused
without it, and reads the machine-readable reason from the error details.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def generate_stubs(out_dir):
    protos = sorted(glob.glob(os.path.join(ARGS.proto_dir, "inspector/v1/*.proto")))
    google = [os.path.join(ARGS.googleapis_dir, p) for p in (
        "google/api/annotations.proto", "google/api/http.proto",
        "google/api/httpbody.proto", "google/rpc/status.proto",
        "google/rpc/error_details.proto")]
    subprocess.run(
        ["protoc", "-I", ARGS.proto_dir, "-I", ARGS.googleapis_dir,
         "-I", "/usr/include", "--python_out", out_dir, "--grpc_out", out_dir,
         "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"] + protos + google,
        check=True)


class Daemon:
    def __init__(self, work_dir):
        self.token_file = os.path.join(work_dir, "token")
        self.proc = subprocess.Popen(
            [ARGS.inspectord, "--listen", "127.0.0.1:0",
             "--db", os.path.join(work_dir, "inspector.db"),
             "--token-file", self.token_file],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        self.address = None
        seen = []
        # The daemon logs where it serves once it is ready.
        for line in self.proc.stderr:
            seen.append(line)
            marker = " serving gRPC on "
            if marker in line:
                self.address = line.split(marker, 1)[1].split()[0]
                break
        if self.address is None:
            raise RuntimeError("inspectord did not start:\n" + "".join(seen))

    def token(self):
        with open(self.token_file) as f:
            return f.read().strip()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.stderr.read()
        return self.proc.wait(timeout=30)


class PythonClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="inspector-py-")
        gen = os.path.join(cls.work, "gen")
        os.mkdir(gen)
        generate_stubs(gen)
        sys.path.insert(0, gen)
        global grpc, config_pb2, config_pb2_grpc, system_pb2, system_pb2_grpc
        global status_pb2, error_details_pb2
        import grpc
        from inspector.v1 import config_pb2, config_pb2_grpc
        from inspector.v1 import system_pb2, system_pb2_grpc
        from google.rpc import status_pb2, error_details_pb2
        cls.daemon = Daemon(cls.work)
        cls.channel = grpc.insecure_channel(cls.daemon.address)
        cls.config = config_pb2_grpc.ConfigServiceStub(cls.channel)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        code = cls.daemon.stop()
        shutil.rmtree(cls.work, ignore_errors=True)
        assert code == 0, "inspectord exited with %d" % code

    def auth(self):
        return [("authorization", "Bearer " + self.daemon.token())]

    def reason(self, error):
        for key, value in error.trailing_metadata() or ():
            if key == "grpc-status-details-bin":
                status = status_pb2.Status.FromString(value)
                for detail in status.details:
                    info = error_details_pb2.ErrorInfo()
                    if detail.Unpack(info):
                        return info.reason, dict(info.metadata)
        return None, {}

    def test_health_is_open(self):
        health = system_pb2_grpc.SystemServiceStub(self.channel).GetHealth(
            system_pb2.GetHealthRequest(), timeout=10)
        self.assertEqual(health.status, "ok")

    def test_refused_without_token(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.config.ListServers(config_pb2.ListServersRequest(), timeout=10)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        self.assertEqual(self.reason(caught.exception)[0], "SESSION_INVALID")

    def test_create_and_list_with_token(self):
        server = config_pb2.ServerConfig(
            name="py-everything", transport="stdio", command="npx",
            args=["-y", "@modelcontextprotocol/server-everything"],
            env={"DEBUG": "1"})
        created = self.config.CreateServer(
            config_pb2.CreateServerRequest(server=server),
            metadata=self.auth(), timeout=10)
        self.assertEqual(len(created.id), 36)
        listed = self.config.ListServers(
            config_pb2.ListServersRequest(), metadata=self.auth(), timeout=10)
        names = [s.name for s in listed.servers]
        self.assertIn("py-everything", names)
        got = [s for s in listed.servers if s.name == "py-everything"][0]
        self.assertEqual(list(got.args), ["-y", "@modelcontextprotocol/server-everything"])
        self.assertEqual(dict(got.env), {"DEBUG": "1"})

    def test_invalid_config_names_the_field(self):
        with self.assertRaises(grpc.RpcError) as caught:
            self.config.CreateServer(
                config_pb2.CreateServerRequest(server=config_pb2.ServerConfig(
                    name="no-url", transport="sse")),
                metadata=self.auth(), timeout=10)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        reason, details = self.reason(caught.exception)
        self.assertEqual(reason, "INVALID_CONFIG")
        self.assertEqual(details.get("field"), "url")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--inspectord", required=True)
    parser.add_argument("--proto-dir", required=True)
    parser.add_argument("--googleapis-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
