// Tests of the google.api.http path template parser and matcher.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gateway/path_template.h"

namespace inspector::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

PathTemplate MustParse(std::string_view text) {
  absl::StatusOr<PathTemplate> parsed = PathTemplate::Parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *std::move(parsed) : PathTemplate();
}

TEST(PathTemplateTest, CanonicalFormReplacesVariablesByTheirPattern) {
  EXPECT_EQ(MustParse("/config").Canonical(), "/config");
  EXPECT_EQ(MustParse("/config/{id}").Canonical(), "/config/*");
  EXPECT_EQ(MustParse("/api/pending/{id}:resolve").Canonical(),
            "/api/pending/*:resolve");
  EXPECT_EQ(MustParse("/api/servers/{server_id}/tools/{name}:call").Canonical(),
            "/api/servers/*/tools/*:call");
  EXPECT_EQ(MustParse("/v1/{name=shelves/*/books/*}").Canonical(),
            "/v1/shelves/*/books/*");
  EXPECT_EQ(MustParse("/files/{path=**}").Canonical(), "/files/**");
  EXPECT_EQ(MustParse("/").Canonical(), "/");
  // One spelling for escaped and plain literals.
  EXPECT_EQ(MustParse("/a%62c").Canonical(), "/abc");
  EXPECT_EQ(MustParse("/a%20b").Canonical(), "/a%20b");
  // Templates that differ only in variable names are duplicates.
  EXPECT_EQ(MustParse("/config/{id}").Canonical(),
            MustParse("/config/{name}").Canonical());
}

TEST(PathTemplateTest, VariablesKeepTheirFieldPathsInOrder) {
  PathTemplate t = MustParse("/v1/{server.id}/x/{name=a/*}");
  ASSERT_EQ(t.variables().size(), 2u);
  EXPECT_EQ(t.variables()[0].field_path, "server.id");
  EXPECT_EQ(t.variables()[0].start, 1);
  EXPECT_EQ(t.variables()[0].end, 2);
  EXPECT_EQ(t.variables()[1].field_path, "name");
  EXPECT_EQ(t.variables()[1].start, 3);
  EXPECT_EQ(t.variables()[1].end, 5);
  EXPECT_EQ(MustParse("/f/{p=**}").variables()[0].end, -1);
  EXPECT_EQ(MustParse("/a/{id}:do").verb(), "do");
}

struct BadTemplate {
  const char* text;
  const char* problem;
  const char* position;
};

TEST(PathTemplateTest, RejectsMalformedTemplatesNamingPositionAndCharacter) {
  const BadTemplate cases[] = {
      {"", "must start with '/'", "position 0 (end of template)"},
      {"config", "must start with '/'", "position 0 (character 'c')"},
      {"/a//b", "empty segment", "position 3 (character '/')"},
      {"/a/", "empty segment", "position 3 (end of template)"},
      {"/{id", "unbalanced '{'", "position 1 (character '{')"},
      {"/id}", "unbalanced '}'", "position 3 (character '}')"},
      {"/{a={b}}", "variables cannot be nested", "position 4"},
      {"/{a{b}}", "variables cannot be nested", "position 3"},
      {"/**/a", "'**' must be the last segment", "position 1"},
      {"/{x=**}/a", "'**' must be the last segment", "position 4"},
      {"/{a}/{a}", "duplicate variable 'a'", "position 5"},
      {"/a:", "the verb after ':' is empty", "position 3"},
      {"/a:b/c", "the verb must be the last", "position 4 (character '/')"},
      {"/{}", "expected a field name", "position 2 (character '}')"},
      {"/{1a}", "expected a field name", "position 2 (character '1')"},
      {"/{a.}", "expected a field name", "position 4"},
      {"/{a=}", "empty variable pattern", "position 4"},
      {"/a%zz", "malformed percent escape", "position 2 (character '%')"},
      {"/a b", "unexpected", "position 2 (character ' ')"},
      {"/***", "too many '*'", "position 3"},
      {"/:verb", "empty segment before the verb", "position 1"},
      {"/a\x01", "unexpected", "byte \\x01"},
      {"/a?b=1", "unexpected", "character '?'"},
  };
  for (const BadTemplate& c : cases) {
    absl::StatusOr<PathTemplate> parsed = PathTemplate::Parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    std::string message(parsed.status().message());
    EXPECT_THAT(message, HasSubstr(c.problem)) << c.text;
    EXPECT_THAT(message, HasSubstr(c.position)) << c.text;
  }
}

TEST(PathTemplateTest, MatchesLiteralsAndBindsVariables) {
  PathTemplate t = MustParse("/config/{id}");
  EXPECT_THAT(*t.Match("/config/abc"), ElementsAre(Pair("id", "abc")));
  EXPECT_FALSE(t.Match("/config"));
  EXPECT_FALSE(t.Match("/config/"));  // a wildcard never matches ""
  EXPECT_FALSE(t.Match("/config/abc/def"));
  EXPECT_FALSE(t.Match("/configs/abc"));
  EXPECT_FALSE(t.Match("config/abc"));
  EXPECT_FALSE(t.Match(""));
  // Without a verb in the template a ':' is part of the segment.
  EXPECT_THAT(*t.Match("/config/a:b"), ElementsAre(Pair("id", "a:b")));

  EXPECT_TRUE(MustParse("/").Match("/"));
  EXPECT_FALSE(MustParse("/").Match("/a"));
  EXPECT_FALSE(MustParse("/a").Match("/"));
  EXPECT_TRUE(MustParse("/a/*/c").Match("/a/b/c"));
  EXPECT_TRUE(MustParse("/a/*/c").Match("/a/b/c")->empty());
}

TEST(PathTemplateTest, DecodesEachSegmentAfterSplitting) {
  PathTemplate t = MustParse("/config/{id}");
  // %2F does not split the segment; it becomes part of the value.
  EXPECT_THAT(*t.Match("/config/a%2Fb"), ElementsAre(Pair("id", "a/b")));
  EXPECT_THAT(*t.Match("/config/caf%C3%A9%20x"),
              ElementsAre(Pair("id", "caf\xC3\xA9 x")));
  // '+' is not a space in a path.
  EXPECT_THAT(*t.Match("/config/a+b"), ElementsAre(Pair("id", "a+b")));
  // Malformed escapes match nothing.
  EXPECT_FALSE(t.Match("/config/a%2"));
  EXPECT_FALSE(t.Match("/config/a%zz"));
  // Literals compare decoded.
  EXPECT_TRUE(MustParse("/config").Match("/con%66ig"));
  EXPECT_TRUE(MustParse("/a%20b").Match("/a%20b"));
  EXPECT_FALSE(MustParse("/a%20b").Match("/a%2520b"));
}

TEST(PathTemplateTest, SplitsTheVerbFromTheLastColonOfTheLastSegment) {
  PathTemplate t = MustParse("/api/pending/{id}:resolve");
  EXPECT_THAT(*t.Match("/api/pending/p1:resolve"),
              ElementsAre(Pair("id", "p1")));
  EXPECT_THAT(*t.Match("/api/pending/a:b:resolve"),
              ElementsAre(Pair("id", "a:b")));
  // An escaped ':' is data, not the verb separator.
  EXPECT_THAT(*t.Match("/api/pending/p%3A1:resolve"),
              ElementsAre(Pair("id", "p:1")));
  EXPECT_FALSE(t.Match("/api/pending/p%3Aresolve"));
  EXPECT_FALSE(t.Match("/api/pending/p1:reject"));
  EXPECT_FALSE(t.Match("/api/pending/p1"));
  EXPECT_FALSE(t.Match("/api/pending/:resolve"));
  EXPECT_FALSE(t.Match("/api/pending/p1:resolve/x"));

  PathTemplate call = MustParse("/api/servers/{server_id}/tools/{name}:call");
  EXPECT_THAT(*call.Match("/api/servers/s1/tools/echo%20it:call"),
              ElementsAre(Pair("server_id", "s1"), Pair("name", "echo it")));
  EXPECT_FALSE(call.Match("/api/servers/s1/tools/echo"));
}

TEST(PathTemplateTest, MultiSegmentVariablesKeepSlashes) {
  PathTemplate files = MustParse("/files/{path=**}");
  EXPECT_THAT(*files.Match("/files/a/b%2Fc/d"),
              ElementsAre(Pair("path", "a/b/c/d")));
  EXPECT_THAT(*files.Match("/files/a"), ElementsAre(Pair("path", "a")));
  EXPECT_THAT(*files.Match("/files"), ElementsAre(Pair("path", "")));
  EXPECT_FALSE(files.Match("/other/a"));

  PathTemplate shelves = MustParse("/v1/{name=shelves/*}/books");
  EXPECT_THAT(*shelves.Match("/v1/shelves/s1/books"),
              ElementsAre(Pair("name", "shelves/s1")));
  EXPECT_FALSE(shelves.Match("/v1/racks/s1/books"));

  PathTemplate verb = MustParse("/v1/{name=**}:undelete");
  EXPECT_THAT(*verb.Match("/v1/a/b:undelete"),
              ElementsAre(Pair("name", "a/b")));
  EXPECT_FALSE(verb.Match("/v1/a/b"));

  // An unnamed ** matches without binding.
  EXPECT_TRUE(MustParse("/static/**").Match("/static/js/app.js")->empty());
}

TEST(PathTemplateTest, SpecificityPrefersLiteralsThenSingleThenMultiWildcards) {
  auto compare = [](std::string_view a, std::string_view b) {
    return MustParse(a).CompareSpecificity(MustParse(b));
  };
  EXPECT_GT(compare("/config/export", "/config/{id}"), 0);
  EXPECT_LT(compare("/config/{id}", "/config/export"), 0);
  EXPECT_GT(compare("/a/{x}", "/a/{x=**}"), 0);
  EXPECT_GT(compare("/a/b/{x=**}", "/a/{y}/{x=**}"), 0);
  // A template that stops is more specific than one whose ** matches
  // nothing.
  EXPECT_GT(compare("/a/{x}", "/a/{x}/{rest=**}"), 0);
  EXPECT_LT(compare("/a/{x}/{rest=**}", "/a/{x}"), 0);
  EXPECT_GT(compare("/a/{x}:do", "/a/{x}"), 0);
  EXPECT_EQ(compare("/a/{x}", "/a/{y}"), 0);
}

TEST(PathTemplateTest, RequestPathSplitsOnEverySlash) {
  EXPECT_FALSE(RequestPath::Split(""));
  EXPECT_FALSE(RequestPath::Split("a/b"));
  EXPECT_TRUE(RequestPath::Split("/")->segments().empty());
  EXPECT_THAT(RequestPath::Split("/a//b/")->segments(),
              ElementsAre("a", "", "b", ""));
}

TEST(PathTemplateTest, DefaultTemplateMatchesNothing) {
  PathTemplate empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_FALSE(empty.Match("/"));
}

TEST(PathTemplateTest, PercentDecodeRejectsTruncatedEscapes) {
  std::string out;
  EXPECT_TRUE(PercentDecode("a%41%62", &out));
  EXPECT_EQ(out, "aAb");
  EXPECT_FALSE(PercentDecode("%", &out));
  EXPECT_FALSE(PercentDecode("%4", &out));
  EXPECT_FALSE(PercentDecode("%g0", &out));
}

}  // namespace
}  // namespace inspector::gateway
