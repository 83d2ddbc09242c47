#include "server/telemetry/trace_context.h"

#include <algorithm>
#include <random>

#include "common/json_scan.h"
#include "common/json_text.h"
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

namespace {

// Appends 2 * size lowercase hex digits.
void AppendHex(const uint8_t* bytes, size_t size, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const size_t at = out->size();
  out->resize(at + size * 2);
  char* digits = out->data() + at;
  for (size_t i = 0; i < size; ++i) {
    digits[2 * i] = kDigits[bytes[i] >> 4];
    digits[2 * i + 1] = kDigits[bytes[i] & 15];
  }
}

// version "-" trace-id "-" parent-id "-" flags: 2+1+32+1+16+1+2.
constexpr size_t kTraceparentChars = 55;

void AppendTraceparent(const TraceContext& context, std::string* out) {
  const uint8_t flag_byte = context.flags;
  out->append("00-");
  AppendHex(context.trace_id.data(), context.trace_id.size(), out);
  out->push_back('-');
  AppendHex(context.span_id.data(), context.span_id.size(), out);
  out->push_back('-');
  AppendHex(&flag_byte, 1, out);
}

}  // namespace

std::string Hex(const uint8_t* bytes, size_t size) {
  std::string out;
  AppendHex(bytes, size, &out);
  return out;
}

std::string TraceContext::Traceparent() const {
  std::string out;
  out.reserve(kTraceparentChars);
  AppendTraceparent(*this, &out);
  return out;
}

std::optional<TraceContext> ParseTraceparent(std::string_view text,
                                             std::string_view trace_state) {
  if (text.size() < kTraceparentChars || text[2] != '-' || text[35] != '-' ||
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

constexpr size_t kNone = std::string_view::npos;

// A value's span [begin, end) in a message's text; begin kNone: absent.
struct ValueSpan {
  size_t begin = kNone;
  size_t end = kNone;
  bool found() const { return begin != kNone; }
};

// One object's place in the text: its closing brace and whether it has
// members (where a splice needs a comma).
struct ObjectSpan {
  size_t close = kNone;
  bool empty = true;
};

// Where a request keeps its trace context: the last "params" member (the
// one JSON parsers keep), its last "_meta" and that one's last
// "traceparent" and "tracestate", found in one pass over the text.
struct MetaPlace {
  ObjectSpan message;
  ValueSpan params;
  ObjectSpan params_object;  // when params is an object
  ValueSpan meta;
  ObjectSpan meta_object;  // when _meta is an object
  ValueSpan parent;
  ValueSpan state;
};

// nullopt when the text does not read cleanly that way, or a key on the
// way is written with escapes (it could name a member this search would
// miss): the callers then parse the whole text.
std::optional<MetaPlace> LocateMeta(std::string_view raw) {
  MetaPlace place;
  bool escaped_key = false;
  auto plain = [&escaped_key](std::string_view key) {
    if (key.find('\\') == std::string_view::npos) return true;
    escaped_key = true;
    return false;
  };
  // Each level reads the object below it in the same pass, where the
  // enclosing level would otherwise skip over it.
  auto object_at = [&raw](size_t begin, ObjectSpan* object, auto&& read) {
    *object = ObjectSpan();
    if (raw[begin] != '{') return json_scan::SkipValue(raw, begin);
    object->close = json_scan::ReadMembersAt(raw, begin, read);
    return object->close == kNone ? kNone : object->close + 1;
  };
  auto meta_member = [&](std::string_view key, size_t begin) {
    if (!plain(key)) return kNone;
    place.meta_object.empty = false;
    const size_t end = json_scan::SkipValue(raw, begin);
    if (key == "traceparent") place.parent = {begin, end};
    if (key == "tracestate") place.state = {begin, end};
    return end;
  };
  auto params_member = [&](std::string_view key, size_t begin) {
    if (!plain(key)) return kNone;
    place.params_object.empty = false;
    if (key != "_meta") return json_scan::SkipValue(raw, begin);
    place.parent = place.state = ValueSpan();
    place.meta = {begin, object_at(begin, &place.meta_object, meta_member)};
    return place.meta.end;
  };
  auto message_member = [&](std::string_view key, size_t begin) {
    if (!plain(key)) return kNone;
    place.message.empty = false;
    if (key != "params") return json_scan::SkipValue(raw, begin);
    place.meta = place.parent = place.state = ValueSpan();
    place.params = {begin,
                    object_at(begin, &place.params_object, params_member)};
    return place.params.end;
  };
  place.message.close = json_scan::ReadMembersAt(
      raw, json_scan::SkipSpace(raw, 0), message_member);
  if (place.message.close == kNone || escaped_key) return std::nullopt;
  return place;
}

// The text of a string value without its quotes, when it has no escapes
// (a traceparent never needs one); nullopt otherwise.
std::optional<std::string_view> PlainString(std::string_view raw,
                                            const ValueSpan& span) {
  std::string_view value = raw.substr(span.begin, span.end - span.begin);
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

// `raw` with [begin, end) replaced by `before`, the context's members
// (`"traceparent":"…"` and `"tracestate":"…"`) and `after`, written once.
std::string WithMembers(std::string_view raw, size_t begin, size_t end,
                        std::string_view before, const TraceContext& context,
                        std::string_view after) {
  std::string out;
  out.reserve(raw.size() - (end - begin) + before.size() + after.size() +
              kTraceparentChars + context.trace_state.size() + 32);
  out.append(raw.substr(0, begin));
  out.append(before);
  out.append("\"traceparent\":\"");
  AppendTraceparent(context, &out);
  out.push_back('"');
  if (!context.trace_state.empty()) {
    out.append(",\"tracestate\":");
    AppendJsonString(&out, context.trace_state);
  }
  out.append(after);
  out.append(raw.substr(end));
  return out;
}

}  // namespace

std::optional<TraceContext> TraceContextFromMeta(std::string_view raw) {
  if (raw.find("traceparent") == std::string_view::npos) return std::nullopt;
  // Read in place where the text allows: params._meta's two strings.
  const std::optional<MetaPlace> place = LocateMeta(raw);
  if (!place.has_value()) return ParsedTraceContext(raw);
  if (!place->parent.found()) return std::nullopt;
  const std::optional<std::string_view> parent_text =
      PlainString(raw, place->parent);
  std::optional<std::string_view> state_text;
  if (place->state.found()) state_text = PlainString(raw, place->state);
  if (!parent_text.has_value() || (place->state.found() && !state_text)) {
    return ParsedTraceContext(raw);  // escapes, or not strings
  }
  return ParseTraceparent(*parent_text, state_text.value_or(""));
}

std::string WithTraceContextInMeta(std::string_view raw,
                                   const TraceContext& context) {
  // Spliced into the text where it can be: the request goes on as it came
  // but for the new members, and costs no parse of its payload (one pass
  // over its text finds where they go).
  const std::optional<MetaPlace> place = LocateMeta(raw);
  if (!place.has_value()) return ParsedWithTraceContext(raw, context);
  const ValueSpan& params = place->params;
  if (!params.found()) {
    const size_t at = place->message.close;
    return WithMembers(raw, at, at,
                       place->message.empty ? "\"params\":{\"_meta\":{"
                                            : ",\"params\":{\"_meta\":{",
                       context, "}}");
  }
  if (raw.substr(params.begin, params.end - params.begin) == "null") {
    return WithMembers(raw, params.begin, params.end, "{\"_meta\":{", context,
                       "}}");
  }
  if (place->params_object.close == kNone) {  // not an object
    return ParsedWithTraceContext(raw, context);
  }
  const ValueSpan& meta = place->meta;
  if (!meta.found()) {
    const size_t at = params.begin + 1;
    return WithMembers(raw, at, at, "\"_meta\":{", context,
                       place->params_object.empty ? "}" : "},");
  }
  if (place->meta_object.close == kNone) {  // not an object: ours instead
    return WithMembers(raw, meta.begin, meta.end, "{", context, "}");
  }
  if (place->parent.found() || place->state.found()) {
    // The caller's context gives way to ours: only _meta is parsed again.
    nlohmann::json meta_json = nlohmann::json::parse(
        raw.substr(meta.begin, meta.end - meta.begin), nullptr, false);
    if (!meta_json.is_object()) return ParsedWithTraceContext(raw, context);
    meta_json["traceparent"] = context.Traceparent();
    if (context.trace_state.empty()) {
      meta_json.erase("tracestate");
    } else {
      meta_json["tracestate"] = context.trace_state;
    }
    std::string out(raw.substr(0, meta.begin));
    out.append(meta_json.dump(-1, ' ', false,
                              nlohmann::json::error_handler_t::replace));
    out.append(raw.substr(meta.end));
    return out;
  }
  const size_t at = meta.begin + 1;
  return WithMembers(raw, at, at, "", context,
                     place->meta_object.empty ? "" : ",");
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
