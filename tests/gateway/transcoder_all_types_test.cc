// Tests of JSON <-> protobuf transcoding on a hand-made message with every
// kind of field (checked by round trip through RenderResponse): scalars,
// well-known types, maps, oneofs, path and query binding.
#include <gmock/gmock.h>
#include <google/protobuf/any.pb.h>
#include <google/protobuf/duration.pb.h>
#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/timestamp.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/wrappers.pb.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gateway/route_table.h"
#include "gateway/transcoder.h"
#include "common/errors.h"
#include "google/api/httpbody.pb.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/events.pb.h"
#include "inspector/v1/intercept.pb.h"
#include "inspector/v1/sessions.pb.h"
#include "inspector/v1/mcp.pb.h"
#include "tests/gateway/transcoder_test_util.h"

namespace inspector::gateway {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// ---------------------------------------------------------------------
// Every kind of field, on a hand-made descriptor.

constexpr char kAllTypesFile[] = R"pb(
  name: "w/all.proto"
  package: "w"
  syntax: "proto3"
  dependency: "google/protobuf/timestamp.proto"
  dependency: "google/protobuf/duration.proto"
  dependency: "google/protobuf/field_mask.proto"
  dependency: "google/protobuf/wrappers.proto"
  dependency: "google/protobuf/any.proto"
  dependency: "google/protobuf/struct.proto"
  enum_type {
    name: "Color"
    value { name: "COLOR_UNSPECIFIED" number: 0 }
    value { name: "RED" number: 1 }
    value { name: "GREEN" number: 2 }
  }
  message_type {
    name: "Nested"
    field { name: "s" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "n" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
  }
  message_type {
    name: "All"
    field { name: "i32" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
    field { name: "i64" number: 2 label: LABEL_OPTIONAL type: TYPE_INT64 }
    field { name: "u32" number: 3 label: LABEL_OPTIONAL type: TYPE_UINT32 }
    field { name: "u64" number: 4 label: LABEL_OPTIONAL type: TYPE_UINT64 }
    field { name: "d" number: 5 label: LABEL_OPTIONAL type: TYPE_DOUBLE }
    field { name: "f" number: 6 label: LABEL_OPTIONAL type: TYPE_FLOAT }
    field { name: "b" number: 7 label: LABEL_OPTIONAL type: TYPE_BOOL }
    field { name: "s" number: 8 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "by" number: 9 label: LABEL_OPTIONAL type: TYPE_BYTES }
    field {
      name: "color"
      number: 10
      label: LABEL_OPTIONAL
      type: TYPE_ENUM
      type_name: ".w.Color"
    }
    field {
      name: "ts"
      number: 11
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Timestamp"
    }
    field {
      name: "du"
      number: 12
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Duration"
    }
    field {
      name: "fm"
      number: 13
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.FieldMask"
    }
    field {
      name: "w64"
      number: 14
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Int64Value"
    }
    field {
      name: "ws"
      number: 15
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.StringValue"
    }
    field {
      name: "wb"
      number: 16
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.BoolValue"
    }
    field {
      name: "any"
      number: 17
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Any"
    }
    field {
      name: "v"
      number: 18
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Value"
    }
    field {
      name: "st"
      number: 19
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".google.protobuf.Struct"
    }
    field {
      name: "m"
      number: 20
      label: LABEL_REPEATED
      type: TYPE_MESSAGE
      type_name: ".w.All.MEntry"
    }
    field {
      name: "mn"
      number: 21
      label: LABEL_REPEATED
      type: TYPE_MESSAGE
      type_name: ".w.All.MnEntry"
    }
    field { name: "ri" number: 22 label: LABEL_REPEATED type: TYPE_INT32 }
    field {
      name: "rc"
      number: 23
      label: LABEL_REPEATED
      type: TYPE_ENUM
      type_name: ".w.Color"
    }
    field {
      name: "rn"
      number: 24
      label: LABEL_REPEATED
      type: TYPE_MESSAGE
      type_name: ".w.Nested"
    }
    field {
      name: "nested"
      number: 25
      label: LABEL_OPTIONAL
      type: TYPE_MESSAGE
      type_name: ".w.Nested"
    }
    field {
      name: "a"
      number: 26
      label: LABEL_OPTIONAL
      type: TYPE_STRING
      oneof_index: 0
    }
    field {
      name: "b_name"
      number: 27
      label: LABEL_OPTIONAL
      type: TYPE_STRING
      oneof_index: 0
    }
    field {
      name: "opt"
      number: 28
      label: LABEL_OPTIONAL
      type: TYPE_INT32
      oneof_index: 1
      proto3_optional: true
    }
    field { name: "s64" number: 29 label: LABEL_OPTIONAL type: TYPE_SINT64 }
    field { name: "f32" number: 30 label: LABEL_OPTIONAL type: TYPE_FIXED32 }
    nested_type {
      name: "MEntry"
      field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
      field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
      options { map_entry: true }
    }
    nested_type {
      name: "MnEntry"
      field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
      field {
        name: "value"
        number: 2
        label: LABEL_OPTIONAL
        type: TYPE_MESSAGE
        type_name: ".w.Nested"
      }
      options { map_entry: true }
    }
    oneof_decl { name: "choice" }
    oneof_decl { name: "_opt" }
  }
  service {
    name: "W"
    method {
      name: "Echo"
      input_type: ".w.All"
      output_type: ".w.All"
      options {
        [google.api.http] { post: "/all" body: "*" }
      }
    }
    method {
      name: "Get"
      input_type: ".w.All"
      output_type: ".w.All"
      options {
        [google.api.http] { get: "/all/{s}/{nested.n}" }
      }
    }
    method {
      name: "Put"
      input_type: ".w.All"
      output_type: ".w.All"
      options {
        [google.api.http] { put: "/all/{by}" body: "nested" }
      }
    }
    method {
      name: "Text"
      input_type: ".w.All"
      output_type: ".w.All"
      options {
        [google.api.http] { get: "/text" response_body: "s" }
      }
    }
    method {
      name: "List"
      input_type: ".w.All"
      output_type: ".w.All"
      options {
        [google.api.http] { get: "/list" response_body: "rn" }
      }
    }
  }
)pb";

class AllTypesTest : public RoutingSuite {
 protected:
  static void SetUpTestSuite() {
    google::protobuf::FileDescriptorSet set;
    for (const auto* file : {google::protobuf::Timestamp::descriptor()->file(),
                             google::protobuf::Duration::descriptor()->file(),
                             google::protobuf::FieldMask::descriptor()->file(),
                             google::protobuf::Int64Value::descriptor()->file(),
                             google::protobuf::Any::descriptor()->file(),
                             google::protobuf::Struct::descriptor()->file()}) {
      file->CopyTo(set.add_file());
    }
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kAllTypesFile,
                                                              set.add_file()));
    BuildFrom(set.SerializeAsString());
  }

  static const Route& RouteNamed(std::string_view name) {
    for (const Route& route : table_->routes()) {
      if (route.method->name() == name) return route;
    }
    ADD_FAILURE() << name;
    return table_->routes().front();
  }

  // Builds the request for `route_name` and renders it back as the
  // response (every method returns its request type).
  static absl::StatusOr<std::string> RoundTrip(std::string_view route_name,
                                               const PathBindings& bindings,
                                               std::string_view query,
                                               std::string_view body) {
    const Route& route = RouteNamed(route_name);
    auto bytes = transcoder_->BuildRequest(route, bindings, query, body,
                                           "application/json");
    if (!bytes.ok()) return bytes.status();
    auto out = transcoder_->RenderResponse(RouteNamed("Echo"), *bytes);
    if (!out.ok()) return out.status();
    return out->body;
  }

  static Json Echo(std::string_view body) {
    auto out = RoundTrip("Echo", {}, "", body);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? Json::parse(*out) : Json();
  }

  static absl::Status EchoError(std::string_view body) {
    return RoundTrip("Echo", {}, "", body).status();
  }

  static Json Query(std::string_view query,
                    const PathBindings& bindings = {{"s", "p"},
                                                    {"nested.n", "1"}}) {
    auto out = RoundTrip("Get", bindings, query, "");
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? Json::parse(*out) : Json();
  }

  static absl::Status QueryError(std::string_view query) {
    return RoundTrip("Get", {{"s", "p"}, {"nested.n", "1"}}, query, "")
        .status();
  }
};

TEST_F(AllTypesTest, WritesEveryFieldWithoutPresenceAndNothingElse) {
  auto out = RoundTrip("Echo", {}, "", "{}");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out,
            R"({"i32":0,"i64":"0","u32":0,"u64":"0","d":0,"f":0,"b":false,)"
            R"("s":"","by":"","color":"COLOR_UNSPECIFIED","m":{},"mn":{},)"
            R"("ri":[],"rc":[],"rn":[],"s64":"0","f32":0})");
  Json opt = Echo(R"({"opt":0})");
  EXPECT_EQ(opt["opt"], 0);  // proto3 optional: written when set, even to 0
}

TEST_F(AllTypesTest, ReadsAndWritesScalars) {
  Json out = Echo(R"({"i32":"5","i64":"9007199254740993","u32":4000000000,
      "u64":"18446744073709551615","d":1.5,"f":"Infinity","b":true,
      "s":"h\u00e9llo","by":"aGVsbG8=","color":"GREEN","s64":-5,"f32":1e2,
      "bName":"x"})");
  EXPECT_EQ(out["i32"], 5);
  EXPECT_EQ(out["i64"], "9007199254740993");
  EXPECT_EQ(out["u32"], 4000000000u);
  EXPECT_EQ(out["u64"], "18446744073709551615");
  EXPECT_EQ(out["d"], 1.5);
  EXPECT_EQ(out["f"], "Infinity");
  EXPECT_EQ(out["b"], true);
  EXPECT_EQ(out["s"], "h\xC3\xA9llo");
  EXPECT_EQ(out["by"], "aGVsbG8=");
  EXPECT_EQ(out["color"], "GREEN");
  EXPECT_EQ(out["s64"], "-5");
  EXPECT_EQ(out["f32"], 100);
  EXPECT_EQ(out["bName"], "x");
  EXPECT_FALSE(out.contains("a"));

  EXPECT_EQ(Echo(R"({"by":"aGk_-w"})")["by"], "aGk/+w==");  // URL-safe input
  EXPECT_EQ(Echo(R"({"color":2})")["color"], "GREEN");
  EXPECT_EQ(Echo(R"({"color":7})")["color"], 7);  // open enum keeps numbers
  EXPECT_EQ(Echo(R"({"b_name":"y"})")["bName"], "y");
  EXPECT_EQ(Echo(R"({"d":"-Infinity"})")["d"], "-Infinity");
  EXPECT_EQ(Echo(R"({"d":"NaN"})")["d"], "NaN");
  EXPECT_EQ(Echo(R"({"d":0.1})")["d"], 0.1);
  EXPECT_EQ(Echo(R"({"f":0.1})")["f"], 0.1);  // shortest float text
  EXPECT_EQ(Echo(R"({"i64":-9223372036854775808})")["i64"],
            "-9223372036854775808");
}

TEST_F(AllTypesTest, RejectsValuesOfTheWrongTypeNamingTheField) {
  ExpectInvalid(EchoError(R"({"i32":1.5})"), "i32", "32-bit integer");
  ExpectInvalid(EchoError(R"({"i32":3000000000})"), "i32");
  ExpectInvalid(EchoError(R"({"u32":-1})"), "u32");
  ExpectInvalid(EchoError(R"({"u64":"-1"})"), "u64");
  ExpectInvalid(EchoError(R"({"i64":"12abc"})"), "i64");
  ExpectInvalid(EchoError(R"({"i64":9223372036854775808})"), "i64");
  ExpectInvalid(EchoError(R"({"f":1e39})"), "f", "32-bit float");
  ExpectInvalid(EchoError(R"({"b":"true"})"), "b", "true or false");
  ExpectInvalid(EchoError(R"({"s":5})"), "s", "got 5");
  ExpectInvalid(EchoError(R"({"by":"!!!"})"), "by", "base64");
  ExpectInvalid(EchoError(R"({"color":"BLUE"})"), "color",
                "unknown value of enum w.Color, got \"BLUE\"");
  ExpectInvalid(EchoError(R"({"color":true})"), "color");
  ExpectInvalid(EchoError(R"({"nested":{"n":"x"}})"), "nested.n");
  ExpectInvalid(EchoError(R"({"nested":[]})"), "nested", "got an array");
  ExpectInvalid(EchoError(R"({"rn":[{"n":1},{"n":"bad"}]})"), "rn[1].n");
  ExpectInvalid(EchoError(R"({"ri":[1,null]})"), "ri[1]", "null");
  ExpectInvalid(EchoError(R"({"ri":{"a":1}})"), "ri", "got an object");
  ExpectInvalid(EchoError(R"({"m":{"x":"y"}})"), "m.x", "map key");
  ExpectInvalid(EchoError(R"({"mn":{"k":5}})"), "mn.k", "expected an object");
  ExpectInvalid(EchoError(R"({"a":"1","bName":"2"})"), "", "oneof \"choice\"");
  ExpectInvalid(EchoError(R"({"ts":"2024-02-30T00:00:00Z"})"), "ts",
                "RFC 3339");
  ExpectInvalid(EchoError(R"({"ts":"2024-01-15T10:00:00"})"), "ts");
  ExpectInvalid(EchoError(R"({"ts":"2016-12-31T23:59:61Z"})"), "ts");
  ExpectInvalid(EchoError(R"({"du":"1.5"})"), "du", "1.5s");
  ExpectInvalid(EchoError(R"({"du":"1.0000000001s"})"), "du");
  ExpectInvalid(EchoError(R"({"w64":"x"})"), "w64");
  ExpectInvalid(EchoError(R"({"any":{"x":1}})"), "any", "@type");
  ExpectInvalid(EchoError(R"({"any":{"@type":"type.googleapis.com/no.Such"}})"),
                "any", "unknown type");
  ExpectInvalid(EchoError("{\"s\":\"\xff\"}"), "", "not valid JSON");
  ExpectInvalid(EchoError(R"({"s":"x",})"), "", "not valid JSON");
  ExpectInvalid(EchoError(R"("just a string")"), "", "expected an object");

  // Deep nesting fails cleanly instead of exhausting the stack.
  std::string deep(5000, '[');
  ExpectInvalid(EchoError(R"({"v":)" + deep + std::string(5000, ']') + "}"), "",
                "nested too deeply");
}

TEST_F(AllTypesTest, NullLeavesFieldsUnsetExceptValues) {
  Json out = Echo(R"({"i32":null,"nested":null,"ri":null,"m":null,"v":null,
                      "st":{"n":null}})");
  EXPECT_EQ(out["i32"], 0);
  EXPECT_FALSE(out.contains("nested"));
  EXPECT_EQ(out["ri"], Json::array());
  EXPECT_TRUE(out.contains("v"));
  EXPECT_TRUE(out["v"].is_null());
  EXPECT_TRUE(out["st"]["n"].is_null());
}

TEST_F(AllTypesTest, ReadsAndWritesWellKnownTypes) {
  Json out = Echo(R"({"ts":"2024-01-15T10:00:00.5+01:00","du":"-1.5s",
      "fm":"connectionMode,a.bC","w64":"12","ws":"x","wb":false,
      "v":[1,"a",null,{"k":true}],"st":{"z":1,"a":{"b":[]}},
      "any":{"@type":"type.googleapis.com/w.Nested","s":"in","n":3}})");
  EXPECT_EQ(out["ts"], "2024-01-15T09:00:00.500Z");
  EXPECT_EQ(out["du"], "-1.500s");
  EXPECT_EQ(out["fm"], "connectionMode,a.bC");
  EXPECT_EQ(out["w64"], "12");
  EXPECT_EQ(out["ws"], "x");
  EXPECT_EQ(out["wb"], false);
  EXPECT_EQ(out["v"], Json::parse(R"([1,"a",null,{"k":true}])"));
  EXPECT_EQ(out["st"].dump(), R"({"a":{"b":[]},"z":1})");  // keys sorted
  EXPECT_EQ(out["any"], Json::parse(R"({"@type":"type.googleapis.com/w.Nested",
                                       "s":"in","n":3})"));

  Json any =
      Echo(R"({"any":{"@type":"type.googleapis.com/google.protobuf.Duration",
                             "value":"2s"}})");
  EXPECT_EQ(any["any"]["value"], "2s");
  EXPECT_EQ(Echo(R"({"ts":"0001-01-01T00:00:00Z"})")["ts"],
            "0001-01-01T00:00:00Z");
  EXPECT_EQ(Echo(R"({"ts":"9999-12-31T23:59:59.999999999Z"})")["ts"],
            "9999-12-31T23:59:59.999999999Z");
  EXPECT_EQ(Echo(R"({"ts":"1970-01-01T00:00:00.000001Z"})")["ts"],
            "1970-01-01T00:00:00.000001Z");
  // A leap second is read as the first instant of the next minute.
  EXPECT_EQ(Echo(R"({"ts":"2016-12-31T23:59:60Z"})")["ts"],
            "2017-01-01T00:00:00Z");
  EXPECT_EQ(Echo(R"({"du":"0.000000001s"})")["du"], "0.000000001s");
  EXPECT_EQ(Echo(R"({"du":"315576000000s"})")["du"], "315576000000s");
  EXPECT_EQ(Echo(R"({"fm":""})")["fm"], "");
}

TEST_F(AllTypesTest, MapsReadFromObjectsAndWriteSorted) {
  Json out = Echo(R"({"m":{"2":"b","10":"a","-1":"c"},"mn":{"k":{"s":"x"}}})");
  EXPECT_EQ(out["m"].dump(), R"({"-1":"c","10":"a","2":"b"})")
      << "nlohmann sorts keys as text; check the raw order below";
  auto raw = RoundTrip("Echo", {}, "", R"({"m":{"2":"b","10":"a","-1":"c"}})");
  ASSERT_TRUE(raw.ok());
  EXPECT_THAT(*raw, HasSubstr(R"("m":{"-1":"c","2":"b","10":"a"})"));
  EXPECT_EQ(out["mn"], Json::parse(R"({"k":{"s":"x","n":0}})"));
}

TEST_F(AllTypesTest, IgnoresUnknownFields) {
  Json out = Echo(R"({"zzz":{"deep":[1,2,{"x":null}]},"s":"x","@type":"t"})");
  EXPECT_EQ(out["s"], "x");
  EXPECT_FALSE(out.contains("zzz"));
}

TEST_F(AllTypesTest, PathVariablesAreConvertedToTheFieldType) {
  Json out = Query("", {{"s", "a b/c"}, {"nested.n", "-42"}});
  EXPECT_EQ(out["s"], "a b/c");
  EXPECT_EQ(out["nested"]["n"], -42);
  auto bad = RoundTrip("Get", {{"s", "x"}, {"nested.n", "forty"}}, "", "");
  ExpectInvalid(bad.status(), "nested.n", "in the path");
  auto utf8 = RoundTrip("Get", {{"s", "\xC3"}, {"nested.n", "1"}}, "", "");
  ExpectInvalid(utf8.status(), "s", "UTF-8");
}

TEST_F(AllTypesTest,
       QueryParametersCoverScalarsEnumsRepeatedAndWellKnownTypes) {
  Json out = Query(
      "i32=5&i64=-7&u64=18446744073709551615&d=NaN&b=1&color=RED&rc=RED&rc=2"
      "&ri=1&ri=2&ts=2024-01-15T10%3A00%3A00Z&du=1.5s&fm=a,bC&w64=3"
      "&ws=hi+there%21&wb=true&by=aGk&nested.s=q&opt=0&bName=z&f=-Infinity");
  EXPECT_EQ(out["i32"], 5);
  EXPECT_EQ(out["i64"], "-7");
  EXPECT_EQ(out["u64"], "18446744073709551615");
  EXPECT_EQ(out["d"], "NaN");
  EXPECT_EQ(out["b"], true);
  EXPECT_EQ(out["color"], "RED");
  EXPECT_EQ(out["rc"], Json::parse(R"(["RED","GREEN"])"));
  EXPECT_EQ(out["ri"], Json::parse("[1,2]"));
  EXPECT_EQ(out["ts"], "2024-01-15T10:00:00Z");
  EXPECT_EQ(out["du"], "1.500s");
  EXPECT_EQ(out["fm"], "a,bC");
  EXPECT_EQ(out["w64"], "3");
  EXPECT_EQ(out["ws"], "hi there!");
  EXPECT_EQ(out["wb"], true);
  EXPECT_EQ(out["by"], "aGk=");
  EXPECT_EQ(out["nested"]["s"], "q");
  EXPECT_EQ(out["opt"], 0);
  EXPECT_EQ(out["bName"], "z");
  EXPECT_EQ(out["f"], "-Infinity");
}

TEST_F(AllTypesTest, QueryCannotOverridePathVariables) {
  Json out = Query("s=other&nested.n=5&nested=x&i32=1");
  EXPECT_EQ(out["s"], "p");
  EXPECT_EQ(out["nested"]["n"], 1);
  EXPECT_EQ(out["i32"], 1);
}

TEST_F(AllTypesTest, IgnoresUnknownQueryParameters) {
  Json out = Query("zzz=1&nested.zzz=2&i32.x=1&ts.seconds=5&=&&x&i32=3");
  EXPECT_EQ(out["i32"], 3);
  EXPECT_FALSE(out.contains("ts"));
}

TEST_F(AllTypesTest, RejectsQueryValuesThatDoNotFit) {
  ExpectInvalid(QueryError("i32=abc"), "i32", "32-bit integer");
  ExpectInvalid(QueryError("i32=%201"), "i32");
  ExpectInvalid(QueryError("i32=1&i32=2"), "i32", "more than once");
  ExpectInvalid(QueryError("i32=1&i32=1"), "i32", "more than once");
  ExpectInvalid(QueryError("color=BLUE"), "color", "w.Color");
  ExpectInvalid(QueryError("b="), "b");
  ExpectInvalid(QueryError("m=1"), "m", "cannot be set from a query parameter");
  ExpectInvalid(QueryError("st=1"), "st",
                "cannot be set from a query parameter");
  ExpectInvalid(QueryError("rn=1"), "rn",
                "cannot be set from a query parameter");
  ExpectInvalid(QueryError("ts=now"), "ts", "RFC 3339");
  ExpectInvalid(QueryError("by=%%%"), "by", "percent-encoding");
  ExpectInvalid(QueryError("u64=18446744073709551616"), "u64");
}

TEST_F(AllTypesTest, BodyFieldRoutesLeaveOtherFieldsToPathAndQuery) {
  auto out = RoundTrip("Put", {{"by", "aGk="}}, "s=top&nested.s=ignored",
                       R"({"s":"inner","n":2})");
  ASSERT_TRUE(out.ok()) << out.status();
  Json json = Json::parse(*out);
  EXPECT_EQ(json["by"], "aGk=");
  EXPECT_EQ(json["s"], "top");
  EXPECT_EQ(json["nested"], Json::parse(R"({"s":"inner","n":2})"));
  auto bad = RoundTrip("Put", {{"by", "aGk="}}, "", R"({"n":"x"})");
  ExpectInvalid(bad.status(), "nested.n");
}

TEST_F(AllTypesTest, ResponseBodyRendersOneField) {
  const Route& text = RouteNamed("Text");
  auto bytes = transcoder_->BuildRequest(RouteNamed("Echo"), {}, "",
                                         R"({"s":"only \"this\"",
                                             "rn":[{"s":"a"},{"n":2}]})",
                                         "");
  ASSERT_TRUE(bytes.ok());
  auto out = transcoder_->RenderResponse(text, *bytes);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->body, R"("only \"this\"")");
  out = transcoder_->RenderResponse(RouteNamed("List"), *bytes);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->body, R"([{"s":"a","n":0},{"s":"","n":2}])");
}

TEST_F(AllTypesTest, MessageToJsonWritesAnyMessageOfThePool) {
  google::protobuf::DynamicMessageFactory factory(pool_);
  std::unique_ptr<google::protobuf::Message> nested(
      factory.GetPrototype(pool_->FindMessageTypeByName("w.Nested"))->New());
  ASSERT_TRUE(nested->ParseFromString(std::string("\x0a\x01x\x10\x05", 5)));
  auto json = transcoder_->MessageToJson(*nested);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, R"({"s":"x","n":5})");
}

}  // namespace
}  // namespace inspector::gateway
