// The stdio MCP server "everything" (npx -y
// @modelcontextprotocol/server-everything) that the inspectorctl tests
// configure, edit, render and look up by name, under one fixed id.
// Header-only: values built anew on each call, no state, any thread.
#ifndef INSPECTOR_TESTS_CLI_EVERYTHING_SERVER_H_
#define INSPECTOR_TESTS_CLI_EVERYTHING_SERVER_H_

#include <map>
#include <string>

#include "clients/cli/history_views.h"
#include "inspector/v1/config.pb.h"

namespace inspector::cli::testdata {

inline constexpr char kEverythingId[] = "11111111-2222-3333-4444-555555555555";

// "everything" (kEverythingId): stdio, npx -y
// @modelcontextprotocol/server-everything, with `env`.
inline v1::ServerConfig EverythingServer(
    const std::map<std::string, std::string>& env) {
  v1::ServerConfig server;
  server.set_id(kEverythingId);
  server.set_name("everything");
  server.set_transport("stdio");
  server.set_command("npx");
  server.add_args("-y");
  server.add_args("@modelcontextprotocol/server-everything");
  for (const auto& [name, value] : env) (*server.mutable_env())[name] = value;
  return server;
}

// The names of a daemon that knows "everything" (kEverythingId) only.
inline ServerNames EverythingNames() {
  v1::ListServersResponse servers;
  v1::ServerConfig* server = servers.add_servers();
  server->set_id(kEverythingId);
  server->set_name("everything");
  return ServerNames(servers);
}

}  // namespace inspector::cli::testdata

#endif  // INSPECTOR_TESTS_CLI_EVERYTHING_SERVER_H_
