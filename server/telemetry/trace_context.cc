#include "server/telemetry/trace_context.h"

#include <algorithm>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_scan.h"
#include "nlohmann/json.hpp"

namespace inspector::telemetry {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase is not allowed either
}

// Reads 2 * size lowercase hex digits into `out`; false on anything else.
bool ReadHex(std::string_view text, uint8_t* out, size_t size) {
  if (text.size() != size * 2) return false;
  for (size_t i = 0; i < size; ++i) {
    const int high = HexDigit(text[2 * i]);
    const int low = HexDigit(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

template <size_t N>
bool AllZero(const std::array<uint8_t, N>& bytes) {
  for (uint8_t b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

std::mt19937_64& Generator() {
  thread_local std::mt19937_64 generator([] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }());
  return generator;
}

template <size_t N>
std::array<uint8_t, N> RandomNonZero() {
  std::array<uint8_t, N> bytes{};
  do {
    for (size_t i = 0; i < N; i += 8) {
      uint64_t word = Generator()();
      for (size_t j = 0; j < 8 && i + j < N; ++j) {
        bytes[i + j] = static_cast<uint8_t>(word >> (8 * j));
      }
    }
  } while (AllZero(bytes));
  return bytes;
}

constexpr size_t kMaxTraceStateChars = 512;

}  // namespace

std::string Hex(const uint8_t* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

std::string TraceContext::Traceparent() const {
  const uint8_t flag_byte = flags;
  return "00-" + Hex(trace_id) + "-" + Hex(span_id) + "-" +
         Hex(&flag_byte, 1);
}

std::optional<TraceContext> ParseTraceparent(std::string_view text,
                                             std::string_view trace_state) {
  // version "-" trace-id "-" parent-id "-" flags: 2+1+32+1+16+1+2 = 55.
  if (text.size() < 55 || text[2] != '-' || text[35] != '-' ||
      text[52] != '-') {
    return std::nullopt;
  }
  uint8_t version = 0;
  if (!ReadHex(text.substr(0, 2), &version, 1) || version == 0xff) {
    return std::nullopt;
  }
  // Version 00 is exactly 55 characters; a later version may add fields
  // after another dash.
  if (version == 0 ? text.size() != 55
                   : text.size() > 55 && text[55] != '-') {
    return std::nullopt;
  }
  TraceContext context;
  if (!ReadHex(text.substr(3, 32), context.trace_id.data(), 16) ||
      !ReadHex(text.substr(36, 16), context.span_id.data(), 8) ||
      !ReadHex(text.substr(53, 2), &context.flags, 1) ||
      AllZero(context.trace_id) || AllZero(context.span_id)) {
    return std::nullopt;
  }
  if (trace_state.size() <= kMaxTraceStateChars) {
    context.trace_state = std::string(trace_state);
  }
  return context;
}

namespace {

// One object of a request's text, by its members as json_scan reads them,
// with offsets into the whole text.
struct ScannedObject {
  size_t open = 0;   // its '{'
  size_t close = 0;  // its '}'
  std::vector<json_scan::Member> members;
};

// The object whose '{' is at raw[open], when its members read cleanly up
// to its closing brace and none of their keys is escaped (a key written
// with escapes could name a member the text search would miss).
std::optional<ScannedObject> ScanAt(std::string_view raw, size_t open) {
  if (open >= raw.size() || raw[open] != '{') return std::nullopt;
  // One pass: the members, then the brace just after the last of them.
  ScannedObject object;
  object.open = open;
  bool escaped_key = false;
  size_t after = json_scan::SkipSpace(raw, open + 1);
  json_scan::ForEachMember(
      raw.substr(open), [&](const json_scan::Member& found) {
        if (found.key.find('\\') != std::string_view::npos) {
          escaped_key = true;
          return false;
        }
        json_scan::Member member = found;
        member.begin += open;
        member.end += open;
        object.members.push_back(member);
        after = json_scan::SkipSpace(raw, member.end);
        if (after < raw.size() && raw[after] == ',') {
          after = json_scan::SkipSpace(raw, after + 1);
        }
        return true;
      });
  // A key with escapes, or a member not read.
  if (escaped_key || after >= raw.size() || raw[after] != '}') {
    return std::nullopt;
  }
  object.close = after;
  return object;
}

// The last member `key` (the one JSON parsers keep), or null.
const json_scan::Member* Find(const ScannedObject& object,
                              std::string_view key) {
  const json_scan::Member* found = nullptr;
  for (const json_scan::Member& member : object.members) {
    if (member.key == key) found = &member;
  }
  return found;
}

// The text of a string member without its quotes, when it has no escapes
// (a traceparent never needs one); nullopt otherwise.
std::optional<std::string_view> PlainString(std::string_view raw,
                                            const json_scan::Member& member) {
  std::string_view value = raw.substr(member.begin, member.end - member.begin);
  if (value.size() < 2 || value.front() != '"' ||
      value.find('\\') != std::string_view::npos) {
    return std::nullopt;
  }
  return value.substr(1, value.size() - 2);
}

// The slow path for texts the scan does not take: a whole parse.
std::optional<TraceContext> ParsedTraceContext(std::string_view raw) {
  const nlohmann::json message = nlohmann::json::parse(raw, nullptr, false);
  if (!message.is_object()) return std::nullopt;
  const auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return std::nullopt;
  const auto meta = params->find("_meta");
  if (meta == params->end() || !meta->is_object()) return std::nullopt;
  const auto parent = meta->find("traceparent");
  if (parent == meta->end() || !parent->is_string()) return std::nullopt;
  std::string state;
  const auto state_value = meta->find("tracestate");
  if (state_value != meta->end() && state_value->is_string()) {
    state = state_value->get<std::string>();
  }
  return ParseTraceparent(parent->get<std::string>(), state);
}

std::string ParsedWithTraceContext(std::string_view raw,
                                   const TraceContext& context) {
  nlohmann::json message = nlohmann::json::parse(raw, nullptr, false);
  if (!message.is_object()) return std::string(raw);
  nlohmann::json& params = message["params"];
  if (!params.is_object()) {
    if (!params.is_null()) return std::string(raw);
    params = nlohmann::json::object();
  }
  nlohmann::json& meta = params["_meta"];
  if (!meta.is_object()) meta = nlohmann::json::object();
  meta["traceparent"] = context.Traceparent();
  if (context.trace_state.empty()) {
    meta.erase("tracestate");
  } else {
    meta["tracestate"] = context.trace_state;
  }
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// `"traceparent":"…"` (and `"tracestate":"…"`) as members' text.
std::string ContextMembers(const TraceContext& context) {
  std::string text = "\"traceparent\":\"" + context.Traceparent() + "\"";
  if (!context.trace_state.empty()) {
    text += ",\"tracestate\":";
    text += nlohmann::json(context.trace_state)
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return text;
}

// `raw` with [begin, end) replaced by `text`.
std::string Replaced(std::string_view raw, size_t begin, size_t end,
                     std::string_view text) {
  std::string out;
  out.reserve(raw.size() - (end - begin) + text.size());
  out.append(raw.substr(0, begin));
  out.append(text);
  out.append(raw.substr(end));
  return out;
}

// `raw` with `text` inserted at `at`.
std::string Spliced(std::string_view raw, size_t at, std::string_view text) {
  return Replaced(raw, at, at, text);
}

}  // namespace

std::optional<TraceContext> TraceContextFromMeta(std::string_view raw) {
  if (raw.find("traceparent") == std::string_view::npos) return std::nullopt;
  // Read in place where the text allows: params._meta's two strings.
  const auto message = ScanAt(raw, json_scan::SkipSpace(raw, 0));
  if (!message.has_value()) return ParsedTraceContext(raw);
  const json_scan::Member* params = Find(*message, "params");
  if (params == nullptr) return std::nullopt;
  const auto params_object = ScanAt(raw, params->begin);
  if (!params_object.has_value()) return ParsedTraceContext(raw);
  const json_scan::Member* meta = Find(*params_object, "_meta");
  if (meta == nullptr) return std::nullopt;
  const auto meta_object = ScanAt(raw, meta->begin);
  if (!meta_object.has_value()) return ParsedTraceContext(raw);
  const json_scan::Member* parent = Find(*meta_object, "traceparent");
  if (parent == nullptr) return std::nullopt;
  const json_scan::Member* state = Find(*meta_object, "tracestate");
  const std::optional<std::string_view> parent_text = PlainString(raw, *parent);
  std::optional<std::string_view> state_text;
  if (state != nullptr) state_text = PlainString(raw, *state);
  if (!parent_text.has_value() || (state != nullptr && !state_text)) {
    return ParsedTraceContext(raw);  // escapes, or not strings
  }
  return ParseTraceparent(*parent_text, state_text.value_or(""));
}

std::string WithTraceContextInMeta(std::string_view raw,
                                   const TraceContext& context) {
  // Spliced into the text where it can be: the request goes on as it came
  // but for the new members, and costs no parse of its payload.
  const auto message = ScanAt(raw, json_scan::SkipSpace(raw, 0));
  if (!message.has_value()) return ParsedWithTraceContext(raw, context);
  const std::string members = ContextMembers(context);
  const json_scan::Member* params = Find(*message, "params");
  if (params == nullptr) {
    return Spliced(raw, message->close,
                   absl::StrCat(message->members.empty() ? "" : ",",
                                "\"params\":{\"_meta\":{", members, "}}"));
  }
  if (raw.substr(params->begin, params->end - params->begin) == "null") {
    return Replaced(raw, params->begin, params->end,
                    absl::StrCat("{\"_meta\":{", members, "}}"));
  }
  const auto params_object = ScanAt(raw, params->begin);
  if (!params_object.has_value()) return ParsedWithTraceContext(raw, context);
  const json_scan::Member* meta = Find(*params_object, "_meta");
  if (meta == nullptr) {
    return Spliced(raw, params_object->open + 1,
                   absl::StrCat("\"_meta\":{", members, "}",
                                params_object->members.empty() ? "" : ","));
  }
  if (raw[meta->begin] != '{') {  // not an object: replaced by ours
    return Replaced(raw, meta->begin, meta->end,
                    absl::StrCat("{", members, "}"));
  }
  const auto meta_object = ScanAt(raw, meta->begin);
  if (!meta_object.has_value()) return ParsedWithTraceContext(raw, context);
  if (Find(*meta_object, "traceparent") || Find(*meta_object, "tracestate")) {
    // The caller's context gives way to ours: only _meta is parsed again.
    nlohmann::json meta_json = nlohmann::json::parse(
        raw.substr(meta->begin, meta->end - meta->begin), nullptr, false);
    if (!meta_json.is_object()) return ParsedWithTraceContext(raw, context);
    meta_json["traceparent"] = context.Traceparent();
    if (context.trace_state.empty()) {
      meta_json.erase("tracestate");
    } else {
      meta_json["tracestate"] = context.trace_state;
    }
    return Replaced(raw, meta->begin, meta->end,
                    meta_json.dump(-1, ' ', false,
                                   nlohmann::json::error_handler_t::replace));
  }
  return Spliced(raw, meta_object->open + 1,
                 absl::StrCat(members,
                              meta_object->members.empty() ? "" : ","));
}

TraceId NewTraceId(absl::Time now) {
  TraceId id = RandomNonZero<16>();
  const int64_t millis = std::max<int64_t>(0, absl::ToUnixMillis(now));
  for (size_t i = 0; i < 6; ++i) {
    id[i] = static_cast<uint8_t>(millis >> (8 * (5 - i)));
  }
  return id;
}
SpanId NewSpanId() { return RandomNonZero<8>(); }

bool IsTraceIdHex(std::string_view text) {
  TraceId id{};
  return ReadHex(text, id.data(), id.size()) && !AllZero(id);
}

}  // namespace inspector::telemetry
