#include "clients/cli/pending_views.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/json_values.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

using nlohmann::json;

// Below this a daemon time is taken as seconds (see the header).
constexpr double kMillisecondsThreshold = 1e11;

std::string BlockText(const json& block) {
  if (!block.is_object()) return "";
  const auto type = block.find("type");
  if (type == block.end() || !type->is_string()) return "";
  if (*type == "text") {
    const auto text = block.find("text");
    return text != block.end() && text->is_string() ? text->get<std::string>()
                                                    : "";
  }
  if (*type == "tool_result") return "[tool result]";
  if (*type == "tool_use") return "[tool use]";
  return absl::StrCat("[", type->get<std::string>(), "]");
}

std::string ContentText(const json& content) {
  if (content.is_array()) {
    std::vector<std::string> parts;
    for (const json& block : content) {
      std::string text = BlockText(block);
      if (!text.empty()) parts.push_back(std::move(text));
    }
    return absl::StrJoin(parts, " ");
  }
  return BlockText(content);
}

std::string SamplingSummary(const json& params) {
  const auto messages = params.find("messages");
  if (messages == params.end() || !messages->is_array() || messages->empty()) {
    return "-";
  }
  const json* chosen = &messages->back();
  for (auto it = messages->rbegin(); it != messages->rend(); ++it) {
    if (it->is_object() && it->contains("role") && (*it)["role"] == "user") {
      chosen = &*it;
      break;
    }
  }
  if (!chosen->is_object() || !chosen->contains("content")) return "-";
  std::string text = ContentText((*chosen)["content"]);
  return text.empty() ? "-" : text;
}

std::string ElicitationSummary(const json& params) {
  std::string summary;
  if (auto message = params.find("message");
      message != params.end() && message->is_string()) {
    summary = message->get<std::string>();
  }
  if (auto url = params.find("url"); url != params.end() && url->is_string()) {
    absl::StrAppend(&summary, summary.empty() ? "" : " ", "(open ",
                    url->get<std::string>(), ")");
  }
  return summary.empty() ? "-" : summary;
}

std::string Age(const v1::PendingRequest& item, absl::Time now) {
  if (item.received_at() <= 0) return "-";
  const absl::Duration age = now - PendingTime(item.received_at());
  if (age < absl::ZeroDuration()) return "0s";
  return FormatDuration(static_cast<uint64_t>(absl::ToInt64Seconds(age)));
}

bool IsHexDigit(char c) {
  return absl::ascii_isxdigit(static_cast<unsigned char>(c));
}

// `path` with ".", ".." and repeated slashes removed; absolute.
std::string NormalizePath(std::string_view path) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(AbslView(path), '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  return "/" + absl::StrJoin(parts, "/");
}

std::string PercentEncodePath(std::string_view path) {
  static constexpr std::string_view kSafe = "-._~!$&'()*+,;:@/";
  std::string out;
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (absl::ascii_isalnum(u) || kSafe.find(c) != std::string_view::npos) {
      out += c;
    } else {
      absl::StrAppend(&out, "%", absl::StrFormat("%02X", u));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::PendingKind> ParsePendingKind(std::string_view text) {
  if (text == "sampling") return v1::SAMPLING;
  if (text == "elicitation") return v1::ELICITATION;
  if (text == "roots") return v1::ROOTS;
  return UsageError(absl::StrCat("unknown kind \"", AbslView(text), "\""),
                    "kinds: sampling, elicitation, roots");
}

std::string PendingKindName(v1::PendingKind kind) {
  if (kind == v1::PENDING_KIND_UNSPECIFIED) return "?";
  return absl::AsciiStrToLower(v1::PendingKind_Name(kind));
}

std::string PendingStatusName(v1::PendingStatus status) {
  if (status == v1::PENDING_STATUS_UNSPECIFIED) return "pending";
  return absl::AsciiStrToLower(v1::PendingStatus_Name(status));
}

absl::Time PendingTime(double value) {
  if (value == 0 || !std::isfinite(value)) return absl::InfinitePast();
  if (std::fabs(value) < kMillisecondsThreshold) {
    return absl::FromUnixMillis(static_cast<int64_t>(value * 1000));
  }
  return absl::FromUnixMillis(static_cast<int64_t>(value));
}

std::string PendingSummary(const v1::PendingRequest& item) {
  const json params = StructToJson(item.params());
  switch (item.kind()) {
    case v1::SAMPLING:
      return SamplingSummary(params);
    case v1::ELICITATION:
      return ElicitationSummary(params);
    default:
      break;
  }
  if (item.method() == "sampling/createMessage") return SamplingSummary(params);
  if (item.method() == "elicitation/create") return ElicitationSummary(params);
  return "-";
}

std::string PendingTimeLeft(const v1::PendingRequest& item, absl::Time now) {
  if (item.status() != v1::PENDING &&
      item.status() != v1::PENDING_STATUS_UNSPECIFIED) {
    return PendingStatusName(item.status());
  }
  if (item.deadline() <= 0) return "-";
  const absl::Duration left = PendingTime(item.deadline()) - now;
  if (left <= absl::ZeroDuration()) return "expired";
  // Rounded up: "0s" would read as expired.
  return FormatDuration(
      static_cast<uint64_t>(std::ceil(absl::ToDoubleSeconds(left))));
}

Table PendingTable(const std::vector<v1::PendingRequest>& items,
                   const ServerNames& names, absl::Time now) {
  Table table(
      {"ID", "SERVER", "KIND", "METHOD", "AGE", "TIME LEFT", "SUMMARY"});
  for (const v1::PendingRequest& item : items) {
    table.AddRow({ShortId(item.id()), names.Display(item.server_id()),
                  PendingKindName(item.kind()), item.method(), Age(item, now),
                  PendingTimeLeft(item, now), OneLine(PendingSummary(item))});
  }
  return table;
}

std::string PendingLine(const v1::PendingRequest& item,
                        const ServerNames& names, absl::Time at, absl::Time now,
                        absl::TimeZone zone) {
  std::string left = PendingTimeLeft(item, now);
  if (left != "-" && left != "expired" &&
      (item.status() == v1::PENDING ||
       item.status() == v1::PENDING_STATUS_UNSPECIFIED)) {
    absl::StrAppend(&left, " left");
  }
  std::string status = PendingStatusName(item.status());
  status.resize(std::max<size_t>(status.size(), 8), ' ');
  return SanitizeForTerminal(absl::StrCat(
      FormatClock(static_cast<double>(absl::ToUnixMillis(at)), zone), "  ",
      status, "  ", ShortId(item.id()), "  ", names.Display(item.server_id()),
      "  ", PendingKindName(item.kind()), "  ", item.method(), "  ", left, "  ",
      OneLine(PendingSummary(item))));
}

absl::StatusOr<const v1::PendingRequest*> FindPending(
    const std::vector<v1::PendingRequest>& items, std::string_view id) {
  if (id.empty()) return UsageError("the pending request id is empty");
  for (const v1::PendingRequest& item : items) {
    if (item.id() == id) return &item;
  }
  std::vector<const v1::PendingRequest*> matches;
  for (const v1::PendingRequest& item : items) {
    if (absl::StartsWith(item.id(), AbslView(id))) matches.push_back(&item);
  }
  if (matches.empty()) return nullptr;
  if (matches.size() == 1) return matches.front();
  std::vector<std::string> ids;
  for (const v1::PendingRequest* match : matches) ids.push_back(match->id());
  return UsageError(
      absl::StrCat("\"", AbslView(id), "\" matches ", matches.size(),
                   " pending requests: ", absl::StrJoin(ids, ", ")),
      "give more of the id");
}

absl::StatusOr<v1::Root> ParseRootArgument(std::string_view word,
                                           std::string_view cwd) {
  std::string_view location = word;
  std::string name;
  if (const size_t eq = word.find('='); eq != std::string_view::npos) {
    location = word.substr(0, eq);
    name = std::string(word.substr(eq + 1));
  }
  if (location.empty()) {
    return UsageError(absl::StrCat("invalid root \"", AbslView(word),
                                   "\": no URI or path before \"=\""),
                      "write file:///path[=NAME] or a local path");
  }
  v1::Root root;
  root.set_name(name);
  const size_t scheme_end = location.find("://");
  if (scheme_end != std::string_view::npos) {
    if (!absl::EqualsIgnoreCase(AbslView(location.substr(0, scheme_end)),
                                "file")) {
      return UsageError(
          absl::StrCat("invalid root \"", AbslView(word),
                       "\": MCP roots are file:// URIs"),
          "write file:///path[=NAME], or a local path such as ./project");
    }
    for (size_t i = 0; i < location.size(); ++i) {
      const auto c = static_cast<unsigned char>(location[i]);
      const bool bad_escape = c == '%' && (i + 2 >= location.size() ||
                                           !IsHexDigit(location[i + 1]) ||
                                           !IsHexDigit(location[i + 2]));
      if (c <= 0x20 || c == 0x7F || c >= 0x80 || bad_escape) {
        return UsageError(
            absl::StrCat("invalid root \"", AbslView(word),
                         "\": a URI cannot hold spaces, control or non-ASCII "
                         "characters, or bare %"),
            "give the local path instead and it is encoded for you");
      }
    }
    root.set_uri(
        absl::StrCat("file://", AbslView(location.substr(scheme_end + 3))));
    return root;
  }
  std::string path(location);
  if (path[0] != '/') {
    if (cwd.empty() || cwd[0] != '/') {
      return UsageError(absl::StrCat("cannot make \"", path,
                                     "\" absolute: the working directory is "
                                     "unknown"),
                        "give an absolute path");
    }
    path = absl::StrCat(AbslView(cwd), "/", path);
  }
  root.set_uri(absl::StrCat("file://", PercentEncodePath(NormalizePath(path))));
  return root;
}

Table RootsTable(const v1::Roots& roots) {
  Table table({"URI", "NAME"});
  for (const v1::Root& root : roots.roots()) {
    table.AddRow({root.uri(), root.name()});
  }
  return table;
}

nlohmann::json SamplingTextResult(std::string_view text,
                                  std::string_view model) {
  return json{{"role", "assistant"},
              {"content", {{"type", "text"}, {"text", std::string(text)}}},
              {"model", std::string(model)},
              {"stopReason", "endTurn"}};
}

}  // namespace inspector::cli
