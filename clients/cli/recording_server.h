// A recorded session served as an MCP server (`inspectorctl sessions
// serve`): each request a client sends is answered with the recording's
// answer to the same method and parameters (compared as the whole request
// under a rules file, server/sessions/compare_rules.h: by default
// /params/_meta and trace fields are ignored; any `initialize` matches
// the recorded one), preceded by the notifications
// the server sent while it answered. Equal requests recorded several times
// are answered in their recorded order, the last answer repeated after
// that. A request with no match gets a JSON-RPC error: -32601 when the
// recording has no request of that method (naming the methods it has),
// -32602 when it has, naming the closest recorded parameters and the first
// place they differ. `ping` and `logging/setLevel` are answered `{}`
// when not recorded;
// notifications and the client's answers are taken in and not answered.
//
// Built from a session file (ExportSession's JSON, `inspectorctl sessions
// export`). Not thread-safe: one caller feeds it the lines it reads.
#ifndef INSPECTOR_CLIENTS_CLI_RECORDING_SERVER_H_
#define INSPECTOR_CLIENTS_CLI_RECORDING_SERVER_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "server/sessions/compare_rules.h"

namespace inspector::cli {

class RecordingServer {
 public:
  // INVALID_ARGUMENT when `session` is not a session file (no "messages"
  // array) or records no answered request.
  static absl::StatusOr<RecordingServer> FromSessionFile(
      const nlohmann::json& session,
      sessions::CompareRules rules = sessions::CompareRules::Defaults());

  // The JSON lines to write for one line read (without newlines).
  std::vector<std::string> Handle(std::string_view line);

  // Answered requests in the recording.
  size_t size() const { return exchanges_.size(); }

 private:
  struct Exchange {
    std::string method;
    nlohmann::json params;                     // as recorded
    nlohmann::json answer;                     // the recorded response
    std::vector<nlohmann::json> notifications;  // sent while answering
    bool used = false;
  };

  std::vector<std::string> Answer(const nlohmann::json& request);

  std::vector<Exchange> exchanges_;
  sessions::CompareRules rules_;
};

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_RECORDING_SERVER_H_
