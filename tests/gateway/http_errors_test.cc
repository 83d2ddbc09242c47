// Tests of the REST error body and the HTTP status of each failure.
#include "gateway/http_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace inspector::gateway {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(HttpErrorsTest, RendersTheSeedsServerNotFoundExample) {
  HttpError error = RenderGrpcError(
      ToGrpcStatus(Error(ErrorCode::SERVER_NOT_FOUND,
                         "No server configuration found with ID 'xyz789'",
                         {{"serverId", "xyz789"}})));
  EXPECT_EQ(error.status, 404);
  EXPECT_EQ(
      error.body,
      R"({"error":{"code":"SERVER_NOT_FOUND",)"
      R"("message":"No server configuration found with ID 'xyz789'",)"
      R"("category":"request","retryable":false,)"
      R"("details":{"serverId":"xyz789"},)"
      R"("helpUrl":"https://modelcontextprotocol.io/inspector/errors/server-not-found"}})");
}

TEST(HttpErrorsTest, WritesNumericDetailsAsNumbers) {
  HttpError error = RenderGrpcError(ToGrpcStatus(Error(
      ErrorCode::CONNECTION_TIMEOUT, "Connection to server timed out after 30s",
      {{"serverId", "abc123"},
       {"serverName", "my-server"},
       {"elapsed", "30000"},
       {"exitCode", "not a number"},
       {"jsonrpcCode", "-32601"},
       {"jsonrpcData", R"({"detail":[1,2]})"}})));
  EXPECT_EQ(error.status, 504);
  Json body = Json::parse(error.body);
  EXPECT_EQ(body["error"]["code"], "CONNECTION_TIMEOUT");
  EXPECT_EQ(body["error"]["details"]["elapsed"], 30000);
  EXPECT_EQ(body["error"]["details"]["jsonrpcCode"], -32601);
  EXPECT_EQ(body["error"]["details"]["exitCode"], "not a number");
  EXPECT_EQ(body["error"]["details"]["serverId"], "abc123");
  EXPECT_EQ(body["error"]["details"]["jsonrpcData"],
            Json::parse(R"({"detail":[1,2]})"));
  EXPECT_EQ(
      body["error"]["helpUrl"],
      "https://modelcontextprotocol.io/inspector/errors/connection-timeout");
  EXPECT_THAT(error.body, HasSubstr(R"("elapsed":30000)"));

  // A key not known to be numeric stays a string even if it looks like one.
  HttpError text = RenderGrpcError(ToGrpcStatus(
      Error(ErrorCode::INVALID_CONFIG, "bad", {{"field", "123"}})));
  EXPECT_THAT(text.body, HasSubstr(R"("field":"123")"));
  // Invalid JSON in a JSON-valued key stays a string.
  HttpError data = RenderGrpcError(ToGrpcStatus(
      Error(ErrorCode::SERVER_ERROR, "x", {{"jsonrpcData", "{oops"}})));
  EXPECT_THAT(data.body, HasSubstr(R"("jsonrpcData":"{oops")"));
}

TEST(HttpErrorsTest, OmitsEmptyDetails) {
  HttpError error = RenderGrpcError(
      ToGrpcStatus(Error(ErrorCode::SESSION_INVALID, "missing token")));
  EXPECT_EQ(error.status, 401);
  EXPECT_EQ(
      error.body,
      R"({"error":{"code":"SESSION_INVALID","message":"missing token",)"
      R"("category":"request","retryable":false,)"
      R"("helpUrl":"https://modelcontextprotocol.io/inspector/errors/session-invalid"}})");
}

TEST(HttpErrorsTest, EveryReasonHasItsHttpStatus) {
  const std::pair<ErrorCode, int> table[] = {
      {ErrorCode::SERVER_NOT_FOUND, 404},
      {ErrorCode::CONNECTION_TIMEOUT, 504},
      {ErrorCode::CONNECTION_REFUSED, 502},
      {ErrorCode::SPAWN_FAILED, 500},
      {ErrorCode::PROCESS_CRASHED, 500},
      {ErrorCode::INVALID_REQUEST, 400},
      {ErrorCode::INVALID_CONFIG, 400},
      {ErrorCode::SESSION_INVALID, 401},
      {ErrorCode::TRANSPORT_ERROR, 502},
      {ErrorCode::PROTOCOL_ERROR, 502},
      {ErrorCode::REQUEST_TIMEOUT, 504},
      {ErrorCode::ALREADY_EXISTS, 409},
      {ErrorCode::NOT_FOUND, 404},
      {ErrorCode::FAILED_PRECONDITION, 409},
      {ErrorCode::CANCELLED, 499},
      {ErrorCode::NOT_IMPLEMENTED, 501},
      {ErrorCode::TOO_LARGE, 413},
      {ErrorCode::INTERNAL_ERROR, 500},
      {ErrorCode::SERVER_ERROR, 502},
      {ErrorCode::UNAVAILABLE, 503},
      {ErrorCode::INVALID_RESPONSE, 502},
      {ErrorCode::PROTOCOL_VERSION_MISMATCH, 502},
      {ErrorCode::AUTHENTICATION_FAILED, 502},
      {ErrorCode::RATE_LIMITED, 429},
      {ErrorCode::INTERCEPT_DROPPED, 409},
  };
  for (const auto& [code, http] : table) {
    std::string name = v1::ErrorCode_Name(code);
    HttpError error = RenderGrpcError(ToGrpcStatus(Error(code, "m")));
    EXPECT_EQ(error.status, http) << name;
    EXPECT_EQ(HttpStatusForErrorCode(code), http) << name;
    Json body = Json::parse(error.body);
    EXPECT_EQ(body["error"]["code"], name);
    EXPECT_EQ(body["error"]["helpUrl"],
              std::string(kHelpUrlBase) + KebabCase(name));
  }
}

// The seed's ClassifiedError: every body says its category and whether a
// retry may help, and so do the gRPC details.
TEST(HttpErrorsTest, BodiesCarryTheSeedsCategoryAndRetryable) {
  const struct {
    ErrorCode code;
    const char* category;
    bool retryable;
  } table[] = {
      {ErrorCode::CONNECTION_REFUSED, "connection", true},
      {ErrorCode::SPAWN_FAILED, "connection", false},
      {ErrorCode::AUTHENTICATION_FAILED, "connection", false},
      {ErrorCode::TRANSPORT_ERROR, "transport", true},
      {ErrorCode::PROCESS_CRASHED, "transport", true},
      {ErrorCode::CONNECTION_TIMEOUT, "timeout", true},
      {ErrorCode::REQUEST_TIMEOUT, "timeout", true},
      {ErrorCode::PROTOCOL_ERROR, "protocol", false},
      {ErrorCode::INVALID_RESPONSE, "protocol", false},
      {ErrorCode::PROTOCOL_VERSION_MISMATCH, "protocol", false},
      {ErrorCode::SERVER_ERROR, "server", false},
      {ErrorCode::RATE_LIMITED, "server", true},
      {ErrorCode::CANCELLED, "cancelled", true},
      {ErrorCode::INVALID_CONFIG, "request", false},
      {ErrorCode::INTERNAL_ERROR, "internal", false},
      {ErrorCode::UNAVAILABLE, "internal", true},
  };
  for (const auto& c : table) {
    std::string name = v1::ErrorCode_Name(c.code);
    grpc::Status status =
        ToGrpcStatus(Error(c.code, "m", {{"retryAfter", "3"}}));
    Json body = Json::parse(RenderGrpcError(status).body);
    EXPECT_EQ(body["error"]["category"], c.category) << name;
    EXPECT_EQ(body["error"]["retryable"], c.retryable) << name;
    // Not repeated among the details; numbers stay numbers.
    EXPECT_FALSE(body["error"]["details"].contains("category")) << name;
    EXPECT_EQ(body["error"]["details"]["retryAfter"], 3) << name;
    // A gRPC caller reads them from ErrorInfo.metadata.
    google::rpc::Status rpc;
    ASSERT_TRUE(rpc.ParseFromString(status.error_details()));
    google::rpc::ErrorInfo info;
    ASSERT_TRUE(rpc.details(0).UnpackTo(&info));
    EXPECT_EQ(info.metadata().at("category"), c.category) << name;
    EXPECT_EQ(info.metadata().at("retryable"), c.retryable ? "true" : "false");
  }
  // The gateway's own codes are the caller's.
  Json own = Json::parse(RenderError(405, "METHOD_NOT_ALLOWED", "no").body);
  EXPECT_EQ(own["error"]["category"], "request");
  EXPECT_EQ(own["error"]["retryable"], false);
}

TEST(HttpErrorsTest, BareGrpcCodesMapLikeGrpcGateway) {
  struct Case {
    grpc::StatusCode code;
    int http;
    const char* reason;
  };
  const Case cases[] = {
      {grpc::StatusCode::CANCELLED, 499, "CANCELLED"},
      {grpc::StatusCode::UNKNOWN, 500, "INTERNAL_ERROR"},
      {grpc::StatusCode::INVALID_ARGUMENT, 400, "INVALID_REQUEST"},
      {grpc::StatusCode::DEADLINE_EXCEEDED, 504, "REQUEST_TIMEOUT"},
      {grpc::StatusCode::NOT_FOUND, 404, "NOT_FOUND"},
      {grpc::StatusCode::ALREADY_EXISTS, 409, "ALREADY_EXISTS"},
      {grpc::StatusCode::PERMISSION_DENIED, 403, "SESSION_INVALID"},
      {grpc::StatusCode::UNAUTHENTICATED, 401, "SESSION_INVALID"},
      {grpc::StatusCode::RESOURCE_EXHAUSTED, 413, "TOO_LARGE"},  // size limits
      {grpc::StatusCode::FAILED_PRECONDITION, 400, "FAILED_PRECONDITION"},
      {grpc::StatusCode::ABORTED, 409, "FAILED_PRECONDITION"},
      {grpc::StatusCode::OUT_OF_RANGE, 400, "INVALID_REQUEST"},
      {grpc::StatusCode::UNIMPLEMENTED, 501, "NOT_IMPLEMENTED"},
      {grpc::StatusCode::INTERNAL, 500, "INTERNAL_ERROR"},
      {grpc::StatusCode::UNAVAILABLE, 503, "TRANSPORT_ERROR"},
      {grpc::StatusCode::DATA_LOSS, 500, "INTERNAL_ERROR"},
  };
  for (const Case& c : cases) {
    HttpError error = RenderGrpcError(grpc::Status(c.code, "plain"));
    EXPECT_EQ(error.status, c.http) << c.reason;
    Json body = Json::parse(error.body);
    EXPECT_EQ(body["error"]["code"], c.reason);
    EXPECT_EQ(body["error"]["message"], "plain");
    EXPECT_FALSE(body["error"].contains("details"));
  }
  EXPECT_EQ(HttpStatusForGrpcCode(grpc::StatusCode::OK), 200);
}

google::rpc::Status RpcStatus(grpc::StatusCode code,
                              const std::string& reason) {
  google::rpc::Status status;
  status.set_code(code);
  status.set_message("m");
  google::rpc::ErrorInfo info;
  info.set_reason(reason);
  info.set_domain("inspector.v1");
  (*info.mutable_metadata())["serverId"] = "s1";
  status.add_details()->PackFrom(info);
  return status;
}

// The gateway's own errors link to help like every other error.
TEST(HttpErrorsTest, GatewayErrorsHaveAHelpLink) {
  for (const char* code :
       {"METHOD_NOT_ALLOWED", "FORBIDDEN_HOST", "FORBIDDEN_ORIGIN", "NOT_FOUND"}) {
    HttpError error = RenderError(405, code, "m");
    Json body = Json::parse(error.body);
    EXPECT_EQ(body["error"]["helpUrl"],
              std::string("https://modelcontextprotocol.io/inspector/errors/") +
                  KebabCase(code))
        << error.body;
  }
}

TEST(HttpErrorsTest, UsesAHelpLinkFromTheDetails) {
  google::rpc::Status status =
      RpcStatus(grpc::StatusCode::NOT_FOUND, "SERVER_NOT_FOUND");
  google::rpc::Help help;
  help.add_links()->set_url("");
  auto* link = help.add_links();
  link->set_description("docs");
  link->set_url("https://example.test/help?a=1&b=\"2\"");
  status.add_details()->PackFrom(help);
  HttpError error = RenderGrpcError(grpc::Status(
      grpc::StatusCode::NOT_FOUND, "m", status.SerializeAsString()));
  EXPECT_EQ(error.status, 404);
  Json body = Json::parse(error.body);
  EXPECT_EQ(body["error"]["helpUrl"], "https://example.test/help?a=1&b=\"2\"");
  EXPECT_EQ(body["error"]["details"]["serverId"], "s1");
}

TEST(HttpErrorsTest, UnknownReasonsKeepTheirNameAndUseTheGrpcCode) {
  google::rpc::Status status =
      RpcStatus(grpc::StatusCode::UNAVAILABLE, "SOMETHING_NEW");
  HttpError error = RenderGrpcError(grpc::Status(
      grpc::StatusCode::UNAVAILABLE, "m", status.SerializeAsString()));
  EXPECT_EQ(error.status, 503);
  Json body = Json::parse(error.body);
  EXPECT_EQ(body["error"]["code"], "SOMETHING_NEW");
  EXPECT_EQ(body["error"]["helpUrl"],
            "https://modelcontextprotocol.io/inspector/errors/something-new");

  // An attached known reason wins over the code's own mapping.
  google::rpc::Status known =
      RpcStatus(grpc::StatusCode::UNAVAILABLE, "CONNECTION_REFUSED");
  EXPECT_EQ(RenderGrpcError(grpc::Status(grpc::StatusCode::UNAVAILABLE, "m",
                                         known.SerializeAsString()))
                .status,
            502);
  // Garbage details are ignored.
  EXPECT_EQ(RenderGrpcError(grpc::Status(grpc::StatusCode::NOT_FOUND, "m",
                                         "\xff\xff garbage"))
                .status,
            404);
}

TEST(HttpErrorsTest, RendersAbslStatusesFromTheTranscoder) {
  HttpError error =
      RenderStatus(Error(ErrorCode::INVALID_REQUEST,
                         "invalid value for field \"x\"", {{"field", "x"}}));
  EXPECT_EQ(error.status, 400);
  Json body = Json::parse(error.body);
  EXPECT_EQ(body["error"]["code"], "INVALID_REQUEST");
  EXPECT_EQ(body["error"]["message"], "invalid value for field \"x\"");
  EXPECT_EQ(body["error"]["details"]["field"], "x");
  EXPECT_EQ(RenderStatus(absl::UnavailableError("x")).status, 503);
  HttpError ok = RenderStatus(absl::OkStatus());
  EXPECT_EQ(ok.status, 500);
  EXPECT_EQ(Json::parse(ok.body)["error"]["code"], "INTERNAL_ERROR");
}

TEST(HttpErrorsTest, GatewayErrorsHaveTheSameShape) {
  HttpError not_allowed =
      RenderError(405, "METHOD_NOT_ALLOWED", "POST is not allowed on /health",
                  {{"allowed", "GET"}});
  EXPECT_EQ(not_allowed.status, 405);
  EXPECT_EQ(not_allowed.body, R"({"error":{"code":"METHOD_NOT_ALLOWED",)"
                              R"("message":"POST is not allowed on /health",)"
                              R"("category":"request","retryable":false,)"
                              R"("details":{"allowed":"GET"},)"
                              R"("helpUrl":"https://modelcontextprotocol.io/)"
                              R"(inspector/errors/method-not-allowed"}})");
  HttpError not_found = RenderError(404, "NOT_FOUND", "no route for GET /x");
  EXPECT_EQ(not_found.status, 404);
  EXPECT_EQ(
      not_found.body,
      R"({"error":{"code":"NOT_FOUND","message":"no route for GET /x",)"
      R"("category":"request","retryable":false,)"
      R"("helpUrl":"https://modelcontextprotocol.io/inspector/errors/not-found"}})");
  HttpError large = RenderError(413, "TOO_LARGE", "body too large",
                                {{"limitBytes", "1048576"}});
  EXPECT_THAT(large.body, HasSubstr(R"("limitBytes":1048576)"));
}

TEST(HttpErrorsTest, EscapesEverythingIntoValidJson) {
  std::string message = "quote \" backslash \\ newline \n tab \t nul ";
  message.push_back('\0');
  message += " bell \x07 del \x7f caf\xC3\xA9 bad \xFF\xC3 end";
  HttpError error =
      RenderError(400, "INVALID_REQUEST", message, {{"k\"ey\n", "v\\al"}});
  Json body = Json::parse(error.body);  // throws if not valid JSON
  std::string expected = "quote \" backslash \\ newline \n tab \t nul ";
  expected.push_back('\0');
  expected +=
      " bell \x07 del \x7f caf\xC3\xA9 bad \xEF\xBF\xBD\xEF\xBF\xBD end";
  EXPECT_EQ(body["error"]["message"], expected);
  EXPECT_EQ(body["error"]["details"]["k\"ey\n"], "v\\al");
  EXPECT_THAT(error.body, HasSubstr(R"(\u0000)"));
  EXPECT_THAT(error.body, HasSubstr(R"(\u0007)"));
  EXPECT_EQ(error.body.find('\n'), std::string::npos);
}

TEST(HttpErrorsTest, Helpers) {
  EXPECT_EQ(KebabCase("SERVER_NOT_FOUND"), "server-not-found");
  EXPECT_EQ(KebabCase("X"), "x");
  for (const char* number : {"0", "-1", "30000", "1.5", "-0.25e10", "1E+3"}) {
    EXPECT_TRUE(IsJsonNumber(number)) << number;
  }
  for (const char* text : {"", "-", "01", "1.", ".5", "1e", "+1", "0x10", "1 ",
                           "NaN", "Infinity"}) {
    EXPECT_FALSE(IsJsonNumber(text)) << text;
  }
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  std::string out;
  AppendJsonString(&out, "a\"b");
  EXPECT_EQ(out, R"("a\"b")");
}

TEST(RestSessionInvalidMessageTest, StreamsMayCarryTheTokenInTheQuery) {
  std::string unary = RestSessionInvalidMessage(PresentedToken::kNone, false);
  EXPECT_EQ(unary.find("?token="), std::string::npos) << unary;
  std::string stream = RestSessionInvalidMessage(PresentedToken::kNone, true);
  EXPECT_NE(stream.find("missing session token: send the header "
                        "'Authorization: Bearer <token>'"),
            std::string::npos)
      << stream;
  EXPECT_NE(stream.find("add ?token=<token> to the URL"), std::string::npos)
      << stream;
}

}  // namespace
}  // namespace inspector::gateway
