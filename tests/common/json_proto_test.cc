// Unit tests of common/json_proto.h: JSON <-> protobuf through the proto3
// JSON mapping, with absl::Status answers.
#include "common/json_proto.h"

#include <cmath>
#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "inspector/v1/config.pb.h"

namespace inspector {
namespace {

TEST(JsonProtoTest, TextToMessageAndBack) {
  v1::ServerConfig config;
  ASSERT_TRUE(
      JsonTextToMessage(R"({"name":"a","args":["x","y"]})", &config).ok());
  EXPECT_EQ(config.name(), "a");
  ASSERT_EQ(config.args_size(), 2);
  absl::StatusOr<std::string> text = MessageToJsonText(config);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, R"({"name":"a","args":["x","y"]})");
}

TEST(JsonProtoTest, UnknownFieldsFailUnlessIgnored) {
  v1::ServerConfig config;
  absl::Status status = JsonTextToMessage(R"({"nope":1})", &config);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(status.message().empty());
  JsonToProtoOptions options;
  options.ignore_unknown_fields = true;
  EXPECT_TRUE(
      JsonTextToMessage(R"({"nope":1,"name":"b"})", &config, options).ok());
  EXPECT_EQ(config.name(), "b");
}

TEST(JsonProtoTest, NotJsonIsInvalidArgument) {
  v1::ServerConfig config;
  EXPECT_EQ(JsonTextToMessage("{", &config).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JsonProtoTest, JsonValueToMessage) {
  v1::ServerConfig config;
  ASSERT_TRUE(JsonToMessage(nlohmann::json{{"name", "c"}, {"url", "http://h/"}},
                            &config)
                  .ok());
  EXPECT_EQ(config.url(), "http://h/");
}

TEST(JsonProtoTest, PrintOptions) {
  v1::ServerConfig config;
  config.set_name("d");
  ProtoToJsonOptions options;
  options.always_print_primitive_fields = true;
  absl::StatusOr<std::string> text = MessageToJsonText(config, options);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"args\":[]"), std::string::npos) << *text;
  options.add_whitespace = true;
  text = MessageToJsonText(config, options);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find('\n'), std::string::npos);
}

TEST(JsonProtoTest, ObjectsToStructAndBack) {
  google::protobuf::Struct out;
  nlohmann::json object = {{"b", {1, "x", nullptr}}, {"a", {{"k", true}}}};
  ASSERT_TRUE(JsonObjectToStruct(object, &out).ok());
  EXPECT_EQ(StructToJson(out), object);
}

TEST(JsonProtoTest, NonObjectsLeaveTheStructEmpty) {
  google::protobuf::Struct out;
  (*out.mutable_fields())["old"].set_bool_value(true);
  absl::Status status = JsonObjectToStruct(nlohmann::json::array({1}), &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("array"), std::string::npos);
  EXPECT_EQ(out.fields_size(), 0);
}

// protobuf's JSON printer writes a non-finite number as a string.
TEST(JsonProtoTest, NonFiniteNumbersPrintAsStrings) {
  google::protobuf::Struct value;
  (*value.mutable_fields())["n"].set_number_value(
      std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(StructToJson(value), nlohmann::json({{"n", "NaN"}}));
}

}  // namespace
}  // namespace inspector
