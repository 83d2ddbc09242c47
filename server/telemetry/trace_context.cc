#include "server/telemetry/trace_context.h"

#include <random>

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

std::optional<TraceContext> TraceContextFromMeta(std::string_view raw) {
  if (raw.find("traceparent") == std::string_view::npos) return std::nullopt;
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

std::string WithTraceContextInMeta(std::string_view raw,
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

TraceId NewTraceId() { return RandomNonZero<16>(); }
SpanId NewSpanId() { return RandomNonZero<8>(); }

bool IsTraceIdHex(std::string_view text) {
  TraceId id{};
  return ReadHex(text, id.data(), id.size()) && !AllZero(id);
}

}  // namespace inspector::telemetry
