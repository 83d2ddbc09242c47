// `inspectorctl rpc SERVER MESSAGE|-|METHOD`: raw JSON-RPC through the
// daemon (McpService.Forward).
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"
#include "google/api/httpbody.pb.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

struct RpcFlags {
  std::string server;
  std::string message;
  std::string params;
  CLI::Option* params_option = nullptr;
  bool pass_input_required = false;
};

absl::StatusOr<std::string> MessageToSend(const RpcFlags& flags) {
  const bool raw = flags.message == "-" || LooksLikeJsonMessage(flags.message);
  if (raw && flags.params_option->count() > 0) {
    return UsageError(
        "--params goes with a method name, not with a whole "
        "JSON-RPC message",
        "put the params in the message, or give the method: "
        "inspectorctl rpc SERVER tools/list --params '{}'");
  }
  if (flags.message == "-")
    return ReadInputFile("-", kMaxMessageBytes, "send less at once");
  if (raw) return flags.message;
  return BuildJsonRpcMessage(flags.message, flags.params);
}

// "CODE: message" of a JSON-RPC error response; nullopt for other answers.
std::optional<std::string> JsonRpcError(const nlohmann::ordered_json& answer) {
  if (!answer.is_object()) return std::nullopt;
  auto error = answer.find("error");
  if (error == answer.end() || !error->is_object()) return std::nullopt;
  std::string text;
  if (auto code = error->find("code"); code != error->end()) {
    text = code->dump();
  }
  if (auto message = error->find("message");
      message != error->end() && message->is_string()) {
    absl::StrAppend(&text, text.empty() ? "" : ": ",
                    message->get<std::string>());
  }
  return text;
}

absl::Status RunRpc(Context& context, const RpcFlags& flags) {
  ASSIGN_OR_RETURN(std::string message, MessageToSend(flags));
  v1::ForwardRequest request;
  request.set_server_id(flags.server);
  request.mutable_body()->set_content_type("application/json");
  request.mutable_body()->set_data(std::move(message));
  request.set_pass_input_required(flags.pass_input_required);
  google::api::HttpBody response;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::Forward, request, &response));

  const std::string& data = response.data();
  // A notification gets an empty answer.
  if (data.empty()) return absl::OkStatus();
  // Keeps the server's key order when printing.
  const nlohmann::ordered_json answer =
      nlohmann::ordered_json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (context.json()) {
    context.out() << data << (data.back() == '\n' ? "" : "\n") << std::flush;
  } else if (answer.is_discarded()) {
    context.out() << SanitizeText(data) << (data.back() == '\n' ? "" : "\n")
                  << std::flush;
  } else {
    context.out() << SanitizeText(answer.dump(
                         2, ' ', false,
                         nlohmann::ordered_json::error_handler_t::replace))
                  << "\n"
                  << std::flush;
  }
  if (std::optional<std::string> error = JsonRpcError(answer)) {
    Failure failure;
    failure.exit_code = kExitMcpServer;
    failure.message = SanitizeForTerminal(
        absl::StrCat(flags.server, " answered with JSON-RPC error ", *error));
    context.PrintFailure(failure);
    return AlreadyReported(kExitMcpServer);
  }
  return absl::OkStatus();
}

}  // namespace

void AddRpcCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<RpcFlags>();
  CLI::App* rpc = AddServerCommand(
      app, context, kMcpGroup,
      {"rpc", "Send a raw JSON-RPC message to a server and print the answer",
       "The message goes to the server byte for byte (the daemon only\n"
       "rewrites the id on the way and back). With a method name the message\n"
       "is {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":METHOD,\"params\":...}; "
       "methods\n"
       "under notifications/ get no id. The answer is printed as indented\n"
       "JSON, or exactly as received with -o json. A notification prints\n"
       "nothing. A JSON-RPC error answer exits 7.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl rpc everything tools/list\n"
       "  inspectorctl rpc everything tools/call --params "
       "'{\"name\":\"echo\",\"arguments\":{\"message\":\"hi\"}}'\n"
       "  inspectorctl rpc everything "
       "'{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}'\n"
       "  inspectorctl rpc everything notifications/roots/list_changed\n"
       "  cat request.json | inspectorctl rpc everything -"},
      flags, RunRpc);
  rpc->add_option("message", flags->message,
                  "A JSON-RPC message, - to read one from stdin, or a "
                  "method name")
      ->required()
      ->type_name("MESSAGE|-|METHOD");
  flags->params_option =
      rpc->add_option("--params", flags->params,
                      "With a method name: the params (a JSON object)")
          ->type_name("JSON");
  rpc->add_flag("--pass-input-required", flags->pass_input_required,
                "MCP 2026-07-28 servers: print an input_required result as "
                "the server sent it, instead of asking its input requests as "
                "pending items and retrying until the final result");
}

}  // namespace inspector::cli
