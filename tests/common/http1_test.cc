// Tests of the HTTP/1.1 codec (common/http/http1.h): request parsing fed in
// every split, framing and keep-alive rules, rejections with their
// statuses, and the response, chunk and SSE writers (the SSE output is
// read back with the project's own SSE parser).
#include "common/http/http1.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sse_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::http {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using Status = RequestParser::Status;
using namespace std::string_literals;

struct Outcome {
  std::vector<Request> requests;
  std::optional<ParseError> error;
  std::string leftover;  // bytes not consumed when parsing stopped
};

// Feeds `input` `chunk` bytes at a time (0: all at once), taking every
// completed request, until the input ends or the parser fails.
Outcome ParseIn(std::string_view input, size_t chunk,
                ParserLimits limits = {}) {
  RequestParser parser(limits);
  Outcome out;
  size_t pos = 0;
  std::string pending;  // bytes handed to the parser but not consumed
  while (pos < input.size() || !pending.empty()) {
    size_t n =
        chunk == 0 ? input.size() - pos : std::min(chunk, input.size() - pos);
    pending.append(input.substr(pos, n));
    pos += n;
    size_t consumed = 0;
    Status status = parser.Parse(pending, &consumed);
    EXPECT_LE(consumed, pending.size());
    pending.erase(0, consumed);
    if (status == Status::kError) {
      out.error = parser.error();
      break;
    }
    if (status == Status::kComplete) {
      out.requests.push_back(parser.TakeRequest());
      continue;  // the rest may hold another request
    }
    EXPECT_TRUE(pending.empty()) << "kNeedMore must consume everything";
    if (n == 0) break;
  }
  out.leftover = pending + std::string(input.substr(pos));
  return out;
}

std::string Describe(const Request& r) {
  std::string out = r.method + " " + r.target + " 1." +
                    std::to_string(r.version_minor) +
                    (r.keep_alive ? " keep-alive" : " close") +
                    (r.chunked ? " chunked" : "") +
                    (r.expect_continue ? " expect" : "") + "\n";
  for (const auto& [name, value] : r.headers) out += name + "=" + value + "\n";
  out += "body=" + r.body + "\n";
  for (const auto& [name, value] : r.trailers) {
    out += "trailer " + name + "=" + value + "\n";
  }
  return out;
}

// Parses `input` whole, byte by byte and in a few other splits, expects
// every split to agree, and returns the whole-input outcome.
Outcome ParseEverySplit(std::string_view input, ParserLimits limits = {}) {
  Outcome whole = ParseIn(input, 0, limits);
  for (size_t chunk : {1, 2, 3, 7, 16}) {
    Outcome split = ParseIn(input, chunk, limits);
    EXPECT_EQ(split.requests.size(), whole.requests.size()) << chunk;
    for (size_t i = 0;
         i < std::min(split.requests.size(), whole.requests.size()); ++i) {
      EXPECT_EQ(Describe(split.requests[i]), Describe(whole.requests[i]))
          << "chunk " << chunk;
    }
    EXPECT_EQ(split.error.has_value(), whole.error.has_value()) << chunk;
    if (split.error && whole.error) {
      EXPECT_EQ(split.error->status, whole.error->status) << chunk;
    }
  }
  return whole;
}

int ErrorStatus(std::string_view input, ParserLimits limits = {}) {
  Outcome out = ParseEverySplit(input, limits);
  return out.error ? out.error->status : 0;
}

TEST(RequestParserTest, ParsesASimpleGet) {
  Outcome out = ParseEverySplit(
      "GET /api/history?serverId=a%20b&limit=5 HTTP/1.1\r\n"
      "Host: 127.0.0.1:3000\r\n"
      "Accept:   text/event-stream  \r\n"
      "X-Custom-Header:\tv\r\n"
      "\r\n");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 1u);
  const Request& r = out.requests[0];
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.target, "/api/history?serverId=a%20b&limit=5");
  EXPECT_EQ(r.path(), "/api/history");
  EXPECT_EQ(r.query(), "serverId=a%20b&limit=5");
  EXPECT_EQ(r.version_minor, 1);
  EXPECT_TRUE(r.keep_alive);
  EXPECT_FALSE(r.chunked);
  EXPECT_TRUE(r.body.empty());
  EXPECT_THAT(r.headers, ElementsAre(Pair("host", "127.0.0.1:3000"),
                                     Pair("accept", "text/event-stream"),
                                     Pair("x-custom-header", "v")));
  ASSERT_NE(r.Header("accept"), nullptr);
  EXPECT_EQ(*r.Header("accept"), "text/event-stream");
  EXPECT_EQ(r.Header("missing"), nullptr);
  EXPECT_TRUE(out.leftover.empty());
}

TEST(RequestParserTest, AcceptsBareLfLineEndsAndLeadingEmptyLines) {
  Outcome out = ParseEverySplit("\r\n\nGET / HTTP/1.1\nHost: x\n\n");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].target, "/");
}

TEST(RequestParserTest, LeavesPipelinedRequestsInTheInput) {
  std::string first = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
  std::string second =
      "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz";
  std::string third_part = "GET /c HTT";
  std::string input = first + second + third_part;

  RequestParser parser;
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(input, &consumed), Status::kComplete);
  EXPECT_EQ(consumed, first.size());
  // Until taken, the parser holds on to the request and consumes nothing.
  size_t again = 99;
  EXPECT_EQ(parser.Parse(std::string_view(input).substr(consumed), &again),
            Status::kComplete);
  EXPECT_EQ(again, 0u);
  EXPECT_EQ(parser.TakeRequest().target, "/a");

  std::string_view rest = std::string_view(input).substr(consumed);
  ASSERT_EQ(parser.Parse(rest, &consumed), Status::kComplete);
  EXPECT_EQ(consumed, second.size());
  Request b = parser.TakeRequest();
  EXPECT_EQ(b.method, "POST");
  EXPECT_EQ(b.body, "xyz");

  rest.remove_prefix(consumed);
  EXPECT_EQ(parser.Parse(rest, &consumed), Status::kNeedMore);
  EXPECT_EQ(consumed, third_part.size());
  EXPECT_TRUE(parser.in_progress());
  ASSERT_EQ(parser.Parse("P/1.1\r\nHost: x\r\n\r\n", &consumed),
            Status::kComplete);
  EXPECT_EQ(parser.TakeRequest().target, "/c");
  EXPECT_FALSE(parser.in_progress());

  Outcome all = ParseEverySplit(input);
  ASSERT_EQ(all.requests.size(), 2u);
  EXPECT_EQ(all.leftover, "");  // the partial third went into the parser
}

TEST(RequestParserTest, ReadsAContentLengthBody) {
  Outcome out = ParseEverySplit(
      "PUT /config/x HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n"
      "hello world"
      "GET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 2u);
  EXPECT_EQ(out.requests[0].body, "hello world");
  EXPECT_EQ(out.requests[1].target, "/next");
}

TEST(RequestParserTest, AcceptsRepeatedEqualContentLengths) {
  Outcome out = ParseEverySplit(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n"
      "Content-Length: 2\r\n\r\nok");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 1u);
  EXPECT_EQ(out.requests[0].body, "ok");
}

TEST(RequestParserTest, DecodesChunkedBodiesWithExtensionsAndTrailers) {
  Outcome out = ParseEverySplit(
      "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n"
      "5\r\nhello\r\n"
      "1;name=value\r\n \r\n"
      "A \t;ext\r\n0123456789\r\n"
      "0\r\n"
      "X-Checksum: abc\r\n"
      "\r\n"
      "GET /after HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 2u);
  const Request& r = out.requests[0];
  EXPECT_TRUE(r.chunked);
  EXPECT_EQ(r.body, "hello 0123456789");
  EXPECT_THAT(r.trailers, ElementsAre(Pair("x-checksum", "abc")));
  EXPECT_EQ(out.requests[1].target, "/after");
}

TEST(RequestParserTest, KeepAliveFollowsTheVersionAndConnectionField) {
  auto keep_alive = [](std::string_view head) {
    Outcome out = ParseEverySplit(std::string(head) + "\r\n");
    EXPECT_FALSE(out.error) << head;
    return !out.requests.empty() && out.requests[0].keep_alive;
  };
  EXPECT_TRUE(keep_alive("GET / HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_FALSE(
      keep_alive("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"));
  EXPECT_FALSE(
      keep_alive("GET / HTTP/1.1\r\nHost: x\r\nConnection: TE, Close\r\n"));
  EXPECT_FALSE(keep_alive("GET / HTTP/1.0\r\n"));
  EXPECT_TRUE(keep_alive("GET / HTTP/1.0\r\nConnection: keep-alive\r\n"));
  EXPECT_FALSE(
      keep_alive("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n"));
}

TEST(RequestParserTest, ReportsWhenTheClientWaitsForContinue) {
  RequestParser parser;
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse("POST /up HTTP/1.1\r\nHost: x\r\n"
                         "Expect: 100-Continue\r\nContent-Length: 4\r\n\r\n",
                         &consumed),
            Status::kNeedMore);
  EXPECT_TRUE(parser.head_complete());
  EXPECT_TRUE(parser.awaiting_continue());
  EXPECT_EQ(parser.request().target, "/up");
  ASSERT_EQ(parser.Parse("ab", &consumed), Status::kNeedMore);
  EXPECT_FALSE(parser.awaiting_continue());  // the body is on its way
  ASSERT_EQ(parser.Parse("cd", &consumed), Status::kComplete);
  Request r = parser.TakeRequest();
  EXPECT_TRUE(r.expect_continue);
  EXPECT_EQ(r.body, "abcd");

  // Not for HTTP/1.0 (RFC 9110 10.1.1), nor without a body.
  parser.Reset();
  ASSERT_EQ(parser.Parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\n"
                         "Content-Length: 1\r\n\r\n",
                         &consumed),
            Status::kNeedMore);
  EXPECT_FALSE(parser.awaiting_continue());
  parser.Reset();
  ASSERT_EQ(parser.Parse("GET / HTTP/1.1\r\nHost: x\r\n"
                         "Expect: 100-continue\r\n\r\n",
                         &consumed),
            Status::kComplete);
  EXPECT_FALSE(parser.TakeRequest().expect_continue);
}

TEST(RequestParserTest, ExtractsThePathOfAbsoluteFormTargets) {
  Outcome out = ParseEverySplit(
      "GET http://127.0.0.1:3000/config/a?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET HTTP://example.com HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET http://example.com?q HTTP/1.1\r\nHost: x\r\n\r\n"
      "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.requests.size(), 4u);
  EXPECT_EQ(out.requests[0].path(), "/config/a");
  EXPECT_EQ(out.requests[0].query(), "x=1");
  EXPECT_EQ(out.requests[1].path(), "/");
  EXPECT_EQ(out.requests[2].path(), "/");
  EXPECT_EQ(out.requests[2].query(), "q");
  EXPECT_EQ(out.requests[3].path(), "*");
}

TEST(RequestParserTest, RejectsMalformedRequestLines) {
  EXPECT_EQ(ErrorStatus("GET\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET /\r\n\r\n"), 400);  // HTTP/0.9
  EXPECT_EQ(ErrorStatus("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1 \r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("G(T / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTX/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.x\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET /a\x01 HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET * HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
            400);
  EXPECT_EQ(ErrorStatus("GET a/b HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\rHost: x\r\n\r\n"), 400);  // bare CR
  EXPECT_EQ(
      ErrorStatus(std::string(300, '\n') + "GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
      400);
}

TEST(RequestParserTest, RejectsUnsupportedVersionsWith505) {
  Outcome h2 = ParseEverySplit("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  ASSERT_TRUE(h2.error);
  EXPECT_EQ(h2.error->status, 505);
  EXPECT_THAT(h2.error->message, HasSubstr("HTTP/2"));
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.2\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(ErrorStatus("GET / HTTP/0.9\r\n\r\n"), 505);
  EXPECT_EQ(ErrorStatus("GET / HTTP/3.0\r\n\r\n"), 505);
}

TEST(RequestParserTest, TurnsAwayATlsHandshakeAtTheFirstByte) {
  RequestParser parser;
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(std::string_view("\x16\x03\x01\x02", 4), &consumed),
            Status::kError);
  EXPECT_EQ(parser.error().status, 400);
  EXPECT_THAT(parser.error().message, HasSubstr("TLS"));
  // The error sticks.
  EXPECT_EQ(parser.Parse("GET / HTTP/1.1\r\n", &consumed), Status::kError);
  EXPECT_EQ(consumed, 0u);
}

TEST(RequestParserTest, RejectsMalformedHeaderFields) {
  // Obsolete line folding.
  for (std::string fold : {" 2\r\n", "\t2: 3\r\n"}) {
    Outcome folded = ParseEverySplit("GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n" +
                                     fold + "\r\n");
    ASSERT_TRUE(folded.error);
    EXPECT_EQ(folded.error->status, 400);
    EXPECT_THAT(folded.error->message, HasSubstr("folding"));
  }
  // Whitespace between the name and the colon.
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nX-A : 1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\n: 1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nX(A): 1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n\r\n"s), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n"), 400);
  // Host: required in 1.1, at most once.
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.0\r\n\r\n"), 0);
  // Expectations other than 100-continue.
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n"),
            417);
}

TEST(RequestParserTest, RejectsAmbiguousBodyFraming) {
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                        "Content-Length: 4\r\n\r\nabcd"),
            400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: 3, 4\r\n\r\nabcd"),
            400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: -1\r\n\r\n"),
            400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Content-Length: 0x10\r\n\r\n"),
            400);
  EXPECT_EQ(
      ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n\r\n"),
      400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Transfer-Encoding: gzip, chunked\r\n\r\n"),
            501);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Transfer-Encoding: identity\r\n\r\n"),
            501);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\n"
                        "Transfer-Encoding: chunked, chunked\r\n\r\n"),
            400);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.0\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            400);
}

TEST(RequestParserTest, RejectsMalformedChunks) {
  const std::string head =
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(ErrorStatus(head + "x\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "3 x\r\nabc\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "3\r\nabcd\r\n0\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "3\r\nabc0\r\n\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "1;" + std::string(5000, 'e') + "\r\n"), 400);
  EXPECT_EQ(ErrorStatus(head + "3\r\nabc\r\n0\r\nBad Trailer: x\r\n\r\n"), 400);
}

TEST(RequestParserTest, EnforcesTheUrlLimitWith414) {
  ParserLimits limits;
  limits.max_url_bytes = 100;
  std::string at_limit = "/" + std::string(99, 'a');
  EXPECT_EQ(
      ErrorStatus("GET " + at_limit + " HTTP/1.1\r\nHost: x\r\n\r\n", limits),
      0);
  EXPECT_EQ(
      ErrorStatus("GET " + at_limit + "b HTTP/1.1\r\nHost: x\r\n\r\n", limits),
      414);
  // A line that never ends is refused once it passes the limit, without
  // waiting for its end.
  RequestParser parser(limits);
  size_t consumed = 0;
  std::string endless = "GET /" + std::string(300, 'a');
  EXPECT_EQ(parser.Parse(endless, &consumed), Status::kError);
  EXPECT_EQ(parser.error().status, 414);
}

TEST(RequestParserTest, EnforcesHeaderLimitsWith431) {
  ParserLimits limits;
  limits.max_header_bytes = 64;
  limits.max_headers = 3;
  // "Host: x\r\n" is 9 bytes; 9 + 55 = 64 fits exactly.
  std::string fits =
      "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(55 - 5, 'v') +
      "\r\n\r\n";
  EXPECT_EQ(ErrorStatus(fits, limits), 0);
  std::string over =
      "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(55 - 4, 'v') +
      "\r\n\r\n";
  EXPECT_EQ(ErrorStatus(over, limits), 431);
  EXPECT_EQ(
      ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n", limits),
      0);
  EXPECT_EQ(ErrorStatus("GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\n"
                        "\r\n",
                        limits),
            431);
  // A header line that never ends.
  RequestParser parser(limits);
  size_t consumed = 0;
  EXPECT_EQ(
      parser.Parse("GET / HTTP/1.1\r\nX: " + std::string(100, 'v'), &consumed),
      Status::kError);
  EXPECT_EQ(parser.error().status, 431);
}

TEST(RequestParserTest, EnforcesTheBodyLimitWith413) {
  ParserLimits limits;
  limits.max_body_bytes = 10;
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n"
                        "\r\n0123456789",
                        limits),
            0);
  // Refused as soon as the head is complete: no body bytes needed.
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n"
                        "\r\n",
                        limits),
            413);
  EXPECT_EQ(ErrorStatus("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: "
                        "99999999999999999999999999\r\n\r\n",
                        limits),
            413);
  const std::string chunked =
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(
      ErrorStatus(chunked + "5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n", limits),
      0);
  EXPECT_EQ(ErrorStatus(chunked + "5\r\n01234\r\n6\r\n", limits), 413);
  EXPECT_EQ(ErrorStatus(chunked + "fffffffffffffffffffff\r\n", limits), 413);
}

TEST(RequestParserTest, ReportsProgressOnlyForRealRequestBytes) {
  RequestParser parser;
  size_t consumed = 0;
  EXPECT_FALSE(parser.in_progress());
  ASSERT_EQ(parser.Parse("\r\n", &consumed), Status::kNeedMore);
  EXPECT_FALSE(parser.in_progress());
  ASSERT_EQ(parser.Parse("G", &consumed), Status::kNeedMore);
  EXPECT_TRUE(parser.in_progress());
  EXPECT_FALSE(parser.head_complete());
}

TEST(RequestParserTest, ParsesManyRequestsInSequence) {
  std::string input;
  for (int i = 0; i < 50; ++i) {
    input += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  Outcome out = ParseIn(input, 5);
  ASSERT_FALSE(out.error);
  ASSERT_EQ(out.requests.size(), 50u);
  EXPECT_EQ(out.requests[49].target, "/49");
}

// ---------------------------------------------------------------------------
// Response writing

TEST(ResponseHeadTest, FramesWithContentLength) {
  EXPECT_EQ(ResponseHead(200, {{"Content-Type", "application/json"}}, 12, true),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            "Content-Length: 12\r\n\r\n");
  EXPECT_EQ(ResponseHead(404, {}, 0, false),
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n"
            "Connection: close\r\n\r\n");
}

TEST(ResponseHeadTest, ChunksWithoutALengthAndClosesForHttp10) {
  EXPECT_EQ(ResponseHead(200, {}, std::nullopt, true),
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
  // HTTP/1.0 has no chunked coding: the body ends with the connection.
  EXPECT_EQ(ResponseHead(200, {}, std::nullopt, true, 0),
            "HTTP/1.1 200 OK\r\n\r\n");
  EXPECT_EQ(ResponseHead(200, {}, 2, true, 0),
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
            "Connection: keep-alive\r\n\r\n");
}

TEST(ResponseHeadTest, OmitsFramingForResponsesWithoutBody) {
  EXPECT_EQ(ResponseHead(204, {}, 0, true), "HTTP/1.1 204 No Content\r\n\r\n");
  EXPECT_EQ(ResponseHead(304, {}, std::nullopt, true),
            "HTTP/1.1 304 Not Modified\r\n\r\n");
  EXPECT_EQ(ResponseHead(100, {}, std::nullopt, true),
            "HTTP/1.1 100 Continue\r\n\r\n");
}

TEST(ResponseHeadTest, DropsFramingFieldsAndFieldsThatWouldSplitTheHead) {
  std::string head = ResponseHead(200,
                                  {{"content-length", "999"},
                                   {"Transfer-Encoding", "gzip"},
                                   {"Connection", "upgrade"},
                                   {"X-Evil", "a\r\nSet-Cookie: b"},
                                   {"Bad Name", "v"},
                                   {"X-Nul", std::string("a\0b", 3)},
                                   {"X-Good", "yes"}},
                                  3, true, 1, "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(head,
            "HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
            "X-Good: yes\r\nContent-Length: 3\r\n\r\n");
}

TEST(ResponseHeadTest, KnowsReasonPhrases) {
  EXPECT_EQ(ReasonPhrase(200), "OK");
  EXPECT_EQ(ReasonPhrase(413), "Content Too Large");
  EXPECT_EQ(ReasonPhrase(414), "URI Too Long");
  EXPECT_EQ(ReasonPhrase(431), "Request Header Fields Too Large");
  EXPECT_EQ(ReasonPhrase(505), "HTTP Version Not Supported");
  EXPECT_EQ(ReasonPhrase(599), "");
  EXPECT_EQ(ResponseHead(599, {}, 0, true),
            "HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n");
}

TEST(ChunkTest, FramesChunks) {
  EXPECT_EQ(ChunkHeader(0), "0\r\n");
  EXPECT_EQ(ChunkHeader(26), "1a\r\n");
  EXPECT_EQ(ChunkHeader(4096), "1000\r\n");
  std::string out;
  AppendChunk(&out, "hello");
  AppendChunk(&out, "");
  out += kLastChunk;
  EXPECT_EQ(out, "5\r\nhello\r\n0\r\n\r\n");

  // What we write, we read back.
  Outcome parsed = ParseIn(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + out,
      0);
  ASSERT_EQ(parsed.requests.size(), 1u);
  EXPECT_EQ(parsed.requests[0].body, "hello");
}

std::vector<SseEvent> ReadSse(const std::string& stream) {
  SseParser parser;
  std::vector<SseEvent> events;
  EXPECT_TRUE(parser.Feed(stream, &events).ok());
  return events;
}

TEST(SseTest, WritesEventsThatReadBackIntact) {
  EXPECT_EQ(FormatSseEvent("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(FormatSseEvent("one\ntwo", "message", "7"),
            "event: message\nid: 7\ndata: one\ndata: two\n\n");

  for (std::string data :
       {std::string(""), std::string("x"), std::string("a\nb"),
        std::string("a\r\nb\rc"), std::string("trailing\n"),
        std::string("\n\n"), std::string("  leading spaces"),
        std::string(":colon first")}) {
    std::vector<SseEvent> events =
        ReadSse(FormatSseEvent(data, "update", "42"));
    ASSERT_EQ(events.size(), 1u) << data;
    // Line breaks come back as LF (a CRLF as one).
    size_t crlf;
    while ((crlf = data.find("\r\n")) != std::string::npos) {
      data.replace(crlf, 2, "\n");
    }
    for (char& c : data) {
      if (c == '\r') c = '\n';
    }
    EXPECT_EQ(events[0].data, data);
    EXPECT_EQ(events[0].event, "update");
    EXPECT_EQ(events[0].id, "42");
  }
}

TEST(SseTest, StripsLineBreaksFromEventNamesAndIds) {
  std::vector<SseEvent> events =
      ReadSse(FormatSseEvent("d", "evil\r\ndata: injected", "1\n2\0"s));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "d");
  EXPECT_EQ(events[0].event, "evildata: injected");
  EXPECT_EQ(events[0].id, "12");
}

TEST(SseTest, CommentsAreIgnoredByReceivers) {
  EXPECT_EQ(FormatSseComment("ping"), ": ping\n\n");
  EXPECT_EQ(FormatSseComment(""), ":\n\n");
  EXPECT_EQ(FormatSseComment("a\nb"), ": a\n: b\n\n");
  std::vector<SseEvent> events =
      ReadSse(FormatSseComment("keep-alive") + FormatSseEvent("x") +
              FormatSseComment("a\ndata: not an event"));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].data, "x");
}

TEST(HttpDateTest, FormatsImfFixdate) {
  EXPECT_EQ(HttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(HttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
}

}  // namespace
}  // namespace inspector::http
