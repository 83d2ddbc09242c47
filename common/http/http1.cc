// The request half of the HTTP/1.1 codec (http1.h): the incremental
// request parser and the Request accessors. Responses are http1_response.cc.
#include "common/http/http1.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace inspector::http {
namespace {

// Character classes of RFC 9110 as lookup tables (tchar is in tokens.h).
// field-vchar / SP / HTAB (obs-text included): everything but controls.
constexpr bool IsFieldCharSlow(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7F);
}

// request-target bytes: visible ASCII and (leniently) bytes >= 0x80.
constexpr bool IsTargetCharSlow(unsigned char c) {
  return c > 0x20 && c != 0x7F;
}

struct CharTables {
  std::array<bool, 256> field{};
  std::array<bool, 256> target{};
  constexpr CharTables() {
    for (int i = 0; i < 256; ++i) {
      field[i] = IsFieldCharSlow(static_cast<unsigned char>(i));
      target[i] = IsTargetCharSlow(static_cast<unsigned char>(i));
    }
  }
};
constexpr CharTables kChars;

bool IsFieldValue(std::string_view s) {
  for (char c : s) {
    if (!kChars.field[static_cast<unsigned char>(c)]) return false;
  }
  return true;
}

std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Calls `fn` with each trimmed, non-empty element of a comma-separated
// field value (RFC 9110 list syntax).
template <typename Fn>
void ForEachListElement(std::string_view value, Fn fn) {
  while (true) {
    size_t comma = value.find(',');
    std::string_view element = TrimOws(value.substr(0, comma));
    if (!element.empty()) fn(element);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

// Appends a short human-readable excerpt of untrusted bytes to an error
// message (printable ASCII only, at most 40 bytes).
std::string Excerpt(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) {
    out.push_back(c >= 0x20 && c < 0x7F ? c : '?');
  }
  if (s.size() > 40) out += "...";
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Request

std::string_view Request::path() const {
  std::string_view t = target;
  if (t == "*") return t;
  if (!t.empty() && t.front() != '/') {
    // absolute-form: scheme "://" authority [path-abempty] ["?" query]
    size_t scheme_end = t.find("://");
    if (scheme_end != std::string_view::npos) {
      t.remove_prefix(scheme_end + 3);
      size_t path_start = t.find_first_of("/?");
      if (path_start == std::string_view::npos || t[path_start] == '?') {
        return "/";
      }
      t.remove_prefix(path_start);
    }
  }
  return t.substr(0, t.find('?'));
}

std::string_view Request::query() const {
  std::string_view t = target;
  size_t q = t.find('?');
  if (q == std::string_view::npos) return {};
  return t.substr(q + 1);
}

const std::string* Request::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// RequestParser

RequestParser::RequestParser(ParserLimits limits) : limits_(limits) {}

void RequestParser::Reset() {
  stage_ = Stage::kRequestLine;
  request_ = Request();
  error_ = ParseError();
  partial_.clear();
  partial_consumed_ = false;
  ResetCounters();
}

void RequestParser::ResetCounters() {
  blank_bytes_ = 0;
  header_bytes_ = 0;
  header_count_ = 0;
  remaining_ = 0;
  method_done_ = false;
  method_seen_ = 0;
  started_ = false;
  body_started_ = false;
}

Request RequestParser::TakeRequest() {
  Request out = std::move(request_);
  request_ = Request();
  stage_ = Stage::kRequestLine;
  partial_.clear();
  partial_consumed_ = false;
  ResetCounters();
  return out;
}

bool RequestParser::in_progress() const {
  if (stage_ == Stage::kRequestLine) return started_;
  return stage_ < Stage::kComplete;
}

bool RequestParser::awaiting_continue() const {
  return head_complete() && stage_ < Stage::kComplete &&
         request_.expect_continue && !body_started_;
}

RequestParser::LineResult RequestParser::TakeLine(std::string_view input,
                                                  size_t* pos,
                                                  size_t max_length,
                                                  std::string_view* line) {
  if (partial_consumed_) {
    partial_.clear();
    partial_consumed_ = false;
  }
  std::string_view rest = input.substr(*pos);
  const void* lf = std::memchr(rest.data(), '\n', rest.size());
  // max_length + 1 leaves room for the CR of a CRLF.
  if (lf == nullptr) {
    if (partial_.size() + rest.size() > max_length + 1) {
      return LineResult::kTooLong;
    }
    partial_.append(rest.data(), rest.size());
    *pos = input.size();
    return LineResult::kNeedMore;
  }
  size_t n = static_cast<const char*>(lf) - rest.data();
  std::string_view got;
  if (partial_.empty()) {
    got = rest.substr(0, n);
  } else {
    if (partial_.size() + n > max_length + 1) return LineResult::kTooLong;
    partial_.append(rest.data(), n);
    partial_consumed_ = true;
    got = partial_;
  }
  *pos += n + 1;
  if (!got.empty() && got.back() == '\r') got.remove_suffix(1);
  if (got.size() > max_length) return LineResult::kTooLong;
  *line = got;
  return LineResult::kLine;
}

void RequestParser::Fail(int status, std::string message) {
  stage_ = Stage::kError;
  error_.status = status;
  error_.message = std::move(message);
}

bool RequestParser::ScanMethod(std::string_view input, size_t pos) {
  // Checks the method as it arrives, so that a peer speaking something
  // else (TLS, a binary protocol) is turned away at once instead of when
  // the line limit or the header timeout runs out. Only the first
  // max-line bytes are looked at, so the outcome does not depend on how
  // the input is split (TakeLine reports an over-long line only after
  // seeing more than that).
  const size_t max_line = limits_.max_url_bytes + kRequestLineSlack;
  for (size_t i = pos; i < input.size(); ++i) {
    char c = input[i];
    if (c == '\r' || c == '\n') {
      method_done_ = true;
      return true;
    }
    if (method_seen_ == 0 && c == '\x16') {
      Fail(400, "a TLS handshake arrived on a plain HTTP port; use http://");
      return false;
    }
    started_ = true;
    if (c == ' ' || method_seen_ >= max_line) {
      method_done_ = true;
      return true;
    }
    if (!IsTchar(c)) {
      Fail(400, "malformed request line: invalid character in the method");
      return false;
    }
    ++method_seen_;
  }
  return true;
}

bool RequestParser::ParseRequestLine(std::string_view line) {
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) {
    Fail(400, "malformed request line \"" + Excerpt(line) + "\"");
    return false;
  }
  std::string_view method = line.substr(0, sp1);
  std::string_view rest = line.substr(sp1 + 1);
  size_t sp2 = rest.find(' ');
  if (sp2 == std::string_view::npos) {
    Fail(400, "malformed request line \"" + Excerpt(line) +
                  "\": expected METHOD TARGET HTTP/1.1");
    return false;
  }
  std::string_view target = rest.substr(0, sp2);
  std::string_view version = rest.substr(sp2 + 1);
  if (!IsToken(method)) {
    Fail(400, "malformed request line: invalid method");
    return false;
  }
  // Version before target, so that an HTTP/2 preface ("PRI * HTTP/2.0")
  // gets 505 and not a complaint about its target.
  if (version.size() < 8 || version.substr(0, 5) != "HTTP/") {
    Fail(400, "malformed request line: invalid HTTP version \"" +
                  Excerpt(version) + "\"");
    return false;
  }
  std::string_view digits = version.substr(5);
  size_t dot = digits.find('.');
  bool well_formed =
      dot != std::string_view::npos && dot > 0 && dot + 1 < digits.size();
  for (size_t i = 0; well_formed && i < digits.size(); ++i) {
    if (i != dot &&
        !absl::ascii_isdigit(static_cast<unsigned char>(digits[i]))) {
      well_formed = false;
    }
  }
  if (!well_formed) {
    Fail(400, "malformed request line: invalid HTTP version \"" +
                  Excerpt(version) + "\"");
    return false;
  }
  if (version == "HTTP/1.1") {
    request_.version_minor = 1;
  } else if (version == "HTTP/1.0") {
    request_.version_minor = 0;
  } else if (digits.substr(0, dot) == "2") {
    Fail(505, "HTTP/2 is not supported on this port; use HTTP/1.1");
    return false;
  } else {
    Fail(505, "HTTP version " + std::string(digits) +
                  " is not supported; use HTTP/1.1");
    return false;
  }
  if (target.empty()) {
    Fail(400, "malformed request line: empty request target");
    return false;
  }
  if (target.size() > limits_.max_url_bytes) {
    Fail(414,
         absl::StrCat("the URL is ", target.size(),
                      " bytes long; the limit is ", limits_.max_url_bytes));
    return false;
  }
  for (char c : target) {
    if (!kChars.target[static_cast<unsigned char>(c)]) {
      Fail(400, "invalid character in the request target");
      return false;
    }
  }
  if (target.front() != '/') {
    if (target == "*") {
      if (method != "OPTIONS") {
        Fail(400, "the asterisk request target is only allowed with OPTIONS");
        return false;
      }
    } else {
      // absolute-form: scheme "://" ...
      size_t colon = target.find("://");
      bool ok = colon != std::string_view::npos && colon > 0 &&
                absl::ascii_isalpha(static_cast<unsigned char>(target[0]));
      for (size_t i = 1; ok && i < colon; ++i) {
        unsigned char c = static_cast<unsigned char>(target[i]);
        ok = absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.';
      }
      if (!ok) {
        Fail(400, "invalid request target \"" + Excerpt(target) +
                      "\": expected a path starting with '/'");
        return false;
      }
    }
  }
  request_.method.assign(method.data(), method.size());
  request_.target.assign(target.data(), target.size());
  return true;
}

bool RequestParser::ParseFieldLine(std::string_view line, Headers* fields) {
  if (line.front() == ' ' || line.front() == '\t') {
    Fail(400, "obsolete line folding in a header field is not accepted");
    return false;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    Fail(400, "malformed header field \"" + Excerpt(line) + "\"");
    return false;
  }
  std::string_view name = line.substr(0, colon);
  if (!IsToken(name)) {
    Fail(400, "invalid header field name \"" + Excerpt(name) + "\"");
    return false;
  }
  std::string_view value = TrimOws(line.substr(colon + 1));
  if (!IsFieldValue(value)) {
    Fail(400, "invalid character in the value of header field \"" +
                  Excerpt(name) + "\"");
    return false;
  }
  if (++header_count_ > limits_.max_headers) {
    Fail(431,
         absl::StrCat("more than ", limits_.max_headers, " header fields"));
    return false;
  }
  std::string lower_name(name);
  for (char& c : lower_name)
    c = absl::ascii_tolower(static_cast<unsigned char>(c));
  fields->emplace_back(std::move(lower_name),
                       std::string(value.data(), value.size()));
  return true;
}

bool RequestParser::FinishHead() {
  Request& r = request_;
  bool have_length = false;
  bool length_too_large = false;
  uint64_t length = 0;
  bool have_te = false;
  int chunked_count = 0;
  std::string unknown_coding;
  bool conn_close = false;
  bool conn_keep_alive = false;
  bool expect_continue = false;
  std::string unknown_expectation;
  int host_count = 0;

  for (const auto& [name, value] : r.headers) {
    if (name == "content-length") {
      bool invalid = false;
      bool conflict = false;
      bool any = false;
      ForEachListElement(value, [&](std::string_view element) {
        any = true;
        uint64_t v = 0;
        bool too_large = false;
        for (char c : element) {
          if (c < '0' || c > '9') {
            invalid = true;
            return;
          }
          if (v > (std::numeric_limits<uint64_t>::max() - 9) / 10) {
            too_large = true;
          } else {
            v = v * 10 + static_cast<uint64_t>(c - '0');
          }
        }
        if (too_large) {
          // Huge values all read as the maximum; the request is refused
          // as too large anyway.
          length_too_large = true;
          v = std::numeric_limits<uint64_t>::max();
        }
        if (have_length && v != length) conflict = true;
        have_length = true;
        length = v;
      });
      if (invalid || !any) {
        Fail(400, "invalid Content-Length \"" + Excerpt(value) + "\"");
        return false;
      }
      if (conflict) {
        Fail(400, "conflicting Content-Length values");
        return false;
      }
    } else if (name == "transfer-encoding") {
      have_te = true;
      ForEachListElement(value, [&](std::string_view element) {
        if (EqualsIgnoreCase(element, "chunked")) {
          ++chunked_count;
        } else if (unknown_coding.empty()) {
          unknown_coding = std::string(element);
        }
      });
    } else if (name == "connection") {
      ForEachListElement(value, [&](std::string_view element) {
        if (EqualsIgnoreCase(element, "close")) conn_close = true;
        if (EqualsIgnoreCase(element, "keep-alive")) conn_keep_alive = true;
      });
    } else if (name == "expect") {
      if (EqualsIgnoreCase(value, "100-continue")) {
        expect_continue = true;
      } else if (unknown_expectation.empty()) {
        unknown_expectation = value.empty() ? std::string("(empty)") : value;
      }
    } else if (name == "host") {
      ++host_count;
    }
  }

  if (have_te && r.version_minor == 0) {
    Fail(400, "Transfer-Encoding is not allowed in an HTTP/1.0 request");
    return false;
  }
  if (have_te && have_length) {
    Fail(400,
         "a request must not have both Content-Length and "
         "Transfer-Encoding");
    return false;
  }
  if (have_te) {
    if (!unknown_coding.empty()) {
      Fail(501, "transfer coding \"" + Excerpt(unknown_coding) +
                    "\" is not supported (only chunked)");
      return false;
    }
    if (chunked_count != 1) {
      Fail(400, chunked_count == 0
                    ? "empty Transfer-Encoding"
                    : "chunked transfer coding applied more than once");
      return false;
    }
  }
  if (have_length && (length_too_large || length > limits_.max_body_bytes)) {
    Fail(413, length_too_large
                  ? absl::StrCat("the body exceeds the limit of ",
                                 limits_.max_body_bytes, " bytes")
                  : absl::StrCat("the body of ", length,
                                 " bytes exceeds the limit of ",
                                 limits_.max_body_bytes, " bytes"));
    return false;
  }
  if (host_count > 1) {
    Fail(400, "more than one Host header field");
    return false;
  }
  if (host_count == 0 && r.version_minor == 1) {
    Fail(400, "an HTTP/1.1 request needs a Host header field");
    return false;
  }
  // RFC 9110 10.1.1: 100-continue in an HTTP/1.0 request is ignored, and so
  // are other expectations there.
  if (!unknown_expectation.empty() && r.version_minor == 1) {
    Fail(417, "unsupported expectation \"" + Excerpt(unknown_expectation) +
                  "\" (only 100-continue)");
    return false;
  }

  r.chunked = have_te;
  r.keep_alive =
      r.version_minor == 1 ? !conn_close : conn_keep_alive && !conn_close;
  bool has_body = have_te || length > 0;
  r.expect_continue = expect_continue && r.version_minor == 1 && has_body;
  if (have_te) {
    stage_ = Stage::kChunkSize;
  } else if (length > 0) {
    stage_ = Stage::kBody;
    remaining_ = length;
    // Bounded: the client's claim alone must not reserve much memory.
    r.body.reserve(static_cast<size_t>(std::min<uint64_t>(length, 64 * 1024)));
  } else {
    stage_ = Stage::kComplete;
  }
  return true;
}

bool RequestParser::ParseChunkSize(std::string_view line) {
  size_t i = 0;
  uint64_t size = 0;
  bool too_large = false;
  for (; i < line.size(); ++i) {
    int digit;
    char c = line[i];
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      break;
    }
    if (size > (std::numeric_limits<uint64_t>::max() >> 4)) {
      too_large = true;
    } else {
      size = (size << 4) | static_cast<uint64_t>(digit);
    }
  }
  if (i == 0) {
    Fail(400, "malformed chunk size \"" + Excerpt(line) + "\"");
    return false;
  }
  std::string_view rest = line.substr(i);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) {
    rest.remove_prefix(1);
  }
  if (!rest.empty() && (rest.front() != ';' || !IsFieldValue(rest))) {
    Fail(400, "malformed chunk size line \"" + Excerpt(line) + "\"");
    return false;
  }
  if (too_large || size > limits_.max_body_bytes - request_.body.size()) {
    Fail(413, absl::StrCat("the body exceeds the limit of ",
                           limits_.max_body_bytes, " bytes"));
    return false;
  }
  if (size == 0) {
    stage_ = Stage::kTrailers;
  } else {
    remaining_ = size;
    stage_ = Stage::kChunkData;
  }
  return true;
}

RequestParser::Status RequestParser::Parse(std::string_view input,
                                           size_t* consumed) {
  size_t pos = 0;
  std::string_view line;
  while (true) {
    switch (stage_) {
      case Stage::kComplete:
        *consumed = pos;
        return Status::kComplete;

      case Stage::kError:
        *consumed = pos;
        return Status::kError;

      case Stage::kRequestLine: {
        if (!method_done_ && !ScanMethod(input, pos)) break;
        switch (TakeLine(input, &pos, limits_.max_url_bytes + kRequestLineSlack,
                         &line)) {
          case LineResult::kNeedMore:
            *consumed = pos;
            return Status::kNeedMore;
          case LineResult::kTooLong:
            Fail(414, absl::StrCat("the request line exceeds ",
                                   limits_.max_url_bytes + kRequestLineSlack,
                                   " bytes (URL limit ", limits_.max_url_bytes,
                                   ")"));
            break;
          case LineResult::kLine:
            if (line.empty()) {
              blank_bytes_ += 2;
              if (blank_bytes_ > kMaxLeadingBlankBytes) {
                Fail(400, "too many empty lines before the request line");
              }
              method_done_ = false;
              method_seen_ = 0;
              break;
            }
            if (ParseRequestLine(line)) stage_ = Stage::kHeaders;
            break;
        }
        break;
      }

      case Stage::kHeaders:
      case Stage::kTrailers: {
        size_t budget = limits_.max_header_bytes - header_bytes_;
        size_t max_line = budget >= 2 ? budget - 2 : 0;
        switch (TakeLine(input, &pos, max_line, &line)) {
          case LineResult::kNeedMore:
            *consumed = pos;
            return Status::kNeedMore;
          case LineResult::kTooLong:
            Fail(431, absl::StrCat(stage_ == Stage::kHeaders
                                       ? "the request header fields exceed "
                                       : "the trailer fields exceed ",
                                   limits_.max_header_bytes, " bytes"));
            break;
          case LineResult::kLine:
            if (stage_ == Stage::kTrailers) body_started_ = true;
            if (line.empty()) {
              if (stage_ == Stage::kHeaders) {
                FinishHead();
              } else {
                stage_ = Stage::kComplete;
              }
              break;
            }
            header_bytes_ += line.size() + 2;
            ParseFieldLine(line, stage_ == Stage::kHeaders
                                     ? &request_.headers
                                     : &request_.trailers);
            break;
        }
        break;
      }

      case Stage::kBody:
      case Stage::kChunkData: {
        size_t available = input.size() - pos;
        if (available == 0) {
          *consumed = pos;
          return Status::kNeedMore;
        }
        body_started_ = true;
        size_t take =
            static_cast<size_t>(std::min<uint64_t>(remaining_, available));
        request_.body.append(input.data() + pos, take);
        pos += take;
        remaining_ -= take;
        if (remaining_ == 0) {
          stage_ =
              stage_ == Stage::kBody ? Stage::kComplete : Stage::kChunkDataEnd;
        }
        break;
      }

      case Stage::kChunkSize: {
        switch (TakeLine(input, &pos, kMaxChunkLine, &line)) {
          case LineResult::kNeedMore:
            if (!partial_.empty()) body_started_ = true;
            *consumed = pos;
            return Status::kNeedMore;
          case LineResult::kTooLong:
            Fail(400, "chunk size line too long");
            break;
          case LineResult::kLine:
            body_started_ = true;
            ParseChunkSize(line);
            break;
        }
        break;
      }

      case Stage::kChunkDataEnd: {
        switch (TakeLine(input, &pos, 0, &line)) {
          case LineResult::kNeedMore:
            *consumed = pos;
            return Status::kNeedMore;
          case LineResult::kTooLong:
            Fail(400, "chunk data not followed by CRLF");
            break;
          case LineResult::kLine:
            stage_ = Stage::kChunkSize;
            break;
        }
        break;
      }
    }
  }
}

}  // namespace inspector::http
