// Unit tests of the metadata proxy (server/oauth/metadata_proxy.h): the
// first event of an event stream, the answer for what a URL answered, and
// the fetch's limits against sockets on 127.0.0.1.
#include "server/oauth/metadata_proxy.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/http/http_server.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/subprocess.h"

namespace inspector::oauth {
namespace metadata_proxy_test {

using Json = nlohmann::json;

std::string Reason(const absl::Status& status) { return ErrorReason(status); }

TEST(FirstSseEventTest, WaitsForTheBlankLineThatEndsTheEvent) {
  EXPECT_FALSE(FirstSseEvent("event: endpoint\ndata: /messages").has_value());
  EXPECT_FALSE(FirstSseEvent("event: endpoint\ndata: /messages\n").has_value());
  auto event = FirstSseEvent("event: endpoint\ndata: /messages?sessionId=1\n\n");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->event, "endpoint");
  EXPECT_EQ(event->data, "/messages?sessionId=1");
}

TEST(FirstSseEventTest, SkipsCommentsAndEventsWithoutDataAndJoinsDataLines) {
  auto event = FirstSseEvent(
      ": connected\r\n\r\nretry: 1000\r\n\r\nid: 7\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n");
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->event, "message");
  EXPECT_EQ(event->data, "{\"a\":\n1}");
}

TEST(MetadataAnswerTest, JsonObjectIsAnsweredAsItIs) {
  auto answer = MetadataAnswer("https://as.example.com/.well-known/x", 200,
                               "application/json",
                               R"({"issuer":"https://as.example.com","n":1})");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(Json::parse(*answer)["issuer"], "https://as.example.com");
}

TEST(MetadataAnswerTest, LegacySseEndpointEventGivesTheAbsoluteEndpoint) {
  auto answer = MetadataAnswer("http://127.0.0.1:9/sse", 200,
                               "text/event-stream; charset=utf-8",
                               "event: endpoint\ndata: /messages?sessionId=abc\n\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  Json parsed = Json::parse(*answer);
  EXPECT_EQ(parsed["transport"], "sse");
  EXPECT_EQ(parsed["endpoint"], "http://127.0.0.1:9/messages?sessionId=abc");
}

TEST(MetadataAnswerTest, JsonInAnEventStreamIsAnsweredAsItIs) {
  auto answer = MetadataAnswer("https://mcp.example.com/mcp", 200,
                               "text/event-stream",
                               "event: message\ndata: {\"resource\":\"r\"}\n\n");
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(Json::parse(*answer)["resource"], "r");
}

TEST(MetadataAnswerTest, ErrorsNameTheProblem) {
  auto missing = MetadataAnswer("https://x.example/m", 404, "text/plain", "no");
  EXPECT_EQ(Reason(missing.status()), "NOT_FOUND");
  auto failed = MetadataAnswer("https://x.example/m", 500, "text/plain", "boom");
  EXPECT_EQ(Reason(failed.status()), "INVALID_RESPONSE");
  EXPECT_TRUE(absl::StrContains(failed.status().message(), "HTTP 500: boom"));
  auto html = MetadataAnswer("https://x.example/m", 200, "text/html", "<html>");
  EXPECT_EQ(Reason(html.status()), "INVALID_RESPONSE");
  EXPECT_TRUE(absl::StrContains(html.status().message(), "not answer with a JSON object"));
  auto array = MetadataAnswer("https://x.example/m", 200, "application/json", "[1]");
  EXPECT_EQ(Reason(array.status()), "INVALID_RESPONSE");
  auto moved = MetadataAnswer("https://x.example/m", 302, "", "");
  EXPECT_EQ(Reason(moved.status()), "INVALID_RESPONSE");
}

TEST(FetchMetadataTest, RefusesMissingNonHttpsAndScriptUrlsWithoutFetching) {
  EXPECT_EQ(Reason(FetchMetadata("").status()), "INVALID_REQUEST");
  EXPECT_EQ(Reason(FetchMetadata("http://as.example.com/.well-known/x").status()),
            "INVALID_REQUEST");
  EXPECT_EQ(Reason(FetchMetadata("javascript:alert(1)").status()), "INVALID_REQUEST");
  EXPECT_EQ(Reason(FetchMetadata("file:///etc/passwd").status()), "INVALID_REQUEST");
}

TEST(FetchMetadataTest, RefusedPortIsConnectionRefused) {
  testing::RefusingPort port;
  auto answer = FetchMetadata(absl::StrCat("http://127.0.0.1:", port.port(), "/m"));
  EXPECT_EQ(Reason(answer.status()), "CONNECTION_REFUSED") << answer.status();
}

TEST(FetchMetadataTest, ASilentServerTimesOut) {
  // Listens (the kernel accepts the connection) but never answers.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  MetadataFetchOptions options;
  options.timeout = absl::Milliseconds(300);
  auto answer = FetchMetadata(
      absl::StrCat("http://127.0.0.1:", ntohs(addr.sin_port), "/m"), options);
  close(fd);
  EXPECT_EQ(Reason(answer.status()), "CONNECTION_TIMEOUT") << answer.status();
}

// A real HTTP server on 127.0.0.1 answering what `handler` says.
class MetadataServerTest : public ::testing::Test {
 protected:
  void Serve(http::HttpHandler handler) {
    http::HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = http::HttpServer::Start(options, std::move(handler));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::string Url(absl::string_view path) const {
    return absl::StrCat("http://127.0.0.1:", server_->port(), path);
  }
  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
  }
  std::unique_ptr<http::HttpServer> server_;
};

TEST_F(MetadataServerTest, AnswersTheJsonOfTheDocument) {
  Serve([](std::shared_ptr<http::HttpExchange> exchange) {
    exchange->Respond(200, {{"Content-Type", "application/json"}},
                      R"({"issuer":"https://as.example.com"})");
  });
  auto answer = FetchMetadata(Url("/.well-known/oauth-authorization-server"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(Json::parse(*answer)["issuer"], "https://as.example.com");
}

TEST_F(MetadataServerTest, ABodyOverTheLimitIsTooLarge) {
  Serve([](std::shared_ptr<http::HttpExchange> exchange) {
    exchange->Respond(200, {{"Content-Type", "application/json"}},
                      absl::StrCat(R"({"padding":")", std::string(8192, 'x'),
                                   R"("})"));
  });
  MetadataFetchOptions options;
  options.max_bytes = 4096;
  auto answer = FetchMetadata(Url("/m"), options);
  EXPECT_EQ(Reason(answer.status()), "TOO_LARGE") << answer.status();
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "more than 4096 bytes"))
      << answer.status();
}

TEST_F(MetadataServerTest, ARedirectIsNotFollowed) {
  std::atomic<int> followed{0};
  Serve([this, &followed](std::shared_ptr<http::HttpExchange> exchange) {
    if (exchange->request().target == "/moved") {
      exchange->Respond(302, {{"Location", Url("/target")}}, "");
    } else {
      ++followed;
      exchange->Respond(200, {{"Content-Type", "application/json"}}, "{}");
    }
  });
  auto answer = FetchMetadata(Url("/moved"));
  EXPECT_EQ(Reason(answer.status()), "INVALID_RESPONSE") << answer.status();
  EXPECT_TRUE(absl::StrContains(answer.status().message(), "HTTP 302"))
      << answer.status();
  EXPECT_EQ(followed, 0);
}

TEST_F(MetadataServerTest, AnEventStreamIsReadUpToItsFirstEvent) {
  // The stream stays open after its endpoint event, as a legacy SSE
  // server's does: the answer comes without waiting for its end.
  std::shared_ptr<http::HttpExchange> open_stream;
  Serve([&open_stream](std::shared_ptr<http::HttpExchange> exchange) {
    exchange->StartStream(200, {{"Content-Type", "text/event-stream"}});
    exchange->Write("event: endpoint\ndata: /messages?session=1\n\n");
    open_stream = exchange;
  });
  MetadataFetchOptions options;
  options.timeout = absl::Seconds(30);
  absl::Time start = absl::Now();
  auto answer = FetchMetadata(Url("/sse"), options);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  Json parsed = Json::parse(*answer);
  EXPECT_EQ(parsed["transport"], "sse");
  EXPECT_EQ(parsed["endpoint"], Url("/messages?session=1"));
}

}  // namespace metadata_proxy_test
}  // namespace inspector::oauth
