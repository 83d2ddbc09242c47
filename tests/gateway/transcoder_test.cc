// Tests of JSON <-> protobuf transcoding on the real contract (requests
// parsed back with the generated classes). Every kind of field, on a
// hand-made message, is transcoder_all_types_test.cc.
#include "gateway/transcoder.h"

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
// The real contract.

class RealTranscoderTest : public RoutingSuite {
 protected:
  static void SetUpTestSuite() { BuildFrom(CompiledDescriptorSet()); }

  static const Route& RouteOf(std::string_view method_name) {
    for (const Route& route : table_->routes()) {
      if (route.method->full_name() == method_name) return route;
    }
    ADD_FAILURE() << "no route for " << method_name;
    return table_->routes().front();
  }

  // Runs the whole request path: Find, then BuildRequest.
  template <typename Request>
  static absl::Status Build(
      std::string_view http_method, std::string_view path,
      std::string_view query, std::string_view body, Request* request,
      std::string_view content_type = "application/json") {
    RouteTable::Match match = table_->Find(http_method, path);
    if (match.kind != RouteTable::Match::kFound) {
      return absl::NotFoundError(std::string(path));
    }
    auto bytes = transcoder_->BuildRequest(*match.route, match.bindings, query,
                                           body, content_type);
    if (!bytes.ok()) return bytes.status();
    if (!request->ParseFromString(*bytes)) {
      return absl::InternalError("request bytes do not parse");
    }
    return absl::OkStatus();
  }
};

TEST_F(RealTranscoderTest, CreateServerFillsTheBodyField) {
  v1::CreateServerRequest request;
  ASSERT_TRUE(Build("POST", "/config", "name=ignored-query-is-body",
                    R"({"name":"my-server","transport":"streamableHttp",
                        "url":"http://localhost:8080/mcp",
                        "headers":{"Authorization":"Bearer token"},
                        "args":["-y"],"timeouts":{"connection":5000,
                        "progressResetsTimeout":false},
                        "createdAt":"2024-01-15T10:00:00Z",
                        "somethingNew":{"x":[1,2]}})",
                    &request)
                  .ok());
  const v1::ServerConfig& server = request.server();
  EXPECT_EQ(server.name(), "my-server");
  EXPECT_EQ(server.transport(), "streamableHttp");
  EXPECT_EQ(server.url(), "http://localhost:8080/mcp");
  EXPECT_EQ(server.headers().at("Authorization"), "Bearer token");
  EXPECT_THAT(server.args(), ElementsAre("-y"));
  EXPECT_EQ(server.timeouts().connection(), 5000u);
  ASSERT_TRUE(server.timeouts().has_progress_resets_timeout());
  EXPECT_FALSE(server.timeouts().progress_resets_timeout());
  EXPECT_EQ(server.created_at().seconds(), 1705312800);
  EXPECT_FALSE(server.has_command());
}

TEST_F(RealTranscoderTest, UpdateServerTakesIdFromPathAndMaskFromQuery) {
  v1::UpdateServerRequest request;
  ASSERT_TRUE(Build("PUT", "/config/abc%20123",
                    "updateMask=env,connectionMode&id=from-query",
                    R"({"env":{"A":"1"},"connectionMode":"direct"})", &request)
                  .ok());
  EXPECT_EQ(request.id(), "abc 123");
  EXPECT_EQ(request.server().env().at("A"), "1");
  EXPECT_EQ(request.server().connection_mode(), "direct");
  EXPECT_THAT(request.update_mask().paths(),
              ElementsAre("env", "connection_mode"));
}

TEST_F(RealTranscoderTest,
       PathVariablesOverrideTheBodyAndStarBodyIgnoresQuery) {
  v1::ConnectRequest request;
  ASSERT_TRUE(Build("POST", "/api/servers/from-path/connect",
                    "serverId=from-query", R"({"serverId":"from-body"})",
                    &request)
                  .ok());
  EXPECT_EQ(request.server_id(), "from-path");

  v1::ListRequest list;
  ASSERT_TRUE(Build("GET", "/api/servers/s1/tools",
                    "serverId=from-query&cursor=c1&all=true", "", &list)
                  .ok());
  EXPECT_EQ(list.server_id(), "s1");
  EXPECT_EQ(list.cursor(), "c1");
  EXPECT_TRUE(list.all());
}

TEST_F(RealTranscoderTest, CallToolReadsStructArgumentsAndNestedOptions) {
  v1::CallToolRequest request;
  ASSERT_TRUE(Build("POST", "/api/servers/s1/tools/echo:call", "",
                    R"({"arguments":{"message":"hi","n":1,"list":[true,null,
                        "x"],"obj":{"d":1.5}},"options":{"timeoutMs":100,
                        "progress":true}})",
                    &request)
                  .ok());
  EXPECT_EQ(request.server_id(), "s1");
  EXPECT_EQ(request.name(), "echo");
  const auto& fields = request.arguments().fields();
  EXPECT_EQ(fields.at("message").string_value(), "hi");
  EXPECT_EQ(fields.at("n").number_value(), 1);
  const auto& list = fields.at("list").list_value();
  ASSERT_EQ(list.values_size(), 3);
  EXPECT_TRUE(list.values(0).bool_value());
  EXPECT_EQ(list.values(1).kind_case(), google::protobuf::Value::kNullValue);
  EXPECT_EQ(list.values(2).string_value(), "x");
  EXPECT_EQ(fields.at("obj").struct_value().fields().at("d").number_value(),
            1.5);
  EXPECT_EQ(request.options().timeout_ms(), 100u);
  EXPECT_TRUE(request.options().progress());
}

TEST_F(RealTranscoderTest, ForwardPutsRawBytesIntoTheHttpBodyField) {
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
  v1::ForwardRequest request;
  ASSERT_TRUE(Build("POST", "/mcp", "serverId=s1&options.timeoutMs=250", body,
                    &request, "application/json; charset=utf-8")
                  .ok());
  EXPECT_EQ(request.server_id(), "s1");
  EXPECT_EQ(request.body().data(), body);
  EXPECT_EQ(request.body().content_type(), "application/json; charset=utf-8");
  EXPECT_EQ(request.options().timeout_ms(), 250u);

  // Not parsed, so not required to be JSON; the query may not touch it.
  v1::ForwardRequest raw;
  ASSERT_TRUE(Build("POST", "/mcp", "server_id=s2&body.data=x", "not json {",
                    &raw, "text/plain")
                  .ok());
  EXPECT_EQ(raw.server_id(), "s2");
  EXPECT_EQ(raw.body().data(), "not json {");

  v1::ForwardRequest bad_type;
  ExpectInvalid(
      Build("POST", "/mcp", "serverId=s1", "{}", &bad_type, "text/\xff"), "",
      "Content-Type");

  v1::ForwardRequest empty;
  ASSERT_TRUE(Build("POST", "/mcp", "serverId=s1", "", &empty).ok());
  EXPECT_FALSE(empty.has_body());
}

TEST_F(RealTranscoderTest, QueryParametersInEveryForm) {
  v1::WatchRequest request;
  ASSERT_TRUE(Build("GET", "/api/events",
                    "serverId=s+1%21&methods=tools%2Fcall&methods=ping"
                    "&kinds=EVENT_KIND_MESSAGE&kinds=2&backlog=10"
                    "&direction=SERVER_TO_CLIENT&unknown=1&&=x&nested.thing=2",
                    "", &request)
                  .ok());
  EXPECT_EQ(request.server_id(), "s 1!");
  EXPECT_THAT(request.methods(), ElementsAre("tools/call", "ping"));
  EXPECT_THAT(request.kinds(),
              ElementsAre(v1::EVENT_KIND_MESSAGE, v1::EVENT_KIND_STATE));
  EXPECT_EQ(request.backlog(), 10u);
  EXPECT_EQ(request.direction(), v1::SERVER_TO_CLIENT);

  v1::ExportServersRequest exported;
  ASSERT_TRUE(Build("GET", "/config/export",
                    "format=CONFIG_FORMAT_VSCODE&servers=a&servers=b", "",
                    &exported)
                  .ok());
  EXPECT_EQ(exported.format(), v1::CONFIG_FORMAT_VSCODE);
  EXPECT_THAT(exported.servers(), ElementsAre("a", "b"));
  ASSERT_TRUE(Build("GET", "/config/export", "format=3", "", &exported).ok());
  EXPECT_EQ(exported.format(), v1::CONFIG_FORMAT_VSCODE);
}

TEST_F(RealTranscoderTest, EnumsTakeTheShortNamesTheCliUses) {
  const std::pair<const char*, v1::ConfigFormat> cases[] = {
      {"claude", v1::CONFIG_FORMAT_MCP_SERVERS},
      {"cursor", v1::CONFIG_FORMAT_MCP_SERVERS},
      {"mcp-servers", v1::CONFIG_FORMAT_MCP_SERVERS},
      {"vscode", v1::CONFIG_FORMAT_VSCODE},
      {"VSCode", v1::CONFIG_FORMAT_VSCODE},
      {"inspector", v1::CONFIG_FORMAT_INSPECTOR},
      {"auto", v1::CONFIG_FORMAT_AUTO},
  };
  for (const auto& [name, format] : cases) {
    SCOPED_TRACE(name);
    v1::ExportServersRequest exported;
    exported.set_format(v1::CONFIG_FORMAT_INSPECTOR);
    ASSERT_TRUE(Build("GET", "/config/export", std::string("format=") + name,
                      "", &exported)
                    .ok());
    EXPECT_EQ(exported.format(), format);
    v1::ImportServersRequest import;
    import.set_format(v1::CONFIG_FORMAT_INSPECTOR);
    ASSERT_TRUE(Build("POST", "/config/import", "",
                      absl::StrCat(R"({"format":")", name, R"("})"), &import)
                    .ok());
    EXPECT_EQ(import.format(), format);
  }
  // Neither a bare prefix nor another enum's short name is taken.
  v1::ExportServersRequest exported;
  ExpectInvalid(Build("GET", "/config/export", "format=", "", &exported),
                "format", "inspector.v1.ConfigFormat");
  ExpectInvalid(Build("GET", "/config/export", "format=config-format-vscode_x",
                      "", &exported),
                "format", "inspector.v1.ConfigFormat");
}

TEST_F(RealTranscoderTest, BadQueryValuesNameTheParameter) {
  v1::ExportServersRequest exported;
  ExpectInvalid(Build("GET", "/config/export", "format=BOGUS", "", &exported),
                "format", "inspector.v1.ConfigFormat");
  v1::ListRequest list;
  ExpectInvalid(Build("GET", "/api/servers/s1/tools", "all=yes", "", &list),
                "all", "true or false");
  ExpectInvalid(
      Build("GET", "/api/servers/s1/tools", "cursor=a&cursor=b", "", &list),
      "cursor", "more than once");
  ExpectInvalid(Build("GET", "/api/servers/s1/tools", "cursor=%zz", "", &list),
                "cursor", "percent-encoding");
  ExpectInvalid(Build("GET", "/api/servers/s1/tools", "cursor=%FF", "", &list),
                "cursor", "UTF-8");
  v1::WatchRequest watch;
  ExpectInvalid(Build("GET", "/api/events", "backlog=-1", "", &watch),
                "backlog", "unsigned 32-bit");
}

TEST_F(RealTranscoderTest, JsonErrorsAreInvalidRequestsNamingTheField) {
  v1::ImportServersRequest import;
  ExpectInvalid(
      Build("POST", "/config/import", "", R"({"format":"BOGUS"})", &import),
      "format", "unknown value of enum inspector.v1.ConfigFormat");
  ExpectInvalid(
      Build("POST", "/config/import", "", R"({"dryRun":"yes"})", &import),
      "dryRun", "got \"yes\"");
  ExpectInvalid(Build("POST", "/config/import", "", R"({"dryRun":)", &import),
                "", "not valid JSON");
  ExpectInvalid(Build("POST", "/config/import", "", "content=abc", &import), "",
                "not valid JSON");
  ExpectInvalid(Build("POST", "/config/import", "", "[1,2]", &import), "",
                "invalid request body: expected an object");

  v1::CreateServerRequest create;
  ExpectInvalid(Build("POST", "/config", "", R"({"args":"npx"})", &create),
                "server.args", "expected an array");
  ExpectInvalid(Build("POST", "/config", "",
                      R"({"timeouts":{"connection":"abc"}})", &create),
                "server.timeouts.connection", "unsigned 32-bit integer");
  ExpectInvalid(Build("POST", "/config", "", R"({"env":{"A":1}})", &create),
                "server.env.A", "expected a UTF-8 string");
  ExpectInvalid(
      Build("POST", "/config", "", R"({"createdAt":"yesterday"})", &create),
      "server.createdAt", "RFC 3339");
  ExpectInvalid(Build("POST", "/config", "", "\"text\"", &create), "server",
                "expected an object");
}

TEST_F(RealTranscoderTest, AcceptsEnumsAndInt64InEveryJsonForm) {
  v1::ImportServersRequest import;
  ASSERT_TRUE(Build("POST", "/config/import", "",
                    R"({"content":"{}","format":2,"on_conflict":
                        "CONFLICT_POLICY_SKIP","dryRun":true,"x":null})",
                    &import)
                  .ok());
  EXPECT_EQ(import.content(), "{}");
  EXPECT_EQ(import.format(), v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(import.on_conflict(), v1::CONFLICT_POLICY_SKIP);
  EXPECT_TRUE(import.dry_run());

  v1::ReplayRequest replay;
  ASSERT_TRUE(Build("POST", "/api/replay", "",
                    R"({"messageId":"9007199254740993"})", &replay)
                  .ok());
  EXPECT_EQ(replay.message_id(), 9007199254740993);
  ASSERT_TRUE(
      Build("POST", "/api/replay", "", R"({"message_id":123})", &replay).ok());
  EXPECT_EQ(replay.message_id(), 123);
  ExpectInvalid(
      Build("POST", "/api/replay", "", R"({"messageId":1.5})", &replay),
      "messageId", "64-bit integer");
}

TEST_F(RealTranscoderTest, EmptyBodiesGiveEmptyMessages) {
  v1::ImportServersRequest import;
  ASSERT_TRUE(Build("POST", "/config/import", "", "", &import).ok());
  EXPECT_EQ(import.ByteSizeLong(), 0u);
  ASSERT_TRUE(Build("POST", "/config/import", "", " \r\n\t", &import).ok());
  ASSERT_TRUE(Build("POST", "/config/import", "", "null", &import).ok());
  v1::CreateServerRequest create;
  ASSERT_TRUE(Build("POST", "/config", "", "", &create).ok());
  EXPECT_FALSE(create.has_server());
}

v1::ServerConfig SeedServer() {
  v1::ServerConfig server;
  server.set_id("abc123");
  server.set_name("everything-server");
  server.set_transport("stdio");
  server.set_command("npx");
  server.add_args("-y");
  server.add_args("@modelcontextprotocol/server-everything");
  server.set_connection_mode("proxy");
  server.mutable_created_at()->set_seconds(1705312800);
  server.mutable_updated_at()->set_seconds(1705312800);
  return server;
}

TEST_F(RealTranscoderTest, RendersServerConfigLikeTheSeedExample) {
  auto out = transcoder_->RenderResponse(
      RouteOf("inspector.v1.ConfigService.GetServer"),
      SeedServer().SerializeAsString());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->content_type, "application/json");
  // Fields added to ServerConfig after updated_at follow the prefix.
  const std::string prefix =
      R"({"id":"abc123","name":"everything-server","transport":"stdio",)"
      R"("command":"npx","args":["-y","@modelcontextprotocol/server-everything"],)"
      R"("env":{},"headers":{},"connectionMode":"proxy",)"
      R"("createdAt":"2024-01-15T10:00:00Z","updatedAt":"2024-01-15T10:00:00Z")";
  EXPECT_EQ(out->body.substr(0, prefix.size()), prefix) << out->body;
  Json json = Json::parse(out->body);
  for (const char* unset : {"cwd", "url", "timeouts", "oauth", "extra"}) {
    EXPECT_FALSE(json.contains(unset)) << unset;
  }

  v1::ListServersResponse empty;
  auto list = transcoder_->RenderResponse(
      RouteOf("inspector.v1.ConfigService.ListServers"),
      empty.SerializeAsString());
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->body, R"({"servers":[]})");
}

TEST_F(RealTranscoderTest, OutputEqualsProtobufsJsonWithPrimitiveFields) {
  // The same fields and values as util::MessageToJsonString with
  // always_print_primitive_fields (protobuf 3.21), whatever the order.
  v1::ServerConfig server = SeedServer();
  (*server.mutable_env())["B"] = "2";
  (*server.mutable_env())["A"] = "1";
  server.mutable_timeouts()->set_connection(5);
  server.mutable_created_at()->set_nanos(500000000);
  auto* extra = server.mutable_extra()->mutable_fields();
  (*extra)["disabled"].set_bool_value(true);
  (*extra)["n"].set_number_value(2.25);
  (*extra)["nothing"].set_null_value(google::protobuf::NULL_VALUE);
  (*extra)["list"].mutable_list_value()->add_values()->set_string_value("x");
  v1::ServerStatus status;
  status.set_server_id("s1");
  status.set_state(v1::CONNECTED);
  status.set_pid(42);
  v1::McpMessage message;
  message.set_id(9007199254740993);
  message.set_raw_size(18446744073709551615u);
  message.set_duration_ms(0);
  message.set_direction(v1::SERVER_TO_CLIENT);

  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  auto check = [&](const google::protobuf::Message& generated,
                   std::string_view method) {
    std::string expected;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(generated,
                                                            &expected, options)
                    .ok());
    auto out = transcoder_->RenderResponse(RouteOf(method),
                                           generated.SerializeAsString());
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(Json::parse(out->body), Json::parse(expected))
        << out->body << "\n"
        << expected;
  };
  check(server, "inspector.v1.ConfigService.GetServer");
  check(status, "inspector.v1.McpService.GetServerStatus");
  v1::ReplayResponse replay;
  *replay.mutable_request() = message;
  check(replay, "inspector.v1.SessionService.Replay");
}

TEST_F(RealTranscoderTest, RendersEnumsByNameAndUnknownOnesByNumber) {
  v1::ServerStatus status;
  status.set_state(v1::CONNECTED);
  const Route& route = RouteOf("inspector.v1.McpService.GetServerStatus");
  auto out = transcoder_->RenderResponse(route, status.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Json::parse(out->body)["state"], "CONNECTED");
  status.set_state(static_cast<v1::ConnectionState>(99));
  out = transcoder_->RenderResponse(route, status.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(Json::parse(out->body)["state"], 99);
}

TEST_F(RealTranscoderTest, PassesHttpBodyResponsesThrough) {
  const Route& route = RouteOf("inspector.v1.McpService.Forward");
  google::api::HttpBody body;
  body.set_content_type("application/json");
  body.set_data(R"({"jsonrpc":"2.0","id":1,"result":{}})");
  auto out = transcoder_->RenderResponse(route, body.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->content_type, "application/json");
  EXPECT_EQ(out->body, body.data());

  google::api::HttpBody bare;
  bare.set_data("\x01\x02 not json");
  out = transcoder_->RenderResponse(route, bare.SerializeAsString());
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->content_type, "application/json");
  EXPECT_EQ(out->body, bare.data());

  out = transcoder_->RenderResponse(route, "");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->body, "");
}

TEST_F(RealTranscoderTest, StreamMessagesRenderOnOneLine) {
  const Route& route = RouteOf("inspector.v1.EventsService.Watch");
  ASSERT_TRUE(route.server_streaming);
  v1::Event event;
  event.set_sequence(7);
  event.mutable_message()->set_raw("{\n  \"jsonrpc\": \"2.0\"\n}\r\n");
  event.mutable_message()->set_method("tools/list");
  auto out = transcoder_->RenderStreamMessage(route, event.SerializeAsString());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->body.find('\n'), std::string::npos) << out->body;
  EXPECT_EQ(out->body.find('\r'), std::string::npos);
  Json json = Json::parse(out->body);
  EXPECT_EQ(json["sequence"], "7");
  EXPECT_EQ(json["message"]["raw"], event.message().raw());
  EXPECT_FALSE(json.contains("state"));  // other oneof members stay out
}

TEST_F(RealTranscoderTest, MalformedResponsesAreInternalErrors) {
  auto out = transcoder_->RenderResponse(
      RouteOf("inspector.v1.ConfigService.GetServer"), "\xff\xff\xff\xff");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(ErrorReason(out.status()), "INTERNAL_ERROR");
  out = transcoder_->RenderResponse(RouteOf("inspector.v1.McpService.Forward"),
                                    "\x12\xff");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(ErrorReason(out.status()), "INTERNAL_ERROR");
}

TEST_F(RealTranscoderTest, IsSafeToShareAcrossThreads) {
  const Route& create = RouteOf("inspector.v1.ConfigService.CreateServer");
  const Route& get = RouteOf("inspector.v1.ConfigService.GetServer");
  std::string response = SeedServer().SerializeAsString();
  auto expected_request = transcoder_->BuildRequest(
      create, {}, "", R"({"name":"n","args":["a"],"env":{"k":"v"}})", "");
  auto expected_response = transcoder_->RenderResponse(get, response);
  ASSERT_TRUE(expected_request.ok() && expected_response.ok());
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        auto request = transcoder_->BuildRequest(
            create, {}, "", R"({"name":"n","args":["a"],"env":{"k":"v"}})", "");
        auto rendered = transcoder_->RenderResponse(get, response);
        if (!request.ok() || *request != *expected_request || !rendered.ok() ||
            rendered->body != expected_response->body) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
}

}  // namespace
}  // namespace inspector::gateway
