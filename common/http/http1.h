// HTTP/1.1 message codec (RFC 9112): an incremental request parser and the
// helpers that frame responses (status line and head, chunked encoding,
// Server-Sent Events).
//
// RequestParser is fed a connection's bytes in pieces of any size (down to
// one byte at a time) and produces one complete Request at a time, body
// included (de-chunked). It never consumes bytes past the end of the
// request it is parsing, so pipelined requests stay in the caller's input
// for the next round. It enforces size limits and rejects malformed or
// ambiguous framing (request smuggling vectors) with the HTTP status a
// server should answer with; after an error the connection must be closed.
//
// The framing helpers are plain functions that build bytes; they do no I/O.
//
// Thread-safety: RequestParser and Request are thread-compatible (one
// parser per connection, used by one thread at a time). The free functions
// are thread-safe. Pure code: no I/O, depends on the standard library and
// Abseil only.
#ifndef INSPECTOR_COMMON_HTTP_HTTP1_H_
#define INSPECTOR_COMMON_HTTP_HTTP1_H_

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/http/tokens.h"

namespace inspector::http {

// Header fields in the order received (or to be sent). Parsed requests have
// lower-cased names and values stripped of surrounding whitespace; repeated
// fields stay separate entries.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
  std::string method;  // case-sensitive token, e.g. "GET"
  // The request-target exactly as received: origin-form "/a/b?x=1",
  // absolute-form "http://host/a/b?x=1", or "*" (OPTIONS only).
  std::string target;
  int version_minor = 1;  // HTTP/1.<version_minor>; 0 or 1
  Headers headers;
  // The body (de-chunked when it came chunked); empty when there was none.
  std::string body;
  // Trailer fields of a chunked body (lower-cased names).
  Headers trailers;
  // Whether the connection may carry another request after this one:
  // HTTP/1.1 unless "Connection: close", HTTP/1.0 only with
  // "Connection: keep-alive".
  bool keep_alive = true;
  // An HTTP/1.1 request with a body carried "Expect: 100-continue": the
  // client may wait for an interim 100 response before sending the body.
  bool expect_continue = false;
  bool chunked = false;  // the body came with Transfer-Encoding: chunked

  // The path of the target: "/a/b" for both "/a/b?x=1" and
  // "http://host/a/b?x=1"; "/" for "http://host"; "*" for "*". Still
  // percent-encoded. Points into `target` (or a static string).
  std::string_view path() const;
  // The query without the '?' ("x=1"); "" when there is none.
  std::string_view query() const;
  // The value of the first header named `lower_name` (which must be
  // lower-case), or nullptr.
  const std::string* Header(std::string_view lower_name) const;
};

// Size limits. A request over one of them is rejected with the status in
// brackets.
struct ParserLimits {
  // The request-target (URL) [414]. The request line as a whole may be up
  // to kRequestLineSlack bytes longer, for the method and the version.
  size_t max_url_bytes = 8 * 1024;
  // All header field lines together, each counted with its line ending;
  // trailer fields of a chunked body count too [431].
  size_t max_header_bytes = 16 * 1024;
  // Number of header (plus trailer) fields [431].
  size_t max_headers = 128;
  // The body, after de-chunking [413]. A Content-Length above it is
  // rejected as soon as the head is complete.
  size_t max_body_bytes = 16 * 1024 * 1024;
};

// Why a request was rejected: the status to answer with (400, 408, 413,
// 414, 417, 431, 501, 505) and a one-line explanation for the client.
struct ParseError {
  int status = 400;
  std::string message;
};

class RequestParser {
 public:
  static constexpr size_t kRequestLineSlack = 64;
  // The longest chunk-size line (with extensions) accepted.
  static constexpr size_t kMaxChunkLine = 4096;
  // How many empty lines' worth of bytes may precede a request line (RFC
  // 9112 asks servers to skip at least one CRLF there).
  static constexpr size_t kMaxLeadingBlankBytes = 256;

  enum class Status {
    kNeedMore,  // everything given was consumed; feed more bytes
    kComplete,  // a request is ready: TakeRequest()
    kError,     // the request is invalid: error(); close the connection
  };

  explicit RequestParser(ParserLimits limits = {});

  // Consumes bytes of `input` and sets *consumed to how many. Stops right
  // after the end of a request (kComplete; the bytes after it are left for
  // the next call) or at the first invalid byte (kError). On kNeedMore all
  // of `input` was consumed (partial lines are copied, so the caller may
  // discard its buffer). Once kComplete or kError, later calls consume
  // nothing and return the same status until TakeRequest() or Reset().
  Status Parse(std::string_view input, size_t* consumed);

  // After kComplete: hands out the request and gets ready for the next one
  // on the same connection.
  Request TakeRequest();

  // Forgets everything, including an error, as for a new connection.
  void Reset();

  // Some bytes of a request (other than the blank lines that may precede
  // it) have been received and the request is not complete yet.
  bool in_progress() const;
  // The request line and headers are complete (the body may not be).
  // Before kComplete, request() then shows the head.
  bool head_complete() const { return stage_ >= Stage::kBody; }
  // The head is complete, asked for "100-continue", and the body has not
  // started arriving: time to send "HTTP/1.1 100 Continue".
  bool awaiting_continue() const;
  // The request being parsed (its head once head_complete()).
  const Request& request() const { return request_; }
  // Valid after kError.
  const ParseError& error() const { return error_; }
  const ParserLimits& limits() const { return limits_; }

 private:
  enum class Stage {
    kRequestLine,
    kHeaders,
    // Stages from here on have the whole head.
    kBody,  // Content-Length bytes
    kChunkSize,
    kChunkData,
    kChunkDataEnd,
    kTrailers,
    kComplete,
    kError,
  };
  enum class LineResult { kLine, kNeedMore, kTooLong };

  LineResult TakeLine(std::string_view input, size_t* pos, size_t max_length,
                      std::string_view* line);
  void Fail(int status, std::string message);
  void ResetCounters();
  bool ScanMethod(std::string_view input, size_t pos);
  bool ParseRequestLine(std::string_view line);
  bool ParseFieldLine(std::string_view line, Headers* fields);
  bool FinishHead();
  bool ParseChunkSize(std::string_view line);

  ParserLimits limits_;
  Stage stage_ = Stage::kRequestLine;
  Request request_;
  ParseError error_;
  // A line cut by the end of an input, carried to the next Parse().
  std::string partial_;
  bool partial_consumed_ = false;  // partial_ was handed out as a line
  size_t blank_bytes_ = 0;   // empty lines skipped before the request line
  size_t header_bytes_ = 0;  // header and trailer lines so far
  size_t header_count_ = 0;
  uint64_t remaining_ = 0;     // body or chunk bytes still expected
  bool method_done_ = false;   // ScanMethod() has seen the method's end
  size_t method_seen_ = 0;     // method bytes ScanMethod() checked
  bool started_ = false;       // a byte of the request line has arrived
  bool body_started_ = false;  // a byte of the body has arrived
};

// The reason phrase of `status` ("Not Found"); "" for codes it does not
// know (an empty reason phrase is valid HTTP).
std::string_view ReasonPhrase(int status);

// Builds a response head: status line, `headers`, framing and connection
// fields, then the blank line. Framing: "Content-Length" when
// `content_length` is set; otherwise "Transfer-Encoding: chunked" for an
// HTTP/1.1 client (`version_minor` 1) or nothing for an HTTP/1.0 client,
// whose body then ends when the connection closes (keep_alive is forced off).
// 1xx, 204 and 304 responses get no framing fields. Adds "Connection:
// close" (1.1) or "Connection: keep-alive" (1.0) as needed, and a "Date"
// field when `date` is not empty. Fields in `headers` named
// content-length, transfer-encoding or connection are dropped (the framing
// is the codec's job), and so is any field whose name is not a token or
// whose value holds CR, LF or NUL (they would split the response).
std::string ResponseHead(int status, const Headers& headers,
                         std::optional<size_t> content_length, bool keep_alive,
                         int version_minor = 1, std::string_view date = {});
// Same, appending to *out.
void AppendResponseHead(std::string* out, int status, const Headers& headers,
                        std::optional<size_t> content_length, bool keep_alive,
                        int version_minor = 1, std::string_view date = {});

// Whether a response with this status carries no body (1xx, 204, 304).
bool StatusHasNoBody(int status);

// Chunked transfer coding. A chunk is ChunkHeader(n), n bytes, kChunkEnd;
// kLastChunk ends the body (no trailers).
std::string ChunkHeader(size_t size);  // "1a\r\n"
inline constexpr std::string_view kChunkEnd = "\r\n";
inline constexpr std::string_view kLastChunk = "0\r\n\r\n";
// Appends one whole chunk; nothing for empty data (an empty chunk would end
// the body).
void AppendChunk(std::string* out, std::string_view data);

// Server-Sent Events (text/event-stream). FormatSseEvent writes one event:
// "event:" when `event` is not empty, "id:" when `id` is not empty, and one
// "data:" line per line of `data` (split at LF, CRLF or CR, so that the
// receiver rebuilds `data` with LF line ends), then a blank line. CR and LF
// in `event` and `id` (and NUL in `id`) are removed, as they cannot be
// carried. FormatSseComment writes comment lines (": text") and a blank
// line, for heartbeats that keep proxies and idle timers quiet; receivers
// ignore them.
std::string FormatSseEvent(std::string_view data, std::string_view event = {},
                           std::string_view id = {});
std::string FormatSseComment(std::string_view text);

// An IMF-fixdate for the Date field: "Sun, 06 Nov 1994 08:49:37 GMT".
std::string HttpDate(std::time_t time);

}  // namespace inspector::http

#endif  // INSPECTOR_COMMON_HTTP_HTTP1_H_
