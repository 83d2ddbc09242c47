#include "clients/cli/cli_errors.h"

#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace {

constexpr absl::string_view kErrorInfoUrl =
    "type.googleapis.com/google.rpc.ErrorInfo";
constexpr absl::string_view kHintUrl = "inspectorctl/hint";
constexpr absl::string_view kExitCodeUrl = "inspectorctl/exit-code";
constexpr absl::string_view kLocalUrl = "inspectorctl/local";
constexpr absl::string_view kReportedUrl = "inspectorctl/reported";

constexpr char kStartHint[] =
    "start it with `inspectord` (or tools/run.sh), or point --addr / "
    "$INSPECTOR_ADDR at it";

std::optional<std::string> Payload(const absl::Status& status,
                                   absl::string_view url) {
  auto payload = status.GetPayload(url);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

std::string FormatSeconds(double seconds) {
  std::string text = absl::StrFormat("%g", seconds);
  return text + "s";
}

// "(key: value, ...)" of the details, `first` first; "" when empty.
std::string DetailsSuffix(const std::map<std::string, std::string>& details,
                          absl::string_view first = "") {
  std::vector<std::string> parts;
  if (!first.empty()) {
    auto it = details.find(std::string(first));
    if (it != details.end() && !it->second.empty()) {
      parts.push_back(absl::StrCat(it->first, ": ", it->second));
    }
  }
  for (const auto& [key, value] : details) {
    if (key == first || value.empty()) continue;
    parts.push_back(absl::StrCat(key, ": ", value));
  }
  if (parts.empty()) return "";
  return absl::StrCat(" (", absl::StrJoin(parts, ", "), ")");
}

std::string ReasonAsWords(absl::string_view reason) {
  std::string words = absl::AsciiStrToLower(reason);
  for (char& c : words) {
    if (c == '_') c = ' ';
  }
  return words;
}

}  // namespace

absl::Status UsageError(std::string message, std::string hint) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kLocalUrl, absl::Cord("1"));
  status.SetPayload(kExitCodeUrl, absl::Cord(absl::StrCat(kExitUsage)));
  if (!hint.empty()) status.SetPayload(kHintUrl, absl::Cord(hint));
  return status;
}

absl::Status LocalError(ErrorCode code, std::string message, std::string hint) {
  absl::Status status = Error(code, message);
  status.SetPayload(kLocalUrl, absl::Cord("1"));
  if (!hint.empty()) status.SetPayload(kHintUrl, absl::Cord(hint));
  return status;
}

absl::Status WithHint(absl::Status status, std::string hint) {
  if (!status.ok() && !hint.empty()) {
    status.SetPayload(kHintUrl, absl::Cord(hint));
  }
  return status;
}

absl::Status AlreadyReported(int exit_code) {
  absl::Status status = absl::UnknownError("already reported");
  status.SetPayload(kReportedUrl, absl::Cord("1"));
  status.SetPayload(kExitCodeUrl, absl::Cord(absl::StrCat(exit_code)));
  return status;
}

bool IsAlreadyReported(const absl::Status& status) {
  return Payload(status, kReportedUrl).has_value();
}

bool HasErrorInfo(const absl::Status& status) {
  return Payload(status, kErrorInfoUrl).has_value();
}

Failure DescribeError(const absl::Status& status, const ErrorContext& context) {
  Failure failure;
  if (status.ok()) return failure;
  const std::string message(status.message());
  const std::optional<std::string> hint = Payload(status, kHintUrl);
  const std::optional<std::string> exit_code = Payload(status, kExitCodeUrl);

  if (Payload(status, kLocalUrl).has_value() || exit_code.has_value()) {
    int code = kExitOther;
    if (!exit_code.has_value() || !absl::SimpleAtoi(*exit_code, &code)) {
      code = ExitCodeForReason(ErrorReason(status));
    }
    failure.exit_code = code;
    failure.message = message;
    failure.hint = hint.value_or("");
    return failure;
  }

  if (!HasErrorInfo(status) &&
      (status.code() == absl::StatusCode::kUnavailable ||
       status.code() == absl::StatusCode::kDeadlineExceeded)) {
    failure.exit_code = kExitUnreachable;
    if (status.code() == absl::StatusCode::kUnavailable) {
      failure.message =
          absl::StrCat("inspectord is not running at ", context.address);
      failure.hint = kStartHint;
    } else if (context.reaches_mcp_server) {
      failure.message =
          absl::StrCat("no answer from inspectord at ", context.address,
                       " within ", FormatSeconds(context.timeout_seconds),
                       " while it waited for the MCP server");
      failure.hint =
          "the MCP server may still be working: raise --timeout, or see "
          "`inspectorctl status SERVER` and `inspectorctl watch`";
    } else {
      failure.message = absl::StrCat(
          "inspectord is not responding at ", context.address,
          " (no answer within ", FormatSeconds(context.timeout_seconds), ")");
      failure.hint = absl::StrCat(kStartHint,
                                  "; raise --timeout if it is "
                                  "just slow");
    }
    if (hint.has_value()) failure.hint = *hint;
    return failure;
  }

  const std::string reason = ErrorReason(status);
  const std::map<std::string, std::string> details = GetErrorDetails(status);
  failure.exit_code = ExitCodeForReason(reason);
  failure.message = message.empty() ? ReasonAsWords(reason) : message;

  if (reason == "SESSION_INVALID") {
    failure.message = "the daemon rejected the session token";
    if (!context.token_source.empty()) {
      absl::StrAppend(&failure.message, " from ", context.token_source);
    }
    if (!message.empty()) absl::StrAppend(&failure.message, ": ", message);
    failure.hint =
        context.token_source == kTokenEnv
            ? "$INSPECTOR_TOKEN overrides the token file: unset it, or set "
              "it to the token of the inspectord at this address"
            : "use the token of the inspectord at this address: point "
              "--token-file or $INSPECTOR_TOKEN_FILE at the file it was "
              "started with (its --token-file), or set $INSPECTOR_TOKEN";
  } else if (reason == "SERVER_NOT_FOUND") {
    failure.hint = "`inspectorctl servers list` shows the configured servers";
  } else if (reason == "INVALID_CONFIG") {
    auto field = details.find("field");
    if (field != details.end() && !field->second.empty()) {
      absl::StrAppend(&failure.message, " (field: ", field->second, ")");
    }
  } else if (reason == "ALREADY_EXISTS") {
    failure.hint =
        "pick another name, or change the existing server with "
        "`inspectorctl servers update`";
  } else if (reason == "NOT_IMPLEMENTED") {
    failure.hint =
        "this inspectord does not support the operation yet; `inspectorctl "
        "status` shows its version";
  } else if (reason == "SERVER_ERROR") {
    // The MCP server answered with a JSON-RPC error; say so like `rpc`.
    auto server = details.find("serverName");
    auto code = details.find("jsonrpcCode");
    auto data = details.find("jsonrpcData");
    failure.message = absl::StrCat(
        server != details.end() && !server->second.empty() ? server->second
                                                           : "the server",
        " answered with JSON-RPC error",
        code != details.end() && !code->second.empty() ? " " + code->second
                                                       : "",
        message.empty() ? "" : ": ", message);
    if (data != details.end() && !data->second.empty()) {
      absl::StrAppend(&failure.message, " (data: ", data->second, ")");
    }
  } else if ((reason == "AUTHENTICATION_FAILED" ||
              reason == "TRANSPORT_ERROR") &&
             details.count("wwwAuthenticate") > 0) {
    // The MCP server wants OAuth (a 401 or 403 challenge).
    auto server = details.find("serverName");
    std::string name = server != details.end() && !server->second.empty()
                           ? server->second
                           : "SERVER";
    bool scope = absl::StrContains(details.at("wwwAuthenticate"),
                                   "insufficient_scope");
    failure.hint = absl::StrCat(
        scope ? "the token lacks a scope this operation needs: "
              : "the server requires OAuth authorization: ",
        "run `inspectorctl auth login ", name, "`");
    absl::StrAppend(&failure.message, DetailsSuffix(details, "serverName"));
  } else if (reason == "TOO_LARGE") {
    absl::StrAppend(&failure.message, DetailsSuffix(details));
  } else if (failure.exit_code == kExitMcpServer) {
    absl::StrAppend(&failure.message, " [", reason, "]",
                    DetailsSuffix(details, "serverName"));
  } else if (failure.exit_code == kExitOther) {
    absl::StrAppend(&failure.message, " [", reason, "]",
                    DetailsSuffix(details));
  }
  if (hint.has_value()) failure.hint = *hint;
  return failure;
}

}  // namespace inspector::cli
