// Unit tests of common/jsonc.h: comments, trailing commas, key order,
// duplicate keys, depth limit and the line/column of errors.
#include "common/jsonc.h"

#include <string>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(JsoncTest, ReadsCommentsAndTrailingCommas) {
  absl::StatusOr<nlohmann::ordered_json> doc = ParseJsonc(R"({
    // a line comment
    "b": [1, 2, /* inline */ 3,],
    "a": {"x": "// not a comment", "y": "/* nor this */",},
  })");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ(
      doc->dump(),
      R"({"b":[1,2,3],"a":{"x":"// not a comment","y":"/* nor this */"}})");
}

TEST(JsoncTest, KeepsStringsWithCommasAndBrackets) {
  absl::StatusOr<nlohmann::ordered_json> doc =
      ParseJsonc(R"({"s": "a,]", "t": "\",}"})");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_EQ((*doc)["s"], "a,]");
  EXPECT_EQ((*doc)["t"], "\",}");
}

TEST(JsoncTest, RefusesDoubleAndLeadingCommas) {
  for (const char* text : {R"([1,,])", R"([,1])", R"({,})", R"({"a":1,,})"}) {
    EXPECT_FALSE(ParseJsonc(text).ok()) << text;
  }
}

TEST(JsoncTest, SyntaxErrorsNameLineAndColumn) {
  absl::StatusOr<nlohmann::ordered_json> doc = ParseJsonc("{\n  \"a\": x\n}");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(ErrorReason(doc.status()), "INVALID_REQUEST");
  EXPECT_THAT(std::string(doc.status().message()),
              StartsWith("not valid JSON at line 2, column 8"));
  EXPECT_EQ(GetErrorDetails(doc.status()).at("line"), "2");
}

TEST(JsoncTest, TruncatedTextSaysSoWithTheSubject) {
  JsoncOptions options;
  options.subject = "the body";
  absl::StatusOr<nlohmann::ordered_json> doc =
      ParseJsonc("{\"a\": [1,", options);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(std::string(doc.status().message()),
              StartsWith("the body ends too early (truncated?) at line 1"));
}

TEST(JsoncTest, RefusesDuplicateKeysWithTheirPath) {
  absl::StatusOr<nlohmann::ordered_json> doc =
      ParseJsonc(R"({"a": [{"k": 1}, {"k": 1, "k": 2}]})");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(std::string(doc.status().message()),
              HasSubstr("duplicate key \"k\" in a[1]"));
  EXPECT_EQ(GetErrorDetails(doc.status()).at("field"), "a[1].k");

  doc = ParseJsonc(R"({"k": 1, "k": 2})");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(std::string(doc.status().message()), HasSubstr("the top level"));
}

TEST(JsoncTest, DuplicateKeyErrorCanBeReplaced) {
  JsoncOptions options;
  std::string seen;
  options.duplicate_key_error = [&seen](std::string_view container,
                                        std::string_view key) {
    seen = std::string(container) + "/" + std::string(key);
    return absl::AlreadyExistsError("custom");
  };
  absl::StatusOr<nlohmann::ordered_json> doc =
      ParseJsonc(R"({"m": {"x": 1, "x": 2}})", options);
  EXPECT_EQ(doc.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(seen, "m/x");
}

TEST(JsoncTest, DepthLimit) {
  JsoncOptions options;
  options.max_depth = 3;
  EXPECT_TRUE(ParseJsonc("[[[1]]]", options).ok());
  absl::StatusOr<nlohmann::ordered_json> doc = ParseJsonc("[[[[1]]]]", options);
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(std::string(doc.status().message()),
              HasSubstr("nested deeper than 3 levels"));
  EXPECT_EQ(GetErrorDetails(doc.status()).at("column"), "4");
}

TEST(JsoncTest, BlankMeansOnlyWhitespaceAndComments) {
  EXPECT_TRUE(IsBlankJsonc(""));
  EXPECT_TRUE(IsBlankJsonc(" \n// nothing\n/* here */\t"));
  EXPECT_FALSE(IsBlankJsonc("// x\n{}"));
}

}  // namespace
}  // namespace inspector
