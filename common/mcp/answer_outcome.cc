#include "common/mcp/answer_outcome.h"

#include "common/errors.h"
#include "common/json_scan.h"

namespace inspector::mcp {
namespace {

// The text of the top-level member `key` of the object `json` (the last
// one, when repeated); "" if none.
std::string_view MemberValue(std::string_view json, std::string_view key) {
  std::string_view value;
  json_scan::ForEachMember(json, [&](const json_scan::Member& member) {
    if (member.key == key) {
      value = json.substr(member.begin, member.end - member.begin);
    }
    return true;
  });
  return value;
}

// An answer's "error" and "result" members (the last of each), found in
// one pass: an answer is scanned once however many rules read it.
struct AnswerParts {
  std::string_view error;
  std::string_view result;
};

AnswerParts PartsOf(std::string_view answer) {
  AnswerParts parts;
  json_scan::ForEachMember(answer, [&](const json_scan::Member& member) {
    const std::string_view value =
        answer.substr(member.begin, member.end - member.begin);
    if (member.key == "error") parts.error = value;
    if (member.key == "result") parts.result = value;
    return true;
  });
  return parts;
}

std::string_view CodeOf(std::string_view error) {
  std::string_view code = MemberValue(error, "code");
  return code.empty() ? std::string_view("_OTHER") : code;
}

bool ResultIsError(std::string_view result) {
  return !result.empty() && MemberValue(result, "isError") == "true";
}

}  // namespace

std::string_view ErrorCodeOf(std::string_view answer) {
  const AnswerParts parts = PartsOf(answer);
  return parts.error.empty() ? std::string_view() : CodeOf(parts.error);
}

bool IsToolError(std::string_view answer) {
  return ResultIsError(PartsOf(answer).result);
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
  const AnswerParts parts = PartsOf(*answer);
  if (!parts.error.empty()) {
    const std::string_view code = CodeOf(parts.error);
    outcome.error = true;
    outcome.error_type = std::string(code);
    if (code != "_OTHER") outcome.rpc_status_code = std::string(code);
    std::string_view message = MemberValue(parts.error, "message");
    if (message.size() >= 2 && message.front() == '"') {
      message = message.substr(1, message.size() - 2);
    }
    outcome.message = std::string(message);
    return outcome;
  }
  if (ResultIsError(parts.result)) {
    outcome.error = true;
    outcome.error_type = "tool_error";
  }
  return outcome;
}

}  // namespace inspector::mcp
