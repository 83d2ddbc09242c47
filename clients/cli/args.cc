#include "clients/cli/args.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "common/http/tokens.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

std::string Trim(std::string_view s) {
  return std::string(absl::StripAsciiWhitespace(AbslView(s)));
}

}  // namespace

EnvLookup ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

absl::StatusOr<KeyValue> ParseEnvAssignment(std::string_view text,
                                            const EnvLookup& env) {
  const std::string example = "expected K=V, for example --env DEBUG=1";
  if (text.find('\0') != std::string_view::npos) {
    return UsageError(absl::StrCat("--env value contains a NUL byte"));
  }
  auto eq = text.find('=');
  std::string key(eq == std::string_view::npos ? text : text.substr(0, eq));
  if (key.empty()) {
    return UsageError(absl::StrCat("invalid --env value \"", AbslView(text),
                                   "\": the name is empty"),
                      example);
  }
  if (eq != std::string_view::npos) {
    return KeyValue{key, std::string(text.substr(eq + 1))};
  }
  std::optional<std::string> value = env ? env(key) : std::nullopt;
  if (!value.has_value()) {
    return UsageError(absl::StrCat("--env ", key, " has no value and $", key,
                                   " is not set in this shell"),
                      absl::StrCat(example, ", or export ", key,
                                   " first to pass its value along"));
  }
  return KeyValue{key, *value};
}

absl::StatusOr<KeyValue> ParseHeader(std::string_view text) {
  const std::string example =
      "expected \"Name: value\" or Name=value, for example "
      "--header \"Authorization: Bearer $TOKEN\"";
  if (text.find_first_of("\r\n") != std::string_view::npos ||
      text.find('\0') != std::string_view::npos) {
    return UsageError("--header value contains a line break or NUL byte");
  }
  auto sep = text.find_first_of(":=");
  if (sep == std::string_view::npos) {
    return UsageError(
        absl::StrCat("invalid --header value \"", AbslView(text), "\""),
        example);
  }
  std::string name = Trim(text.substr(0, sep));
  std::string value = Trim(text.substr(sep + 1));
  if (name.empty()) {
    return UsageError(absl::StrCat("invalid --header value \"", AbslView(text),
                                   "\": the name is empty"),
                      example);
  }
  if (!http::IsToken(name)) {
    return UsageError(
        absl::StrCat("invalid header name \"", name,
                     "\": only letters, digits and ",
                     AbslView(http::kTcharPunctuation), " are allowed"),
        example);
  }
  return KeyValue{name, value};
}

SplitArgs SplitAtDoubleDash(const std::vector<std::string>& args) {
  SplitArgs split;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    if (args[i] == "--") {
      split.has_command_line = true;
      ++i;
      break;
    }
    split.options.push_back(args[i]);
  }
  for (; i < args.size(); ++i) split.command_line.push_back(args[i]);
  return split;
}

absl::StatusOr<v1::ConfigFormat> ParseConfigFormat(std::string_view name) {
  if (name == "auto") return v1::CONFIG_FORMAT_AUTO;
  if (name == "inspector") return v1::CONFIG_FORMAT_INSPECTOR;
  if (name == "mcp-servers" || name == "claude" || name == "cursor") {
    return v1::CONFIG_FORMAT_MCP_SERVERS;
  }
  if (name == "vscode") return v1::CONFIG_FORMAT_VSCODE;
  return UsageError(absl::StrCat("unknown format \"", AbslView(name), "\""),
                    "formats: auto, inspector, mcp-servers (also claude, "
                    "cursor), vscode");
}

std::string ConfigFormatName(v1::ConfigFormat format) {
  switch (format) {
    case v1::CONFIG_FORMAT_AUTO:
      return "auto";
    case v1::CONFIG_FORMAT_INSPECTOR:
      return "inspector";
    case v1::CONFIG_FORMAT_MCP_SERVERS:
      return "mcp-servers";
    case v1::CONFIG_FORMAT_VSCODE:
      return "vscode";
    default:
      return absl::StrCat("format ", static_cast<int>(format));
  }
}

absl::StatusOr<v1::ConflictPolicy> ParseConflictPolicy(std::string_view name) {
  if (name == "fail") return v1::CONFLICT_POLICY_FAIL;
  if (name == "skip") return v1::CONFLICT_POLICY_SKIP;
  if (name == "replace") return v1::CONFLICT_POLICY_REPLACE;
  return UsageError(
      absl::StrCat("unknown conflict policy \"", AbslView(name), "\""),
      "policies: fail, skip, replace");
}

std::string DefaultTransportForUrl(std::string_view url) {
  std::string_view path = url;
  auto scheme = path.find("://");
  if (scheme != std::string_view::npos) {
    path.remove_prefix(scheme + 3);
    auto slash = path.find('/');
    path = slash == std::string_view::npos ? std::string_view()
                                           : path.substr(slash);
  }
  auto end = path.find_first_of("?#");
  if (end != std::string_view::npos) path = path.substr(0, end);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (absl::EndsWithIgnoreCase(AbslView(path), "/sse")) {
    return std::string(kTransportSse);
  }
  return std::string(kTransportStreamableHttp);
}

absl::Status ValidateAddress(std::string_view addr) {
  const std::string hint =
      "--addr takes the daemon's gRPC address as host:port, for example "
      "127.0.0.1:50051";
  if (addr.empty()) return UsageError("--addr is empty", hint);
  if (absl::StartsWithIgnoreCase(AbslView(addr), "http://") ||
      absl::StartsWithIgnoreCase(AbslView(addr), "https://")) {
    return UsageError(absl::StrCat("--addr ", AbslView(addr),
                                   " is a URL, not a gRPC address"),
                      hint);
  }
  if (absl::StartsWith(AbslView(addr), "unix:") ||
      absl::StartsWith(AbslView(addr), "unix-abstract:") ||
      absl::StrContains(AbslView(addr), "///")) {
    return absl::OkStatus();
  }
  auto colon = addr.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == addr.size() ||
      colon == 0) {
    return UsageError(
        absl::StrCat("--addr ", AbslView(addr), " has no host and port"), hint);
  }
  for (char c : addr.substr(colon + 1)) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return UsageError(
          absl::StrCat("--addr ", AbslView(addr), " has an invalid port"),
          hint);
    }
  }
  return absl::OkStatus();
}

}  // namespace inspector::cli
