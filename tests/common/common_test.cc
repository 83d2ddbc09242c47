// Unit tests of common/: error statuses and their gRPC form, the session
// token file, ids.
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "common/errors.h"
#include "common/ids.h"
#include "common/token.h"
#include "common/untrusted_input.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace inspector {
namespace {

using ::testing::HasSubstr;

TEST(ErrorsTest, ErrorCarriesReasonCodeAndDetails) {
  absl::Status status = Error(v1::SERVER_NOT_FOUND, "no such server",
                              {{"serverId", "abc"}});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrorReason(status), "SERVER_NOT_FOUND");
  EXPECT_EQ(GetErrorDetails(status).at("serverId"), "abc");
}

TEST(ErrorsTest, EveryReasonHasTheDocumentedStatusCode) {
  EXPECT_EQ(StatusCodeFor(v1::CONNECTION_TIMEOUT),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(StatusCodeFor(v1::CONNECTION_REFUSED),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeFor(v1::SPAWN_FAILED), absl::StatusCode::kInternal);
  EXPECT_EQ(StatusCodeFor(v1::INVALID_CONFIG),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeFor(v1::SESSION_INVALID),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeFor(v1::NOT_IMPLEMENTED),
            absl::StatusCode::kUnimplemented);
  // Only an error from the MCP server itself travels as UNKNOWN.
  EXPECT_EQ(StatusCodeFor(v1::SERVER_ERROR), absl::StatusCode::kUnknown);
  const auto* codes = v1::ErrorCode_descriptor();
  for (int i = 0; i < codes->value_count(); ++i) {
    auto code = static_cast<ErrorCode>(codes->value(i)->number());
    if (code == v1::ERROR_CODE_UNSPECIFIED || code == v1::SERVER_ERROR) {
      continue;
    }
    EXPECT_NE(StatusCodeFor(code), absl::StatusCode::kUnknown)
        << codes->value(i)->name();
  }
}

TEST(ErrorsTest, GrpcRoundTripKeepsReasonAndDetails) {
  absl::Status status =
      Error(v1::INVALID_CONFIG, "url: bad", {{"field", "url"}});
  grpc::Status wire = ToGrpcStatus(status);
  EXPECT_EQ(wire.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  google::rpc::Status rpc_status;
  ASSERT_TRUE(rpc_status.ParseFromString(wire.error_details()));
  google::rpc::ErrorInfo info;
  ASSERT_EQ(rpc_status.details_size(), 1);
  ASSERT_TRUE(rpc_status.details(0).UnpackTo(&info));
  EXPECT_EQ(info.reason(), "INVALID_CONFIG");
  EXPECT_EQ(info.domain(), "inspector.v1");

  absl::Status back = FromGrpcStatus(wire);
  EXPECT_EQ(back.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(back.message(), "url: bad");
  EXPECT_EQ(ErrorReason(back), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(back).at("field"), "url");
}

TEST(ErrorsTest, PlainStatusesGetAReasonFromTheirCode) {
  EXPECT_EQ(ErrorReason(absl::NotFoundError("x")), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(absl::InternalError("x")), "INTERNAL_ERROR");
  EXPECT_EQ(ErrorReason(absl::OkStatus()), "");
  grpc::Status wire = ToGrpcStatus(absl::InvalidArgumentError("bad"));
  EXPECT_EQ(ErrorReason(FromGrpcStatus(wire)), "INVALID_REQUEST");
}

TEST(ErrorsTest, QuoteInputKeepsAShortWholeCharacterPrefix) {
  EXPECT_EQ(QuoteInput("my-server"), "'my-server'");
  EXPECT_EQ(InputPrefix(std::string(100, 'a')), std::string(100, 'a'));
  EXPECT_EQ(InputPrefix(std::string(101, 'a')), std::string(100, 'a') + "...");
  // "é" is two bytes; one that would be cut in half is left out whole.
  std::string accents = "a";
  for (int i = 0; i < 10; ++i) accents += "\xC3\xA9";
  EXPECT_EQ(InputPrefix(accents, 4), "a\xC3\xA9...");
  EXPECT_EQ(InputPrefix(accents, 5), "a\xC3\xA9\xC3\xA9...");
  // Four-byte characters too.
  std::string emoji;
  for (int i = 0; i < 3; ++i) emoji += "\xF0\x9F\x98\x80";
  EXPECT_EQ(InputPrefix(emoji, 6), "\xF0\x9F\x98\x80...");
  EXPECT_EQ(QuoteInput(std::string(1 << 20, 'x'), 3), "'xxx...'");
}

// However long the input an error quotes, the error that leaves the
// daemon stays small enough for gRPC's metadata limits.
TEST(ErrorsTest, GrpcStatusesAreBounded) {
  std::string huge(10 << 20, 'n');
  grpc::Status status = ToGrpcStatus(
      Error(v1::INVALID_CONFIG, "bad name " + huge, {{"serverName", huge}}));
  EXPECT_LE(status.error_message().size(), 1024u + 3);
  EXPECT_EQ(status.error_message().substr(0, 12), "bad name nnn");
  EXPECT_LT(status.error_details().size(), 2048u);
  absl::Status back = FromGrpcStatus(status);
  EXPECT_EQ(ErrorReason(back), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(back)["serverName"],
            std::string(256, 'n') + "...");
}

TEST(TokenTest, CreatedOnceWithOwnerOnlyModeAndReused) {
  testing::TempDir dir;
  std::string path = dir.File("state/inspector/token");
  auto first = LoadOrCreateToken(path);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->size(), 64u);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(dir.File("state/inspector").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto second = LoadOrCreateToken(path);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  auto read = ReadToken(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, *first);
}

TEST(TokenTest, RefusesFilesOthersCanRead) {
  testing::TempDir dir;
  std::string path = dir.File("token");
  testing::WriteFile(path, "abc\n");
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  auto token = ReadToken(path);
  ASSERT_FALSE(token.ok());
  EXPECT_THAT(token.status().message(), HasSubstr("chmod 600"));
  EXPECT_FALSE(LoadOrCreateToken(path).ok());
}

TEST(TokenTest, MissingAndEmptyFiles) {
  testing::TempDir dir;
  EXPECT_TRUE(absl::IsNotFound(ReadToken(dir.File("none")).status()));
  std::string empty = dir.File("empty");
  testing::WriteFile(empty, " \n");
  ASSERT_EQ(chmod(empty.c_str(), 0600), 0);
  EXPECT_THAT(ReadToken(empty).status().message(), HasSubstr("empty"));
}

TEST(TokenTest, GeneratedTokensDiffer) {
  auto a = GenerateToken();
  auto b = GenerateToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(TokenTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(IdsTest, UuidsAreVersion4AndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewUuid();
    ASSERT_TRUE(IsUuid(id)) << id;
    EXPECT_EQ(id[14], '4');
    EXPECT_TRUE(seen.insert(id).second);
  }
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6g"));
}

}  // namespace
}  // namespace inspector
