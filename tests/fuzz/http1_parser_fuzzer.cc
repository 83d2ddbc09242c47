// Fuzz target for the HTTP/1.1 request parser (common/http/http1.h).
//
// The first five bytes choose the limits (byte 0: odd = tiny limits, so
// that the 413/414/431 paths are reached) and seed the way the rest is cut
// into pieces. Properties checked, on any input:
//   - no crash, no sanitizer report;
//   - Parse() never reports more consumed bytes than it was given, and
//     consumes everything when it asks for more;
//   - parsing in one piece, byte by byte and in pseudo-random pieces gives
//     the same requests and the same error status (or none);
//   - every request honours the limits and the grammar (token method,
//     target with a path, lower-case header names, version 1.0 or 1.1);
//     every error has one of the statuses the parser documents;
//   - what the response writers build from the parsed values stays well
//     framed (one blank line ending a head, one ending an SSE event).
//
// Built two ways by tests/fuzz/CMakeLists.txt: with clang, a libFuzzer
// binary (http1_parser_fuzzer -max_total_time=60 CORPUS_DIR); with any
// compiler, a replay test over tests/fuzz/corpus/http1_parser
// (fuzz_replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/http1.h"

namespace {

using inspector::http::ParserLimits;
using inspector::http::Request;
using inspector::http::RequestParser;

#define FUZZ_CHECK(condition)                                          \
  do {                                                                 \
    if (!(condition)) {                                                \
      std::fprintf(stderr, "check failed: %s (line %d)\n", #condition, \
                   __LINE__);                                          \
      std::abort();                                                    \
    }                                                                  \
  } while (0)

struct Outcome {
  std::vector<std::string> requests;  // described, for comparison
  int error_status = 0;
};

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z') ||
              std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
                  std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

void CheckRequest(const Request& r, const ParserLimits& limits) {
  FUZZ_CHECK(IsToken(r.method));
  FUZZ_CHECK(!r.target.empty() && r.target.size() <= limits.max_url_bytes);
  FUZZ_CHECK(r.version_minor == 0 || r.version_minor == 1);
  std::string_view path = r.path();
  FUZZ_CHECK(path == "*" || (!path.empty() && path.front() == '/'));
  FUZZ_CHECK(path != "*" || r.method == "OPTIONS");
  FUZZ_CHECK(r.body.size() <= limits.max_body_bytes);
  FUZZ_CHECK(r.headers.size() + r.trailers.size() <= limits.max_headers);
  for (const auto& [name, value] : r.headers) {
    FUZZ_CHECK(IsToken(name));
    for (char c : name) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    FUZZ_CHECK(value.find_first_of(std::string_view("\r\n\0", 3)) ==
               std::string::npos);
  }
  FUZZ_CHECK(!r.chunked || r.Header("content-length") == nullptr);
  FUZZ_CHECK(!r.chunked || r.version_minor == 1);
  FUZZ_CHECK(r.version_minor == 0 || r.Header("host") != nullptr);
  FUZZ_CHECK(!r.expect_continue || r.version_minor == 1);

  // Writers fed with parsed values stay well framed.
  std::string value = r.headers.empty() ? "" : r.headers[0].second;
  std::string head = inspector::http::ResponseHead(
      200, {{"x-echo", value}, {r.method, r.target}}, r.body.size(),
      r.keep_alive, r.version_minor);
  FUZZ_CHECK(head.find("\r\n\r\n") == head.size() - 4);
  std::string event =
      inspector::http::FormatSseEvent(r.body, r.method, r.target);
  FUZZ_CHECK(event.find("\n\n") == event.size() - 2);
  FUZZ_CHECK(event.find('\r') == std::string::npos);
}

std::string Describe(const Request& r) {
  std::string out =
      r.method + ' ' + r.target + ' ' + std::to_string(r.version_minor) + ' ' +
      std::to_string(r.keep_alive) + std::to_string(r.expect_continue) +
      std::to_string(r.chunked) + '\n';
  for (const auto& [name, value] : r.headers) out += name + ':' + value + '\n';
  out += std::to_string(r.body.size()) + ':' + r.body + '\n';
  for (const auto& [name, value] : r.trailers) out += name + ':' + value + '\n';
  return out;
}

// Feeds `input` in pieces of the given sizes (cycled; 0 = the rest).
Outcome Parse(std::string_view input, const ParserLimits& limits,
              const std::vector<size_t>& pieces) {
  RequestParser parser(limits);
  Outcome out;
  std::string pending;
  size_t pos = 0;
  size_t turn = 0;
  while (true) {
    size_t n = input.size() - pos;
    if (!pieces.empty()) {
      size_t want = pieces[turn++ % pieces.size()];
      if (want != 0 && want < n) n = want;
    }
    pending.append(input.substr(pos, n));
    pos += n;
    size_t consumed = 0;
    RequestParser::Status status = parser.Parse(pending, &consumed);
    FUZZ_CHECK(consumed <= pending.size());
    pending.erase(0, consumed);
    if (status == RequestParser::Status::kError) {
      int s = parser.error().status;
      FUZZ_CHECK(s == 400 || s == 413 || s == 414 || s == 417 || s == 431 ||
                 s == 501 || s == 505);
      FUZZ_CHECK(!parser.error().message.empty());
      size_t again = 1;
      FUZZ_CHECK(parser.Parse(pending, &again) ==
                     RequestParser::Status::kError &&
                 again == 0);
      out.error_status = s;
      break;
    }
    if (status == RequestParser::Status::kComplete) {
      FUZZ_CHECK(parser.head_complete());
      Request r = parser.TakeRequest();
      CheckRequest(r, limits);
      out.requests.push_back(Describe(r));
      FUZZ_CHECK(!parser.in_progress());
      continue;
    }
    FUZZ_CHECK(pending.empty());
    if (pos == input.size()) break;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ParserLimits limits;
  uint64_t seed = 0x9E3779B97F4A7C15ull;
  if (size >= 5) {
    if (data[0] & 1) {
      limits.max_url_bytes = 1 + (data[0] >> 1) % 64;
      limits.max_header_bytes = 2 + data[1] % 128;
      limits.max_headers = data[2] % 8;
      limits.max_body_bytes = data[3] % 64;
    }
    seed ^= (uint64_t{data[1]} << 24) | (uint64_t{data[2]} << 16) |
            (uint64_t{data[3]} << 8) | data[4];
    data += 5;
    size -= 5;
  }
  std::string_view input(reinterpret_cast<const char*>(data), size);

  std::vector<size_t> random_pieces;
  for (int i = 0; i < 32; ++i) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    random_pieces.push_back(1 + seed % 40);
  }

  Outcome whole = Parse(input, limits, {});
  Outcome chunked = Parse(input, limits, random_pieces);
  FUZZ_CHECK(whole.requests == chunked.requests);
  FUZZ_CHECK(whole.error_status == chunked.error_status);
  if (input.size() <= 4096) {
    Outcome bytewise = Parse(input, limits, {1});
    FUZZ_CHECK(whole.requests == bytewise.requests);
    FUZZ_CHECK(whole.error_status == bytewise.error_status);
  }
  return 0;
}
