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

// An answer's "error" and "result" members (the last of each) and
// whether that result's "isError" is true, found in one pass: an answer is
// scanned once however many rules read it.
struct AnswerParts {
  std::string_view error;
  std::string_view result;
  bool result_is_error = false;
};

// The object `result` at answer[begin] read member by member, noting its
// last "isError"; where that read ends (npos: not read to its end).
size_t ReadResult(std::string_view answer, size_t begin, bool* is_error) {
  *is_error = false;
  return json_scan::ReadMembersAt(
      answer, begin, [&](std::string_view key, size_t at) {
        const size_t end = json_scan::SkipValue(answer, at);
        if (key == "isError" && end != std::string_view::npos) {
          *is_error = answer.substr(at, end - at) == "true";
        }
        return end;
      });
}

// As far as the text reads cleanly as an object (a server's answers are
// checked JSON before any rule reads them).
AnswerParts PartsOf(std::string_view answer) {
  AnswerParts parts;
  json_scan::ReadMembersAt(
      answer, json_scan::SkipSpace(answer, 0),
      [&](std::string_view key, size_t begin) {
        if (key == "result" && answer[begin] == '{') {
          bool is_error = false;
          const size_t close = ReadResult(answer, begin, &is_error);
          if (close == std::string_view::npos) return close;
          parts.result = answer.substr(begin, close + 1 - begin);
          parts.result_is_error = is_error;
          return close + 1;
        }
        const size_t end = json_scan::SkipValue(answer, begin);
        if (end == std::string_view::npos) return end;
        const std::string_view value = answer.substr(begin, end - begin);
        if (key == "error") parts.error = value;
        if (key == "result") {
          parts.result = value;
          parts.result_is_error = false;
        }
        return end;
      });
  return parts;
}

std::string_view CodeOf(std::string_view error) {
  std::string_view code = MemberValue(error, "code");
  return code.empty() ? std::string_view("_OTHER") : code;
}

}  // namespace

std::string_view ErrorCodeOf(std::string_view answer) {
  const AnswerParts parts = PartsOf(answer);
  return parts.error.empty() ? std::string_view() : CodeOf(parts.error);
}

bool IsToolError(std::string_view answer) {
  return PartsOf(answer).result_is_error;
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
  if (parts.result_is_error) {
    outcome.error = true;
    outcome.error_type = "tool_error";
  }
  return outcome;
}

}  // namespace inspector::mcp
