// libFuzzer target for inspector::SseParser (common/sse_parser.h).
//
// Checks that arbitrary input never crashes the parser and that the way the
// stream is cut into chunks never changes the result: parsing the input in
// one Feed(), byte by byte, and in chunks chosen by the fuzzer must give the
// same events, the same error (or none), the same last event id and the same
// retry value.
//
// Build and run (the parser depends on Abseil only):
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//       tests/fuzz/sse_parser_fuzzer.cc common/sse_parser.cc \
//       $(pkg-config --libs absl_status absl_strings) -o sse_parser_fuzzer
//   ./sse_parser_fuzzer -max_total_time=60
// In CMake: an executable of this file linking inspector_sse_parser, compiled
// and linked with -fsanitize=fuzzer (clang only).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sse_parser.h"

namespace {

struct Outcome {
  std::vector<inspector::SseEvent> events;
  bool failed = false;
  std::string last_event_id;
  std::optional<int64_t> retry_ms;
};

// Feeds `input` cut at the given chunk sizes (the rest in one piece).
Outcome Parse(std::string_view input, size_t max_event_bytes,
              const std::vector<size_t>& chunk_sizes) {
  inspector::SseParser parser(max_event_bytes);
  Outcome out;
  size_t pos = 0;
  size_t i = 0;
  while (pos < input.size() || i == 0) {
    size_t n = i < chunk_sizes.size() ? chunk_sizes[i] : input.size() - pos;
    n = std::min(n, input.size() - pos);
    ++i;
    if (!parser.Feed(input.substr(pos, n), &out.events).ok()) {
      out.failed = true;
      break;
    }
    pos += n;
    if (input.empty()) break;
  }
  out.last_event_id = parser.last_event_id();
  out.retry_ms = parser.retry_ms();
  return out;
}

void ExpectSame(const Outcome& a, const Outcome& b) {
  if (a.failed != b.failed || a.events != b.events ||
      a.last_event_id != b.last_event_id || a.retry_ms != b.retry_ms) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider provider(data, size);
  size_t max_event_bytes = provider.ConsumeIntegralInRange<size_t>(1, 4096);
  std::vector<size_t> chunks(provider.ConsumeIntegralInRange<size_t>(0, 64));
  for (size_t& chunk : chunks) {
    chunk = provider.ConsumeIntegralInRange<size_t>(0, 64);
  }
  std::string input = provider.ConsumeRemainingBytesAsString();

  Outcome whole = Parse(input, max_event_bytes, {});
  Outcome bytewise =
      Parse(input, max_event_bytes, std::vector<size_t>(input.size(), 1));
  Outcome chunked = Parse(input, max_event_bytes, chunks);
  ExpectSame(whole, bytewise);
  ExpectSame(whole, chunked);
  return 0;
}
