#include "server/engine/json_rpc.h"

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_scan.h"
#include "common/json_valid.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"

namespace inspector::engine {
namespace {

using nlohmann::json;

using json_scan::Member;
using json_scan::ScanObject;
using json_scan::SkipSpace;
using json_scan::SkipString;
using json_scan::SkipValue;

std::optional<std::string_view> Find(std::string_view s,
                                     const std::vector<Member>& members,
                                     std::string_view key) {
  // The last duplicate wins, as in most JSON parsers.
  std::optional<std::string_view> found;
  for (const Member& m : members) {
    if (m.key == key) found = s.substr(m.begin, m.end - m.begin);
  }
  return found;
}

// The string value of a JSON string, or "" if `text` is not a string.
// `text` is valid JSON (every caller holds a value of text IsValidJson
// passed), so a string without an escape is its text between the quotes.
std::string StringValue(std::string_view text) {
  if (text.empty() || text.front() != '"') return "";
  if (text.find('\\') == std::string_view::npos) {
    return std::string(text.substr(1, text.size() - 2));
  }
  json parsed = json::parse(text, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_string()) return "";
  return parsed.get<std::string>();
}

std::optional<std::string_view> FindPath(
    std::string_view s, std::initializer_list<std::string_view> path) {
  std::string_view current = s;
  for (std::string_view key : path) {
    auto next = Find(current, ScanObject(current), key);
    if (!next) return std::nullopt;
    current = *next;
  }
  return current;
}

void FillTarget(std::string_view params, MessageInfo* info) {
  const std::string& m = info->method;
  if (m == "tools/call" || m == "prompts/get") {
    if (auto name = FindPath(params, {"name"}))
      info->target = StringValue(*name);
  } else if (m == "resources/read" || m == "resources/subscribe" ||
             m == "resources/unsubscribe" || m == "skills/get" ||
             m == "resources/directory/read" ||
             m == "notifications/resources/updated") {
    if (auto uri = FindPath(params, {"uri"})) info->target = StringValue(*uri);
  } else if (m == "completion/complete") {
    if (auto name = FindPath(params, {"ref", "name"})) {
      info->target = StringValue(*name);
    } else if (auto uri = FindPath(params, {"ref", "uri"})) {
      info->target = StringValue(*uri);
    }
  } else if (m == "tasks/get" || m == "tasks/update" || m == "tasks/cancel") {
    if (auto id = FindPath(params, {"taskId"})) info->target = StringValue(*id);
  } else if (m == "notifications/message") {
    if (auto level = FindPath(params, {"level"})) {
      info->level = StringValue(*level);
    }
  }
  if (info->kind == MessageKind::kRequest) {
    if (auto token = FindPath(params, {"_meta", "progressToken"})) {
      info->progress_token = std::string(*token);
    }
  } else if (m == "notifications/progress") {
    if (auto token = FindPath(params, {"progressToken"})) {
      info->progress_token = std::string(*token);
    }
  } else if (m == "notifications/cancelled") {
    if (auto id = FindPath(params, {"requestId"})) {
      info->cancelled_request_id = std::string(*id);
    }
  }
}

}  // namespace

const char* KindName(MessageKind kind) {
  switch (kind) {
    case MessageKind::kRequest:
      return "request";
    case MessageKind::kNotification:
      return "notification";
    case MessageKind::kResponse:
      return "response";
    case MessageKind::kError:
      return "error";
    case MessageKind::kBatch:
      return "batch";
    case MessageKind::kInvalid:
      return "invalid";
  }
  return "invalid";
}

absl::StatusOr<MessageInfo> InspectMessage(std::string_view raw) {
  if (!json_scan::IsValidJson(raw)) {
    return Error(v1::PROTOCOL_ERROR,
                 absl::StrCat("not valid JSON: ", QuoteInput(raw, 120)));
  }
  MessageInfo info;
  size_t start = SkipSpace(raw, 0);
  if (start < raw.size() && raw[start] == '[') {
    info.kind = MessageKind::kBatch;
    return info;
  }
  std::vector<Member> members = ScanObject(raw);
  std::optional<std::string_view> id, method, params, result, error;
  for (const Member& m : members) {
    std::string_view value = raw.substr(m.begin, m.end - m.begin);
    if (m.key == "id") {
      id = value;
      info.id_offset = m.begin;
      info.id_length = m.end - m.begin;
    } else if (m.key == "method") {
      method = value;
    } else if (m.key == "params") {
      params = value;
    } else if (m.key == "result") {
      result = value;
    } else if (m.key == "error") {
      error = value;
    } else if (m.key == "jsonrpc") {
      info.jsonrpc_2_0 = StringValue(value) == "2.0";
    }
  }
  if (id) info.id = std::string(*id);
  if (method) {
    info.method = StringValue(*method);
    if (info.method.empty()) return info;  // kInvalid: method not a string
    info.kind = id ? MessageKind::kRequest : MessageKind::kNotification;
    if (params) FillTarget(*params, &info);
  } else if (error) {
    info.kind = MessageKind::kError;
    if (auto code = FindPath(*error, {"code"})) info.error_code = std::string(*code);
  } else if (result && id) {
    info.kind = MessageKind::kResponse;
  }
  return info;
}

std::string ReplaceId(std::string_view raw, const MessageInfo& info,
                      std::string_view new_id_json) {
  std::string out;
  out.reserve(raw.size() + new_id_json.size());
  out.append(raw.substr(0, info.id_offset));
  out.append(new_id_json);
  out.append(raw.substr(info.id_offset + info.id_length));
  return out;
}

std::optional<std::vector<std::string>> PointerTokens(
    std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') return std::nullopt;
  size_t start = 1;
  while (true) {
    size_t end = pointer.find('/', start);
    std::string_view raw = pointer.substr(
        start, end == std::string_view::npos ? std::string_view::npos
                                             : end - start);
    std::string token;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '~') {
        token.push_back(raw[i]);
      } else if (i + 1 < raw.size() && (raw[i + 1] == '0' || raw[i + 1] == '1')) {
        token.push_back(raw[++i] == '0' ? '~' : '/');
      } else {
        return std::nullopt;  // "~" must be "~0" or "~1"
      }
    }
    tokens.push_back(std::move(token));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return tokens;
}

std::optional<std::string_view> FindByPointer(
    std::string_view raw, const std::vector<std::string>& tokens) {
  size_t begin = SkipSpace(raw, 0);
  size_t end = SkipValue(raw, begin);
  if (end == std::string_view::npos) return std::nullopt;
  for (const std::string& token : tokens) {
    if (raw[begin] == '{') {
      bool found = false;
      size_t found_begin = 0, found_end = 0;
      size_t i = SkipSpace(raw, begin + 1);
      while (i < end && raw[i] == '"') {
        const size_t key_end = SkipString(raw, i);
        if (key_end == std::string_view::npos) return std::nullopt;
        const std::string_view quoted = raw.substr(i, key_end - i);
        i = SkipSpace(raw, key_end);
        if (i >= end || raw[i] != ':') return std::nullopt;
        i = SkipSpace(raw, i + 1);
        const size_t value_end = SkipValue(raw, i);
        if (value_end == std::string_view::npos) return std::nullopt;
        // An escaped key ("\u0070ath") is decoded.
        if (StringValue(quoted) == token) {  // the last duplicate wins, as when parsed
          found = true;
          found_begin = i;
          found_end = value_end;
        }
        i = SkipSpace(raw, value_end);
        if (i < end && raw[i] == ',') i = SkipSpace(raw, i + 1);
      }
      if (!found) return std::nullopt;
      begin = found_begin;
      end = found_end;
    } else if (raw[begin] == '[') {
      if (token.empty() || token.size() > 18 ||
          (token.size() > 1 && token[0] == '0') ||
          token.find_first_not_of("0123456789") != std::string::npos) {
        return std::nullopt;  // not an index (or "-", past the end)
      }
      size_t index = std::stoull(token);
      size_t i = SkipSpace(raw, begin + 1);
      while (true) {
        if (i >= end || raw[i] == ']') return std::nullopt;
        const size_t value_end = SkipValue(raw, i);
        if (value_end == std::string_view::npos) return std::nullopt;
        if (index == 0) {
          begin = i;
          end = value_end;
          break;
        }
        --index;
        i = SkipSpace(raw, value_end);
        if (i < end && raw[i] == ',') i = SkipSpace(raw, i + 1);
      }
    } else {
      return std::nullopt;  // a scalar has nothing inside
    }
  }
  return raw.substr(begin, end - begin);
}

std::string JsonQuote(std::string_view text) {
  return json(std::string(text)).dump(-1, ' ', false,
                                     json::error_handler_t::replace);
}

std::string UnquoteJson(std::string_view json_text) {
  if (!json_text.empty() && json_text.front() == '"') {
    std::string value = StringValue(json_text);
    return value;
  }
  return std::string(json_text);
}

}  // namespace inspector::engine
