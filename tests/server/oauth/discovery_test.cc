// Unit tests of the one OAuth discovery (server/oauth/discovery.h) that
// the flow, the manager and the doctor use: challenge parameters, where
// the metadata documents are for each revision, and the issuer check.
#include "server/oauth/discovery.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace discovery_test {

using Json = nlohmann::json;
using ::testing::ElementsAre;

Url Parse(const std::string& url) {
  auto parsed = ParseUrl(url, "url");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : Url{};
}

TEST(ChallengeParamTest, ReadsQuotedAndTokenValues) {
  std::string h =
      R"(Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/y")";
  EXPECT_EQ(ChallengeParam(h, "scope"), "a b");
  EXPECT_EQ(ChallengeParam(h, "error"), "insufficient_scope");
  EXPECT_EQ(ChallengeParam(h, "resource_metadata"), "https://x/y");
  EXPECT_EQ(ChallengeParam(h, "missing"), "");
  EXPECT_EQ(ChallengeParam("Bearer realm=example, error=invalid_token", "error"),
            "invalid_token");
}

// RFC 7235 section 2.1: parameter names are case-insensitive (the
// doctor's reading); a quoted-pair is unescaped (the flow's).
TEST(ChallengeParamTest, NamesAnyCaseAndEscapesAsRfc7235Says) {
  EXPECT_EQ(ChallengeParam(R"(Bearer Resource_Metadata="https://x/y")",
                           "resource_metadata"),
            "https://x/y");
  EXPECT_EQ(ChallengeParam(R"(Bearer scope="a \"b\"")", "scope"), R"(a "b")");
  EXPECT_EQ(ChallengeParam("Bearer\tscope=\"s\"", "scope"), "s");
  EXPECT_EQ(ChallengeParam(R"(Bearer scope = "spaced")", "scope"), "spaced");
}

// What only looks like a parameter inside another one's quoted value, or
// a longer name ending in the one asked for, is not it.
TEST(ChallengeParamTest, TextInsideQuotedValuesIsNotAParameter) {
  std::string h =
      R"(Bearer error_description="need scope=admin", my_scope="x", scope="read")";
  EXPECT_EQ(ChallengeParam(h, "scope"), "read");
  EXPECT_EQ(ChallengeParam(R"(Bearer error_description="scope=admin")", "scope"),
            "");
  // Several challenges, a token68 among them.
  EXPECT_EQ(ChallengeParam(R"(Basic YWxhZGRpbjpvcGVuc2VzYW1l==, Bearer scope="s")",
                           "scope"),
            "s");
}

TEST(ProtectedResourceMetadataUrlsTest, ChallengeThenPathThenRoot) {
  EXPECT_THAT(
      ProtectedResourceMetadataUrls(
          Parse("https://mcp.example.com/api/mcp/"),
          R"(Bearer resource_metadata="https://meta.example.com/prm")"),
      ElementsAre("https://meta.example.com/prm",
                  "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
                  "https://mcp.example.com/.well-known/oauth-protected-resource"));
  EXPECT_THAT(ProtectedResourceMetadataUrls(Parse("https://mcp.example.com"), ""),
              ElementsAre("https://mcp.example.com/.well-known/oauth-protected-resource"));
}

// MCP 2025-11-25 and 2026-07-28 (authorization server discovery): three
// locations for an issuer with a path, two without; 2025-06-18 clients
// also tried the root.
TEST(AuthorizationServerMetadataUrlsTest, OrderByRevision) {
  const Url tenant = Parse("https://auth.example.com/tenant1");
  const std::vector<std::string> latest = {
      "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
      "https://auth.example.com/.well-known/openid-configuration/tenant1",
      "https://auth.example.com/tenant1/.well-known/openid-configuration"};
  EXPECT_EQ(AuthorizationServerMetadataUrls(tenant, ""), latest);
  EXPECT_EQ(AuthorizationServerMetadataUrls(tenant, "2026-07-28"), latest);
  EXPECT_EQ(AuthorizationServerMetadataUrls(tenant, "2025-11-25"), latest);
  std::vector<std::string> june = latest;
  june.push_back("https://auth.example.com/.well-known/oauth-authorization-server");
  EXPECT_EQ(AuthorizationServerMetadataUrls(tenant, "2025-06-18"), june);
  EXPECT_THAT(
      AuthorizationServerMetadataUrls(Parse("https://auth.example.com/"), ""),
      ElementsAre("https://auth.example.com/.well-known/oauth-authorization-server",
                  "https://auth.example.com/.well-known/openid-configuration"));
  EXPECT_EQ(LegacyAuthorizationServerMetadataUrl("https://mcp.example.com"),
            "https://mcp.example.com/.well-known/oauth-authorization-server");
}

// RFC 8414 section 3.3: the issuer must be there and identical (the
// flow once let an absent issuer or a trailing slash through, and the
// doctor did not check at all).
TEST(CheckMetadataIssuerTest, IssuerMustBePresentAndIdentical) {
  const std::string issuer = "https://auth.example.com/tenant1";
  EXPECT_TRUE(CheckMetadataIssuer(Json{{"issuer", issuer}}, issuer, "u").ok());
  for (const Json& metadata :
       {Json::object(), Json{{"issuer", 7}}, Json{{"issuer", issuer + "/"}},
        Json{{"issuer", "https://AUTH.example.com/tenant1"}},
        Json{{"issuer", "https://evil.example.com/tenant1"}}}) {
    absl::Status status = CheckMetadataIssuer(metadata, issuer, "u");
    EXPECT_EQ(ErrorReason(status), "INVALID_RESPONSE") << metadata.dump();
    EXPECT_EQ(GetErrorDetails(status).count("claimedIssuer"), 1u);
  }
}

TEST(FindAuthorizationServerMetadataTest, FirstDocumentFoundInOrder) {
  std::vector<std::string> asked;
  auto found = FindAuthorizationServerMetadata(
      "https://auth.example.com/tenant1", "",
      [&asked](const std::string& url) -> absl::StatusOr<Json> {
        asked.push_back(url);
        if (url == "https://auth.example.com/tenant1/.well-known/openid-configuration") {
          return Json{{"issuer", "https://auth.example.com/tenant1"}};
        }
        return Error(v1::NOT_FOUND, "HTTP 404");
      });
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->url,
            "https://auth.example.com/tenant1/.well-known/openid-configuration");
  EXPECT_EQ(asked.size(), 3u);
}

TEST(FindAuthorizationServerMetadataTest, AnotherIssuerEndsTheSearch) {
  int asked = 0;
  auto found = FindAuthorizationServerMetadata(
      "https://auth.example.com", "",
      [&asked](const std::string&) -> absl::StatusOr<Json> {
        ++asked;
        return Json{{"issuer", "https://other.example.com"}};
      });
  EXPECT_EQ(ErrorReason(found.status()), "INVALID_RESPONSE");
  EXPECT_EQ(asked, 1);
}

TEST(FindAuthorizationServerMetadataTest, ABrokenDocumentIsMoreTellingThanA404) {
  auto found = FindAuthorizationServerMetadata(
      "https://auth.example.com", "",
      [](const std::string& url) -> absl::StatusOr<Json> {
        if (absl::StrContains(url, "openid")) {
          return Error(v1::INVALID_RESPONSE, "not a JSON object");
        }
        return Error(v1::NOT_FOUND, "HTTP 404");
      });
  EXPECT_EQ(ErrorReason(found.status()), "INVALID_RESPONSE");
}

}  // namespace discovery_test
}  // namespace inspector::oauth
