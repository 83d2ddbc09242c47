#include "clients/cli/intercept_views.h"

#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/json_values.h"
#include "nlohmann/json.hpp"

namespace inspector::cli {
namespace {

constexpr uint32_t kMaxHoldTimeoutMs = 24 * 3600 * 1000;

// A SPEC value with its commas and backslashes escaped.
std::string EscapeSpecValue(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == ',' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

std::string SessionShort(const std::string& id) {
  if (id.empty()) return "-";
  return id.size() > 8 ? id.substr(0, 8) : id;
}

}  // namespace

std::string ModeName(v1::InterceptMode mode) {
  switch (mode) {
    case v1::PASSTHROUGH:
      return "PASSTHROUGH";
    case v1::INTERCEPT:
      return "INTERCEPT";
    default:
      return "?";
  }
}

absl::StatusOr<uint32_t> ParseHoldTimeout(const std::string& text) {
  uint64_t value = 0;
  const bool digits =
      !text.empty() &&
      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || !absl::SimpleAtoi(text, &value) || value > kMaxHoldTimeoutMs) {
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("bad hold timeout \"", text,
                     "\": want a number of milliseconds from 0 to ",
                     kMaxHoldTimeoutMs),
        "0 holds messages until someone acts; 30000 forwards a held "
        "message unchanged after 30 s");
  }
  return static_cast<uint32_t>(value);
}

std::string HoldTimeoutText(uint32_t ms) {
  if (ms == 0) return "never";
  return absl::StrCat(ms, " ms (",
                      absl::FormatDuration(absl::Milliseconds(ms)), ")");
}

std::string BreakpointCondition(const v1::Breakpoint& breakpoint) {
  std::vector<std::string> parts;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) {
      parts.push_back(absl::StrCat(key, "=", EscapeSpecValue(value)));
    }
  };
  add("server", breakpoint.server_id());
  add("session", breakpoint.session_id());
  if (breakpoint.direction() == v1::CLIENT_TO_SERVER) {
    parts.push_back("direction=c2s");
  } else if (breakpoint.direction() == v1::SERVER_TO_CLIENT) {
    parts.push_back("direction=s2c");
  }
  add("kind", breakpoint.kind());
  add("method", breakpoint.method());
  add("target", breakpoint.target());
  add("pattern", breakpoint.pattern());
  add("pointer", breakpoint.json_pointer());
  add("value", breakpoint.value());
  add("value_pattern", breakpoint.value_pattern());
  if (breakpoint.once()) parts.push_back("once");
  if (breakpoint.leave_unanswered()) parts.push_back("unanswered");
  if (parts.empty()) return "(anything)";
  return absl::StrJoin(parts, ",");
}

Table BreakpointsTable(
    const google::protobuf::RepeatedPtrField<v1::Breakpoint>& breakpoints) {
  Table table({"ID", "ON", "CONDITION", "HITS"});
  for (const v1::Breakpoint& breakpoint : breakpoints) {
    table.AddRow({breakpoint.id(), breakpoint.enabled() ? "yes" : "no",
                  BreakpointCondition(breakpoint),
                  absl::StrCat(breakpoint.hits())});
  }
  return table;
}

std::string DirectionMark(v1::Direction direction, bool symbols) {
  if (direction == v1::CLIENT_TO_SERVER) return symbols ? "→" : "out";
  if (direction == v1::SERVER_TO_CLIENT) return symbols ? "←" : "in";
  return "?";
}

std::string MessageSummary(const v1::McpMessage& message) {
  if (!message.method().empty()) {
    if (message.target().empty()) return message.method();
    return absl::StrCat(message.method(), " [", message.target(), "]");
  }
  if ((message.kind() == "response" || message.kind() == "error") &&
      !message.jsonrpc_id().empty()) {
    return absl::StrCat(message.kind(), " to ", message.jsonrpc_id());
  }
  return message.kind().empty() ? "-" : message.kind();
}

std::string AgeText(absl::Time since, absl::Time now) {
  int64_t seconds = absl::ToInt64Seconds(now - since);
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return absl::StrCat(seconds, "s");
  if (seconds < 3600) {
    return absl::StrFormat("%dm%02ds", seconds / 60, seconds % 60);
  }
  return absl::StrFormat("%dh%02dm", seconds / 3600, (seconds / 60) % 60);
}

Table HeldTable(const google::protobuf::RepeatedPtrField<v1::HeldMessage>& held,
                const ServerNames& names, absl::Time now, bool symbols) {
  Table table({"ID", "SERVER", "SESSION", "DIR", "MESSAGE", "AGE",
               "BREAKPOINT"});
  for (const v1::HeldMessage& entry : held) {
    const v1::McpMessage& message = entry.message();
    table.AddRow({entry.id(), names.Display(message.server_id()),
                  SessionShort(message.session_id()),
                  DirectionMark(message.direction(), symbols),
                  MessageSummary(message),
                  AgeText(absl::FromUnixMillis(
                              static_cast<int64_t>(entry.held_at())),
                          now),
                  entry.breakpoint_id().empty() ? "-" : entry.breakpoint_id()});
  }
  return table;
}

std::string ResolvedText(const v1::HeldMessage& held) {
  switch (held.action()) {
    case v1::FORWARD:
      return "forwarded";
    case v1::MODIFY:
      return "forwarded modified";
    case v1::DROP:
      return held.unanswered() ? "dropped (unanswered)" : "dropped";
    default:
      return "resolved";
  }
}

std::string HeldMessageForEditing(const v1::HeldMessage& held) {
  const std::string& raw = held.message().raw();
  nlohmann::json parsed = nlohmann::json::parse(raw, nullptr, false);
  if (parsed.is_discarded()) {
    return raw.empty() || raw.back() == '\n' ? raw : raw + "\n";
  }
  return PrettyJson(parsed);
}

bool EditUnchanged(const std::string& original, const std::string& edited) {
  return absl::StripAsciiWhitespace(original) ==
         absl::StripAsciiWhitespace(edited);
}

std::string ChooseEditor(const char* visual, const char* editor) {
  if (visual != nullptr && *visual != '\0') return visual;
  if (editor != nullptr && *editor != '\0') return editor;
  return "vi";
}

absl::StatusOr<std::string> EditInEditor(const std::string& editor,
                                         const std::string& text) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = absl::StrCat(
      tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
      "/inspectorctl-held-XXXXXX.json");
  int fd = mkstemps(path.data(), 5);
  if (fd < 0) {
    return LocalError(v1::INTERNAL_ERROR,
                      absl::StrCat("cannot create a temporary file for the "
                                   "editor in ",
                                   tmpdir != nullptr ? tmpdir : "/tmp"));
  }
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(fd);
  // The editor command is a shell word list ("code --wait"), as git and
  // crontab run it; the file name is passed as "$1" so it needs no quoting.
  pid_t pid = fork();
  if (pid == 0) {
    // inspectorctl blocks SIGINT, SIGTERM and SIGHUP in every thread (see
    // interrupts.h); the editor gets the usual signals back.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execl("/bin/sh", "sh", "-c", (editor + " \"$1\"").c_str(), "sh",
          path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int wait_status = 0;
  if (pid < 0 || waitpid(pid, &wait_status, 0) < 0) {
    unlink(path.c_str());
    return LocalError(v1::INTERNAL_ERROR,
                      absl::StrCat("cannot run the editor `", editor, "`"));
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  content << in.rdbuf();
  unlink(path.c_str());
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
    return LocalError(
        v1::INVALID_REQUEST,
        absl::StrCat("the editor `", editor, "` ",
                     WIFEXITED(wait_status)
                         ? absl::StrCat("exited with status ",
                                        WEXITSTATUS(wait_status))
                         : "was killed by a signal"),
        "set $VISUAL or $EDITOR to an editor that waits until the file is "
        "closed (for example `code --wait`); nothing was sent");
  }
  return content.str();
}

absl::Status NotAvailableIfUnimplemented(absl::Status status,
                                         const std::string& what) {
  if (status.code() != absl::StatusCode::kUnimplemented) return status;
  return LocalError(
      v1::NOT_IMPLEMENTED,
      absl::StrCat("not available: the daemon does not support ", what,
                   " yet"),
      "`inspectorctl status` shows its version; README's status table says "
      "what is built");
}

}  // namespace inspector::cli
