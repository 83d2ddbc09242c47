// What `inspectorctl respond ID` sends: the choice among its answer options
// and the Resolve or Reject request they make, checked with the daemon's
// own rules (common/mcp/client_answers.h) when the pending request is known,
// so that an answer the daemon would refuse never leaves the machine.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_RESPOND_ARGS_H_
#define INSPECTOR_CLIENTS_CLI_RESPOND_ARGS_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/client_requests.pb.h"

namespace inspector::cli {

// The answer options of `respond`, as given.
struct RespondOptions {
  // --json, after @FILE / - were read: the result JSON text.
  std::optional<std::string> json;
  // --accept-defaults.
  bool accept_defaults = false;
  // KEY=VALUE / KEY:=JSON words (elicitation content).
  std::vector<std::string> fields;
  bool decline = false;  // --decline
  bool cancel = false;   // --cancel
  // --reject REASON.
  std::optional<std::string> reject;
  // --text TEXT (sampling).
  std::optional<std::string> text;
  // --model NAME (with --text or the sampling prompt).
  std::optional<std::string> model;
  // --interactive.
  bool interactive = false;
};

enum class AnswerMode {
  kJson,         // --json [--accept-defaults]
  kFields,       // KEY=VALUE... and/or --accept-defaults
  kDecline,      // --decline
  kCancel,       // --cancel
  kReject,       // --reject REASON
  kText,         // --text TEXT
  kInteractive,  // --interactive, or nothing on a terminal
};

// Which answer the options ask for. Usage errors: options that contradict
// each other (two answers at once, --model without --text), and no answer
// option when stdin is not a terminal.
absl::StatusOr<AnswerMode> ChooseAnswerMode(const RespondOptions& options,
                                            bool stdin_is_terminal);

// A Resolve or a Reject.
struct Answer {
  bool reject = false;
  // Resolve: the result (validated when the request was known) and
  // ResolveRequest.apply_defaults.
  nlohmann::json result;
  bool apply_defaults = false;
  // Reject: the action and reason.
  v1::RejectAction action = v1::REJECT_ACTION_UNSPECIFIED;
  std::string reason;
};

// The answer for every mode but kInteractive. `item` is the pending request
// as ListPending showed it, or nullptr when it was not listed (then nothing
// can be checked here and the daemon judges alone). Errors: usage errors
// for options that do not fit the request's kind (--decline on sampling,
// --text on elicitation, ...) or unparsable JSON; INVALID_REQUEST from the
// answer rules, with a hint saying that nothing was sent.
absl::StatusOr<Answer> BuildAnswer(AnswerMode mode,
                                   const RespondOptions& options,
                                   const v1::PendingRequest* item);

// The Answer for an ElicitResult chosen in the interactive form: decline
// and cancel become Rejects with REJECT_ACTION_DECLINE / _CANCEL, accept a
// Resolve.
Answer AnswerFromElicitResult(const nlohmann::json& result);

// The model name for sampling answers: --model, else
// kDefaultSamplingModel.
std::string SamplingModel(const RespondOptions& options);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_RESPOND_ARGS_H_
