#include "clients/cli/cli_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clients/cli/exit_codes.h"
#include "common/errors.h"

namespace inspector::cli {
namespace cli_errors_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

ErrorContext Context() {
  ErrorContext context;
  context.address = "127.0.0.1:50051";
  context.timeout_seconds = 10;
  context.token_source = "/tmp/token";
  return context;
}

// A daemon error as the CLI receives it: through the wire format.
absl::Status FromDaemon(ErrorCode code, const std::string& message,
                        ErrorDetails details = {}) {
  return FromGrpcStatus(ToGrpcStatus(Error(code, message, details)));
}

TEST(ExitCodeForReasonTest, MapsEveryReason) {
  EXPECT_EQ(ExitCodeForReason("SERVER_NOT_FOUND"), kExitNotFound);
  EXPECT_EQ(ExitCodeForReason("NOT_FOUND"), kExitNotFound);
  EXPECT_EQ(ExitCodeForReason("SESSION_INVALID"), kExitAuth);
  EXPECT_EQ(ExitCodeForReason("INVALID_CONFIG"), kExitInvalidInput);
  EXPECT_EQ(ExitCodeForReason("INVALID_REQUEST"), kExitInvalidInput);
  EXPECT_EQ(ExitCodeForReason("TOO_LARGE"), kExitInvalidInput);
  EXPECT_EQ(ExitCodeForReason("ALREADY_EXISTS"), kExitConflict);
  EXPECT_EQ(ExitCodeForReason("FAILED_PRECONDITION"), kExitConflict);
  for (const char* reason :
       {"CONNECTION_TIMEOUT", "CONNECTION_REFUSED", "SPAWN_FAILED",
        "PROCESS_CRASHED", "TRANSPORT_ERROR", "PROTOCOL_ERROR",
        "REQUEST_TIMEOUT"}) {
    EXPECT_EQ(ExitCodeForReason(reason), kExitMcpServer) << reason;
  }
  EXPECT_EQ(ExitCodeForReason("NOT_IMPLEMENTED"), kExitNotImplemented);
  EXPECT_EQ(ExitCodeForReason("INTERNAL_ERROR"), kExitOther);
  EXPECT_EQ(ExitCodeForReason("CANCELLED"), kExitOther);
  EXPECT_EQ(ExitCodeForReason("SOMETHING_NEW"), kExitOther);
  EXPECT_EQ(ExitCodeForReason(""), kExitOther);
}

TEST(ExitCodeForReasonTest, CoversEveryErrorCodeOfTheContract) {
  const auto* descriptor = v1::ErrorCode_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const auto* value = descriptor->value(i);
    if (value->number() == v1::ERROR_CODE_UNSPECIFIED) continue;
    int code = ExitCodeForReason(value->name());
    EXPECT_GE(code, kExitNotFound) << value->name();
    EXPECT_LE(code, kExitOther) << value->name();
    EXPECT_NE(code, kExitUnreachable) << value->name();
  }
}

TEST(ExitCodesHelpTest, ListsEveryCode) {
  std::string help = ExitCodesHelp();
  EXPECT_THAT(help, StartsWith("Exit codes:\n"));
  for (int code = kExitOk; code <= kExitOther; ++code) {
    EXPECT_THAT(help, HasSubstr("\n  " + std::to_string(code) + "  ")) << code;
  }
  EXPECT_THAT(help, HasSubstr("\n  130  interrupted by Ctrl-C"));
  EXPECT_EQ(help.back(), '\n');
}

TEST(DescribeErrorTest, ChannelFailureMeansUnreachable) {
  absl::Status status = FromGrpcStatus(grpc::Status(
      grpc::StatusCode::UNAVAILABLE, "failed to connect to all addresses"));
  EXPECT_FALSE(HasErrorInfo(status));
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitUnreachable);
  EXPECT_EQ(failure.message, "inspectord is not running at 127.0.0.1:50051");
  EXPECT_EQ(failure.hint,
            "start it with `inspectord` (or tools/run.sh), or point --addr / "
            "$INSPECTOR_ADDR at it");
}

TEST(DescribeErrorTest, DeadlineWithoutErrorInfoMeansUnreachable) {
  absl::Status status = FromGrpcStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitUnreachable);
  EXPECT_THAT(failure.message, HasSubstr("127.0.0.1:50051"));
  EXPECT_THAT(failure.message, HasSubstr("10s"));
  EXPECT_THAT(failure.hint, HasSubstr("--timeout"));
}

TEST(DescribeErrorTest, JsonRpcErrorOfTheServer) {
  EXPECT_EQ(ExitCodeForReason("SERVER_ERROR"), kExitMcpServer);
  Failure failure =
      DescribeError(FromDaemon(v1::SERVER_ERROR, "Invalid params",
                               {{"serverName", "everything"},
                                {"jsonrpcCode", "-32602"},
                                {"jsonrpcData", "{\"field\":\"message\"}"}}),
                    Context());
  EXPECT_EQ(failure.exit_code, kExitMcpServer);
  EXPECT_EQ(failure.message,
            "everything answered with JSON-RPC error -32602: Invalid params "
            "(data: {\"field\":\"message\"})");
  failure = DescribeError(FromDaemon(v1::SERVER_ERROR, "nope"), Context());
  EXPECT_EQ(failure.message, "the server answered with JSON-RPC error: nope");
}

TEST(DescribeErrorTest, DeadlineOfACallToAnMcpServerBlamesTheServer) {
  absl::Status status = FromGrpcStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
  ErrorContext context = Context();
  context.timeout_seconds = 300;
  context.reaches_mcp_server = true;
  Failure failure = DescribeError(status, context);
  EXPECT_EQ(failure.exit_code, kExitUnreachable);
  EXPECT_EQ(failure.message,
            "no answer from inspectord at 127.0.0.1:50051 within 300s while "
            "it waited for the MCP server");
  EXPECT_THAT(failure.hint, HasSubstr("raise --timeout"));
}

TEST(DescribeErrorTest, DaemonTransportErrorIsAnMcpServerError) {
  // UNAVAILABLE with ErrorInfo comes from the daemon, about the MCP server.
  absl::Status status = FromDaemon(v1::TRANSPORT_ERROR, "connection reset",
                                   {{"serverName", "everything"}});
  EXPECT_TRUE(HasErrorInfo(status));
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitMcpServer);
  EXPECT_EQ(failure.message,
            "connection reset [TRANSPORT_ERROR] (serverName: everything)");
}

TEST(DescribeErrorTest, RequestTimeoutFromTheDaemon) {
  absl::Status status = FromDaemon(v1::REQUEST_TIMEOUT, "tools/call timed out",
                                   {{"elapsed", "60000"}});
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitMcpServer);
  EXPECT_THAT(failure.message, HasSubstr("elapsed: 60000"));
}

TEST(DescribeErrorTest, SessionInvalid) {
  absl::Status status = FromDaemon(v1::SESSION_INVALID, "invalid token");
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitAuth);
  EXPECT_THAT(failure.message,
              StartsWith("the daemon rejected the session token from "
                         "/tmp/token"));
  EXPECT_THAT(failure.hint, HasSubstr("$INSPECTOR_TOKEN_FILE"));

  ErrorContext from_env = Context();
  from_env.token_source = kTokenEnv;
  failure = DescribeError(status, from_env);
  EXPECT_THAT(failure.message, HasSubstr("from $INSPECTOR_TOKEN: "));
  EXPECT_THAT(failure.hint, StartsWith("$INSPECTOR_TOKEN overrides"));
}

TEST(DescribeErrorTest, UnauthenticatedWithoutDetailsIsStillAuth) {
  absl::Status status = FromGrpcStatus(
      grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "no token"));
  EXPECT_EQ(DescribeError(status, Context()).exit_code, kExitAuth);
}

TEST(DescribeErrorTest, ServerNotFound) {
  absl::Status status =
      FromDaemon(v1::SERVER_NOT_FOUND, "no server named \"x\"");
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitNotFound);
  EXPECT_EQ(failure.message, "no server named \"x\"");
  EXPECT_EQ(failure.hint,
            "`inspectorctl servers list` shows the configured servers");
}

TEST(DescribeErrorTest, InvalidConfigNamesTheField) {
  absl::Status status =
      FromDaemon(v1::INVALID_CONFIG, "url must be http(s)", {{"field", "url"}});
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitInvalidInput);
  EXPECT_EQ(failure.message, "url must be http(s) (field: url)");
}

TEST(DescribeErrorTest, ConflictsAndNotImplemented) {
  EXPECT_EQ(DescribeError(FromDaemon(v1::ALREADY_EXISTS, "taken"), Context())
                .exit_code,
            kExitConflict);
  EXPECT_EQ(
      DescribeError(FromDaemon(v1::FAILED_PRECONDITION, "busy"), Context())
          .exit_code,
      kExitConflict);
  EXPECT_EQ(DescribeError(FromDaemon(v1::NOT_IMPLEMENTED, "later"), Context())
                .exit_code,
            kExitNotImplemented);
  // A service the daemon does not register at all.
  EXPECT_EQ(DescribeError(FromGrpcStatus(grpc::Status(
                              grpc::StatusCode::UNIMPLEMENTED, "")),
                          Context())
                .exit_code,
            kExitNotImplemented);
}

TEST(DescribeErrorTest, InternalErrorsAreOther) {
  Failure failure =
      DescribeError(FromDaemon(v1::INTERNAL_ERROR, "oops"), Context());
  EXPECT_EQ(failure.exit_code, kExitOther);
  EXPECT_EQ(failure.message, "oops [INTERNAL_ERROR]");
}

TEST(DescribeErrorTest, EmptyMessageFallsBackToTheReason) {
  Failure failure = DescribeError(FromDaemon(v1::TOO_LARGE, ""), Context());
  EXPECT_EQ(failure.exit_code, kExitInvalidInput);
  EXPECT_EQ(failure.message, "too large");
}

TEST(DescribeErrorTest, CommandHintReplacesTheDefault) {
  absl::Status status = WithHint(FromDaemon(v1::ALREADY_EXISTS, "taken"),
                                 "use --on-conflict skip");
  EXPECT_EQ(DescribeError(status, Context()).hint, "use --on-conflict skip");
}

TEST(DescribeErrorTest, LocalErrorsKeepTheirMessage) {
  absl::Status status = LocalError(v1::SESSION_INVALID,
                                   "no session token found at /x", "start it");
  Failure failure = DescribeError(status, Context());
  EXPECT_EQ(failure.exit_code, kExitAuth);
  EXPECT_EQ(failure.message, "no session token found at /x");
  EXPECT_EQ(failure.hint, "start it");

  failure = DescribeError(
      LocalError(v1::TOO_LARGE, "file.json is larger than 16 MiB"), Context());
  EXPECT_EQ(failure.exit_code, kExitInvalidInput);
  EXPECT_EQ(failure.message, "file.json is larger than 16 MiB");
}

TEST(DescribeErrorTest, UsageErrors) {
  Failure failure =
      DescribeError(UsageError("bad flag", "see --help"), Context());
  EXPECT_EQ(failure.exit_code, kExitUsage);
  EXPECT_EQ(failure.message, "bad flag");
  EXPECT_EQ(failure.hint, "see --help");
}

TEST(DescribeErrorTest, AlreadyReportedKeepsItsCode) {
  absl::Status status = AlreadyReported(kExitNotFound);
  EXPECT_TRUE(IsAlreadyReported(status));
  EXPECT_FALSE(IsAlreadyReported(UsageError("x")));
  EXPECT_EQ(DescribeError(status, Context()).exit_code, kExitNotFound);
}

}  // namespace cli_errors_test
}  // namespace inspector::cli
