// Unit tests of a server's front-door policy: its parsing from the
// server's configuration (server/config/frontdoor_policy.h) and its
// decisions (server/frontdoor/caller_policy.h), rate limits on a FakeClock.
#include "server/frontdoor/caller_policy.h"

#include <string>

#include "common/json_proto.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/config/frontdoor_policy.h"
#include "tests/testing/fake_clock.h"

namespace inspector::frontdoor {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// A server configuration whose entry carries `policy`.
v1::ServerConfig WithPolicy(const json& policy) {
  v1::ServerConfig config;
  config.set_name("s");
  json extra = {{"frontdoorPolicy", policy}};
  EXPECT_TRUE(JsonObjectToStruct(extra, config.mutable_extra()).ok());
  return config;
}

config::FrontDoorPolicySpec Spec(const json& policy) {
  auto spec = config::FrontDoorPolicyOf(WithPolicy(policy));
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok() || !spec->has_value()) return {};
  return **spec;
}

Caller Alice() {
  Caller caller;
  caller.issuer = "https://idp.example.test";
  caller.subject = "alice";
  caller.client_id = "cli";
  caller.scopes = {"mcp:tools"};
  caller.claims["groups"] = {"eng", "oncall"};
  return caller;
}

TEST(FrontDoorPolicyTest, AServerWithoutOneHasNone) {
  v1::ServerConfig config;
  auto spec = config::FrontDoorPolicyOf(config);
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->has_value());
}

TEST(FrontDoorPolicyTest, ParsesEveryPart) {
  config::FrontDoorPolicySpec spec = Spec(
      {{"allow", {{"subjects", {"alice"}}, {"groups", {"eng"}}}},
       {"groupsClaim", "roles"},
       {"tools",
        {{{"name", "delete_*"}, {"action", "deny"}},
         {{"name", "write_*"}, {"action", "requireScope"}, {"scope", "w"}}}},
       {"rateLimit", {{"requestsPerMinute", 30}, {"burst", 5}}},
       {"mode", "audit"}});
  EXPECT_EQ(spec.subjects, std::vector<std::string>{"alice"});
  EXPECT_EQ(spec.groups, std::vector<std::string>{"eng"});
  EXPECT_EQ(spec.groups_claim, "roles");
  ASSERT_EQ(spec.tools.size(), 2u);
  EXPECT_EQ(spec.tools[1].action,
            config::FrontDoorToolRule::Action::kRequireScope);
  EXPECT_EQ(spec.tools[1].scope, "w");
  EXPECT_EQ(spec.requests_per_minute, 30);
  EXPECT_EQ(spec.burst, 5);
  EXPECT_TRUE(spec.audit);
  // Without a burst, a minute's worth.
  EXPECT_EQ(Spec({{"rateLimit", {{"requestsPerMinute", 12}}}}).burst, 12);
}

TEST(FrontDoorPolicyTest, MistakesNameTheirField) {
  struct Case {
    json policy;
    std::string field;
  };
  const Case cases[] = {
      {json::array(), "frontdoorPolicy"},
      {{{"allows", json::object()}}, "frontdoorPolicy.allows"},
      {{{"allow", {{"subjects", "alice"}}}}, "frontdoorPolicy.allow.subjects"},
      {{{"tools", {{{"name", "x"}, {"action", "block"}}}}},
       "frontdoorPolicy.tools[0].action"},
      {{{"tools", {{{"name", "x"}, {"action", "requireScope"}}}}},
       "frontdoorPolicy.tools[0].scope"},
      {{{"tools", {{{"action", "deny"}}}}}, "frontdoorPolicy.tools[0].name"},
      {{{"rateLimit", {{"requestsPerMinute", 0}}}},
       "frontdoorPolicy.rateLimit.requestsPerMinute"},
      {{{"rateLimit", {{"requestsPerMinute", 5}, {"burst", 0}}}},
       "frontdoorPolicy.rateLimit.burst"},
      {{{"mode", "warn"}}, "frontdoorPolicy.mode"},
  };
  for (const Case& c : cases) {
    auto spec = config::FrontDoorPolicyOf(WithPolicy(c.policy));
    ASSERT_FALSE(spec.ok()) << c.policy.dump();
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.field + ":"))
        << c.policy.dump();
  }
}

// A server configuration whose entry carries `auth` as its token rules.
v1::ServerConfig WithAuth(const json& auth) {
  v1::ServerConfig config;
  config.set_name("s");
  json extra = {{"frontdoorAuth", auth}};
  EXPECT_TRUE(JsonObjectToStruct(extra, config.mutable_extra()).ok());
  return config;
}

TEST(FrontDoorAuthTest, EachKeyPresentReplacesTheDaemonsAbsentOnesKeepIt) {
  v1::ServerConfig none;
  auto absent = config::FrontDoorAuthOf(none);
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());

  auto all = config::FrontDoorAuthOf(
      WithAuth({{"issuers", {"https://idp.example.test/realms/team"}},
                {"scopes", json::array()},
                {"resource", "https://mcp.example.test/servers/s/mcp"}}));
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_TRUE(all->has_value());
  EXPECT_EQ((*all)->issuers, std::vector<std::string>{
                                 "https://idp.example.test/realms/team"});
  // An empty list is a choice (no scope needed), not an absence.
  ASSERT_TRUE((*all)->scopes.has_value());
  EXPECT_TRUE((*all)->scopes->empty());
  EXPECT_EQ((*all)->resource, "https://mcp.example.test/servers/s/mcp");

  auto scopes_only = config::FrontDoorAuthOf(WithAuth({{"scopes", {"a"}}}));
  ASSERT_TRUE(scopes_only.ok()) << scopes_only.status();
  EXPECT_FALSE((*scopes_only)->issuers.has_value());
  EXPECT_EQ((*scopes_only)->resource, "");
  EXPECT_FALSE((*scopes_only)->audiences.has_value());
  EXPECT_FALSE((*scopes_only)->accept_plain_jwt_type.has_value());

  auto entra = config::FrontDoorAuthOf(WithAuth(
      {{"audiences", {"api://team-mcp", "0b5c"}}, {"acceptJwtType", true}}));
  ASSERT_TRUE(entra.ok()) << entra.status();
  EXPECT_EQ((*entra)->audiences,
            (std::vector<std::string>{"api://team-mcp", "0b5c"}));
  EXPECT_EQ((*entra)->accept_plain_jwt_type, true);
}

TEST(FrontDoorAuthTest, MistakesNameTheirField) {
  struct Case {
    json auth;
    std::string field;
  };
  const Case cases[] = {
      {json::array(), "frontdoorAuth"},
      {{{"issuer", "https://idp.example.test"}}, "frontdoorAuth.issuer"},
      {{{"issuers", json::array()}}, "frontdoorAuth.issuers"},
      {{{"issuers", "https://idp.example.test"}}, "frontdoorAuth.issuers"},
      // Plain http only to this machine, as --frontdoor-issuer.
      {{{"issuers", {"http://idp.example.test"}}}, "frontdoorAuth.issuers[0]"},
      {{{"issuers", {"https://a.test", "ftp://b.test"}}},
       "frontdoorAuth.issuers[1]"},
      {{{"scopes", {"mcp tools"}}}, "frontdoorAuth.scopes[0]"},
      {{{"scopes", {"say\"hi"}}}, "frontdoorAuth.scopes[0]"},
      {{{"resource", "/servers/s/mcp"}}, "frontdoorAuth.resource"},
      {{{"resource", "https://mcp.example.test/s/mcp#x"}},
       "frontdoorAuth.resource"},
      {{{"resource", "https://mcp.example.test/s/mcp?x=1"}},
       "frontdoorAuth.resource"},
      {{{"audiences", json::array()}}, "frontdoorAuth.audiences"},
      {{{"audiences", {""}}}, "frontdoorAuth.audiences[0]"},
      {{{"acceptJwtType", "yes"}}, "frontdoorAuth.acceptJwtType"},
  };
  for (const Case& c : cases) {
    auto spec = config::FrontDoorAuthOf(WithAuth(c.auth));
    ASSERT_FALSE(spec.ok()) << c.auth.dump();
    EXPECT_THAT(std::string(spec.status().message()), HasSubstr(c.field + ":"))
        << c.auth.dump() << ": " << spec.status();
  }
  EXPECT_TRUE(config::FrontDoorAuthOf(
                  WithAuth({{"issuers", {"http://127.0.0.1:8080/realms/x"}}}))
                  .ok());
}

TEST(FrontDoorPolicyTest, ToolPatterns) {
  EXPECT_TRUE(config::ToolPatternMatches("*", ""));
  EXPECT_TRUE(config::ToolPatternMatches("echo", "echo"));
  EXPECT_FALSE(config::ToolPatternMatches("echo", "echo2"));
  EXPECT_TRUE(config::ToolPatternMatches("delete_*", "delete_all"));
  EXPECT_FALSE(config::ToolPatternMatches("delete_*", "undelete_all"));
  EXPECT_TRUE(config::ToolPatternMatches("*_all", "delete_all"));
  EXPECT_TRUE(config::ToolPatternMatches("a*b*c", "aXXbYbZc"));
  EXPECT_FALSE(config::ToolPatternMatches("a*b*c", "aXXbYbZ"));
}

TEST(CallerPolicyTest, WithoutRulesEverythingIsAllowed) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  EXPECT_FALSE(policy.has_rules());
  PolicyVerdict verdict = policy.Check(Alice(), "tools/call", "anything");
  EXPECT_TRUE(verdict.allowed);
  EXPECT_FALSE(verdict.objected());
}

TEST(CallerPolicyTest, SubjectsGroupsOrScopesAdmit) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  Caller bob = Alice();
  bob.subject = "bob";
  bob.claims.clear();
  bob.scopes = {};

  policy.Replace(Spec({{"allow", {{"subjects", {"alice"}}}}}));
  EXPECT_TRUE(policy.Check(Alice(), "tools/list", "").allowed);
  PolicyVerdict refused = policy.Check(bob, "tools/list", "");
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.reason, kReasonCallerNotAllowed);
  EXPECT_THAT(refused.message, HasSubstr("\"bob\""));

  bob.claims["roles"] = {"eng"};
  policy.Replace(Spec({{"allow", {{"groups", {"eng"}}}}}));
  EXPECT_FALSE(policy.Check(bob, "ping", "").allowed)
      << "groups are read from the groups claim only";
  policy.Replace(
      Spec({{"allow", {{"groups", {"eng"}}}}, {"groupsClaim", "roles"}}));
  EXPECT_TRUE(policy.Check(bob, "ping", "").allowed);

  policy.Replace(Spec({{"allow", {{"scopes", {"mcp:admin"}}}}}));
  EXPECT_FALSE(policy.Check(bob, "ping", "").allowed);
  bob.scopes = {"mcp:admin"};
  EXPECT_TRUE(policy.Check(bob, "ping", "").allowed);
}

TEST(CallerPolicyTest, ToolRulesFirstMatchWins) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  policy.Replace(Spec(
      {{"tools",
        {{{"name", "delete_safe"}, {"action", "allow"}},
         {{"name", "delete_*"}, {"action", "deny"}},
         {{"name", "write_*"}, {"action", "requireScope"}, {"scope", "w"}}}}}));
  EXPECT_TRUE(policy.Check(Alice(), "tools/call", "delete_safe").allowed);
  PolicyVerdict denied = policy.Check(Alice(), "tools/call", "delete_all");
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.reason, kReasonToolDenied);
  EXPECT_THAT(denied.message, HasSubstr("\"delete_all\""));
  PolicyVerdict scope = policy.Check(Alice(), "tools/call", "write_file");
  EXPECT_FALSE(scope.allowed);
  EXPECT_EQ(scope.reason, kReasonScopeRequired);
  EXPECT_THAT(scope.message, HasSubstr("\"w\""));
  Caller writer = Alice();
  writer.scopes.push_back("w");
  EXPECT_TRUE(policy.Check(writer, "tools/call", "write_file").allowed);
  // Unmatched tools, and other methods, are allowed.
  EXPECT_TRUE(policy.Check(Alice(), "tools/call", "echo").allowed);
  EXPECT_TRUE(policy.Check(Alice(), "prompts/get", "delete_all").allowed);
}

TEST(CallerPolicyTest, ToolsListLeavesOutWhatTheCallerMayNotCall) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  const std::string answer =
      R"({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"echo"},)"
      R"({"name":"delete_all"},{"name":"write_file"}],"nextCursor":"c"}})";
  EXPECT_EQ(policy.FilterToolsList(Alice(), answer), answer);
  policy.Replace(Spec(
      {{"tools",
        {{{"name", "delete_*"}, {"action", "deny"}},
         {{"name", "write_*"}, {"action", "requireScope"}, {"scope", "w"}}}}}));
  json filtered = json::parse(policy.FilterToolsList(Alice(), answer));
  EXPECT_EQ(filtered["id"], 3);
  EXPECT_EQ(filtered["result"]["tools"], json::parse(R"([{"name":"echo"}])"));
  EXPECT_EQ(filtered["result"]["nextCursor"], "c");
  Caller writer = Alice();
  writer.scopes.push_back("w");
  EXPECT_EQ(json::parse(policy.FilterToolsList(writer, answer))["result"]
                ["tools"]
                    .size(),
            2u);
  // Errors pass as they are.
  const std::string error =
      R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}})";
  EXPECT_EQ(policy.FilterToolsList(Alice(), error), error);
}

TEST(CallerPolicyTest, RateLimitIsATokenBucketPerCaller) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  // 6 a minute: one every 10 s, bursts of 2.
  policy.Replace(
      Spec({{"rateLimit", {{"requestsPerMinute", 6}, {"burst", 2}}}}));
  EXPECT_TRUE(policy.Check(Alice(), "ping", "").allowed);
  EXPECT_TRUE(policy.Check(Alice(), "ping", "").allowed);
  PolicyVerdict limited = policy.Check(Alice(), "ping", "");
  EXPECT_FALSE(limited.allowed);
  EXPECT_EQ(limited.reason, kReasonRateLimited);
  EXPECT_EQ(limited.retry_after, absl::Seconds(10));
  // Another caller has a bucket of its own.
  Caller bob = Alice();
  bob.subject = "bob";
  EXPECT_TRUE(policy.Check(bob, "ping", "").allowed);

  clock.Advance(absl::Seconds(4));
  EXPECT_EQ(policy.Check(Alice(), "ping", "").retry_after, absl::Seconds(6));
  clock.Advance(absl::Seconds(6));
  EXPECT_TRUE(policy.Check(Alice(), "ping", "").allowed);
  EXPECT_FALSE(policy.Check(Alice(), "ping", "").allowed);
  // A reload keeps the buckets: no fresh burst.
  policy.Replace(
      Spec({{"rateLimit", {{"requestsPerMinute", 6}, {"burst", 2}}}}));
  EXPECT_FALSE(policy.Check(Alice(), "ping", "").allowed);
  // A long pause refills only up to the burst.
  clock.Advance(absl::Hours(1));
  EXPECT_TRUE(policy.Check(Alice(), "ping", "").allowed);
  EXPECT_TRUE(policy.Check(Alice(), "ping", "").allowed);
  EXPECT_FALSE(policy.Check(Alice(), "ping", "").allowed);
}

TEST(CallerPolicyTest, AuditModeNotesWithoutDenying) {
  testing::FakeClock clock;
  CallerPolicy policy(&clock);
  policy.Replace(Spec({{"mode", "audit"},
                       {"allow", {{"subjects", {"bob"}}}},
                       {"tools", {{{"name", "echo"}, {"action", "deny"}}}},
                       {"rateLimit", {{"requestsPerMinute", 1}, {"burst", 1}}}}));
  PolicyVerdict first = policy.Check(Alice(), "tools/call", "echo");
  EXPECT_TRUE(first.allowed);
  EXPECT_TRUE(first.audit);
  EXPECT_EQ(first.reason, kReasonCallerNotAllowed);
  PolicyVerdict second = policy.Check(Alice(), "tools/call", "echo");
  EXPECT_TRUE(second.allowed);
  EXPECT_EQ(second.reason, kReasonRateLimited);
  const std::string answer =
      R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo"}]}})";
  EXPECT_EQ(policy.FilterToolsList(Alice(), answer), answer);
}

}  // namespace
}  // namespace inspector::frontdoor
