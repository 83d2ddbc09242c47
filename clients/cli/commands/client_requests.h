// The commands that answer the requests MCP servers send their client
// (ClientRequestsService): `pending` lists (or follows) the requests
// waiting for an answer, `respond` answers one, `roots` shows and sets the
// roots a server is given. Registered like the groups of commands.h.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_CLIENT_REQUESTS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_CLIENT_REQUESTS_H_

#include <CLI/CLI.hpp>

#include "clients/cli/context.h"

namespace inspector::cli {

// Help group of these commands.
inline constexpr char kClientRequestsGroup[] =
    "Answering servers (sampling, elicitation, roots)";

// `pending`, `respond`, `roots` (client_requests.cc).
void AddClientRequestsCommands(CLI::App* app, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_CLIENT_REQUESTS_H_
