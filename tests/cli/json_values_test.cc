#include "clients/cli/json_values.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/protobuf/util/json_util.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {
namespace json_values_test {

using ::testing::HasSubstr;

google::protobuf::Struct ParseStruct(const std::string& json) {
  google::protobuf::Struct value;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok());
  return value;
}

TEST(JsonValuesTest, StructToJsonKeepsWholeNumbersIntegral) {
  const nlohmann::json json = StructToJson(ParseStruct(
      R"({"n": 3, "x": 0.25, "big": 1e300, "s": "t", "b": false,
          "z": null, "l": [1, {"k": -2}]})"));
  EXPECT_EQ(json.dump(),
            R"({"b":false,"big":1e+300,"l":[1,{"k":-2}],"n":3,"s":"t",)"
            R"("x":0.25,"z":null})");
  EXPECT_TRUE(json["n"].is_number_integer());
}

TEST(JsonValuesTest, RoundTrip) {
  const nlohmann::json original = nlohmann::json::parse(
      R"({"a": [1, 2.5, "x", true, null, {"b": {}}], "c": {"d": []}})");
  absl::StatusOr<google::protobuf::Struct> converted =
      JsonToStruct(original, "");
  ASSERT_TRUE(converted.ok()) << converted.status();
  EXPECT_EQ(StructToJson(*converted), original);
}

TEST(JsonValuesTest, JsonToStructNeedsAnObject) {
  absl::StatusOr<google::protobuf::Struct> converted =
      JsonToStruct(nlohmann::json::array(), "--json");
  ASSERT_FALSE(converted.ok());
  EXPECT_EQ(converted.status().message(),
            "--json must be a JSON object, not array");
}

TEST(JsonValuesTest, InexactIntegersAreRefusedWithTheirPath) {
  absl::StatusOr<google::protobuf::Value> converted = JsonToValue(
      nlohmann::json::parse(R"({"ids": [1, 18446744073709551615]})"), "args");
  ASSERT_FALSE(converted.ok());
  EXPECT_THAT(converted.status().message(),
              HasSubstr("args.ids[1] (18446744073709551615) is too large"));
}

TEST(JsonValuesTest, PrettyJsonIndentsByTwo) {
  EXPECT_EQ(PrettyJson(nlohmann::json::parse(R"({"a":[1]})")),
            "{\n  \"a\": [\n    1\n  ]\n}\n");
}

TEST(JsonValuesTest, ProtoToJsonLineIsOneCamelCaseLine) {
  v1::McpResult result;
  result.set_is_error(true);
  (*result.mutable_result()->mutable_fields())["k"].set_string_value("v\nw");
  absl::StatusOr<std::string> line = ProtoToJsonLine(result);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(*line, R"({"result":{"k":"v\nw"},"isError":true,"durationMs":0})");
}

}  // namespace json_values_test
}  // namespace inspector::cli
