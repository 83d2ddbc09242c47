#include "common/mcp/answer_outcome.h"

#include "common/errors.h"
#include "common/json_scan.h"

namespace inspector::mcp {
namespace {

// The value of the top-level member `key` of the object `json` (the last
// one, when repeated); "" if none.
std::string_view MemberValue(std::string_view json, std::string_view key) {
  std::string_view value;
  for (const json_scan::Member& member : json_scan::ScanObject(json)) {
    if (member.key == key) {
      value = json.substr(member.begin, member.end - member.begin);
    }
  }
  return value;
}

}  // namespace

std::string_view ErrorCodeOf(std::string_view answer) {
  std::string_view error = MemberValue(answer, "error");
  if (error.empty()) return "";
  std::string_view code = MemberValue(error, "code");
  return code.empty() ? std::string_view("_OTHER") : code;
}

bool IsToolError(std::string_view answer) {
  std::string_view result = MemberValue(answer, "result");
  return !result.empty() && MemberValue(result, "isError") == "true";
}

AnswerOutcome OutcomeOf(const absl::StatusOr<std::string>& answer) {
  AnswerOutcome outcome;
  if (!answer.ok()) {
    outcome.error = true;
    outcome.error_type = ErrorReason(answer.status());
    if (outcome.error_type.empty()) outcome.error_type = "_OTHER";
    outcome.message = std::string(answer.status().message());
    return outcome;
  }
  if (std::string_view code = ErrorCodeOf(*answer); !code.empty()) {
    outcome.error = true;
    outcome.error_type = std::string(code);
    if (code != "_OTHER") outcome.rpc_status_code = std::string(code);
    std::string_view message =
        MemberValue(MemberValue(*answer, "error"), "message");
    if (message.size() >= 2 && message.front() == '"') {
      message = message.substr(1, message.size() - 2);
    }
    outcome.message = std::string(message);
    return outcome;
  }
  if (IsToolError(*answer)) {
    outcome.error = true;
    outcome.error_type = "tool_error";
  }
  return outcome;
}

}  // namespace inspector::mcp
