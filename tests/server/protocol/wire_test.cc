// Unit tests of server/protocol/: the one set of wire rules of the two MCP
// protocol eras that the engine, the front doors and the era relay share.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/protocol/capabilities.h"
#include "server/protocol/era.h"
#include "server/protocol/header_codec.h"
#include "server/protocol/header_params.h"
#include "server/protocol/results.h"
#include "server/protocol/revision.h"

namespace inspector::protocol {
namespace {

using json = nlohmann::json;

// Headers by lower-case name, as a received request has them.
HeaderLookup Headers(std::map<std::string, std::string> headers) {
  auto held = std::make_shared<std::map<std::string, std::string>>(
      std::move(headers));
  return [held](std::string_view name) -> const std::string* {
    auto it = held->find(std::string(name));
    return it == held->end() ? nullptr : &it->second;
  };
}

// --- era.h, revision.h ------------------------------------------------------

TEST(EraTest, DiscoverAnswersAreClassified) {
  EXPECT_EQ(ParseDiscoverResponse(
                R"({"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}})")
                .kind,
            DiscoverOutcome::Kind::kModern);
  DiscoverOutcome unsupported = ParseDiscoverResponse(
      R"({"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28","2025-11-25"]}}})");
  EXPECT_EQ(unsupported.kind, DiscoverOutcome::Kind::kUnsupportedVersion);
  EXPECT_THAT(unsupported.supported,
              ::testing::ElementsAre("2026-07-28", "2025-11-25"));
  EXPECT_EQ(ParseDiscoverResponse(
                R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}})")
                .kind,
            DiscoverOutcome::Kind::kNotModern);
  EXPECT_EQ(ParseDiscoverResponse(R"({"jsonrpc":"2.0","id":1,"result":"garbage"})").kind,
            DiscoverOutcome::Kind::kNotModern);
  EXPECT_EQ(ParseDiscoverResponse("not json").kind,
            DiscoverOutcome::Kind::kNotModern);
  EXPECT_EQ(ParseDiscoverResponse(
                R"({"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2099-01-01"]}})")
                .kind,
            DiscoverOutcome::Kind::kModernIncompatible);
}

TEST(HeaderCodecTest, ValuesAreEncodedWhenNotPlainAscii) {
  EXPECT_EQ(EncodeHeaderValue("us-west1"), "us-west1");
  EXPECT_EQ(EncodeHeaderValue("in side"), "in side");
  EXPECT_EQ(EncodeHeaderValue("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
  EXPECT_EQ(EncodeHeaderValue(" padded "), "=?base64?IHBhZGRlZCA=?=");
  EXPECT_EQ(EncodeHeaderValue("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
  EXPECT_EQ(EncodeHeaderValue("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
}

TEST(HeaderParamsTest, ToolAnnotationsAreCheckedAndMirrored) {
  json tool = json::parse(R"({"name":"sql","inputSchema":{"type":"object","properties":{
      "region":{"type":"string","x-mcp-header":"Region"},
      "opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
      "query":{"type":"string"}}}})");
  absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
  ASSERT_TRUE(params.ok()) << params.status();
  ASSERT_EQ(params->size(), 2u);
  std::map<std::string, std::vector<HeaderParam>> tools = {{"sql", *params}};
  json call = json::parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
      "name":"sql","arguments":{"region":"eu","opts":{"n":7},"query":"q"}}})");
  auto headers = ModernRequestHeaders(call, tools);
  EXPECT_THAT(headers, ::testing::UnorderedElementsAre(
                           std::make_pair(std::string("Mcp-Method"), std::string("tools/call")),
                           std::make_pair(std::string("Mcp-Name"), std::string("sql")),
                           std::make_pair(std::string("Mcp-Param-Region"), std::string("eu")),
                           std::make_pair(std::string("Mcp-Param-N"), std::string("7"))));
  // A null argument is left out.
  call["params"]["arguments"]["region"] = nullptr;
  headers = ModernRequestHeaders(call, tools);
  for (const auto& [name, value] : headers) EXPECT_NE(name, "Mcp-Param-Region");

  for (const char* bad : {
           R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}})",
           R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"has space"}}})",
           R"({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}})",
           R"({"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}})",
           R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}})",
           R"({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}})",
       }) {
    json invalid = {{"name", "t"}, {"inputSchema", json::parse(bad)}};
    EXPECT_FALSE(ToolHeaderParams(invalid).ok()) << bad;
  }
}

TEST(HeaderParamsTest, ResourcesAndPromptsNameTheirTarget) {
  auto headers = ModernRequestHeaders(
      json::parse(R"({"method":"resources/read","params":{"uri":"file:///a b"}})"), {});
  EXPECT_THAT(headers, ::testing::Contains(std::make_pair(
                           std::string("Mcp-Name"), std::string("file:///a b"))));
}

TEST(ResultsTest, OnlyInputRequiredResultsAreRounds) {
  auto complete = ParseInputRequired(R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})");
  ASSERT_TRUE(complete.ok());
  EXPECT_FALSE(complete->has_value());
  auto error = ParseInputRequired(
      R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"input_required"}})");
  ASSERT_TRUE(error.ok());
  EXPECT_FALSE(error->has_value());
  auto round = ParseInputRequired(
      R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}},"requestState":"s"}})");
  ASSERT_TRUE(round.ok());
  ASSERT_TRUE(round->has_value());
  EXPECT_EQ((*round)->requests.at(0).key, "k");
  EXPECT_EQ((*round)->request_state, "s");
  EXPECT_FALSE(ParseInputRequired(
                   R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required"}})")
                   .ok());
  EXPECT_FALSE(ParseInputRequired(
                   R"({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":5}})")
                   .ok());
}

TEST(ResultsTest, RetryCarriesTheAnswersAndTheStateOnlyWhenGiven) {
  const std::string first =
      R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t","inputResponses":{"old":1},"requestState":"old"}})";
  absl::StatusOr<std::string> retry =
      BuildInputRetry(first, json({{"k", {{"action", "accept"}}}}), "s2");
  ASSERT_TRUE(retry.ok());
  json message = json::parse(*retry);
  EXPECT_EQ(message["params"]["inputResponses"], json({{"k", {{"action", "accept"}}}}));
  EXPECT_EQ(message["params"]["requestState"], "s2");
  retry = BuildInputRetry(first, json::object(), std::nullopt);
  ASSERT_TRUE(retry.ok());
  message = json::parse(*retry);
  EXPECT_FALSE(message["params"].contains("requestState"));
  EXPECT_FALSE(message["params"].contains("inputResponses"));
  EXPECT_EQ(message["id"], "c");
}

TEST(ResultsTest, RetriesAreToldByTheirAnswersOrState) {
  EXPECT_TRUE(IsInputRetry(json::parse(
      R"({"id":1,"method":"tools/call","params":{"requestState":"s"}})")));
  EXPECT_TRUE(IsInputRetry(json::parse(
      R"({"id":1,"method":"tools/call","params":{"inputResponses":{}}})")));
  EXPECT_FALSE(IsInputRetry(json::parse(
      R"({"id":1,"method":"tools/call","params":{"name":"t"}})")));
  EXPECT_FALSE(IsInputRetry(json::parse(R"({"id":1,"method":"ping"})")));
}

TEST(ResultsTest, RecordedRoundsAnswerTheLiveOnesByKeyThenByMethod) {
  auto ask = [](const std::string& key, const std::string& method,
                json params = json::object()) {
    InputRequest request;
    request.key = key;
    request.method = method;
    request.params = std::move(params);
    return request;
  };
  std::vector<RecordedRound> recorded(2);
  recorded[0].asked = json::parse(
      R"({"confirm":{"method":"elicitation/create","params":{"message":"A?"}},
          "model":{"method":"sampling/createMessage","params":{"n":1}}})");
  recorded[0].answered = json::parse(
      R"({"confirm":{"action":"accept"},"model":{"role":"assistant","n":1}})");
  recorded[1].asked = json::parse(
      R"({"again":{"method":"sampling/createMessage","params":{"n":2}}})");
  recorded[1].answered = json::parse(R"({"again":{"role":"assistant","n":2}})");

  // The same key and method in the same round.
  std::set<std::pair<size_t, std::string>> taken;
  RoundAnswers same = AnswerFromRecording(
      {ask("confirm", "elicitation/create")}, recorded, 0, &taken);
  EXPECT_TRUE(same.unanswered.empty());
  EXPECT_EQ(same.responses, json::parse(R"({"confirm":{"action":"accept"}})"));

  // Renamed keys: by method, the same params first, each answer once.
  taken.clear();
  RoundAnswers renamed = AnswerFromRecording(
      {ask("a", "sampling/createMessage", json{{"n", 2}}),
       ask("b", "sampling/createMessage", json{{"n", 9}}),
       ask("c", "sampling/createMessage")},
      recorded, 0, &taken);
  EXPECT_EQ(renamed.responses["a"]["n"], 2);
  EXPECT_EQ(renamed.responses["b"]["n"], 1);
  EXPECT_EQ(renamed.unanswered, std::vector<std::string>{"c"});

  // A method never asked is not answered.
  taken.clear();
  RoundAnswers none = AnswerFromRecording({ask("confirm", "roots/list")},
                                          recorded, 0, &taken);
  EXPECT_TRUE(none.responses.empty());
  EXPECT_EQ(none.unanswered, std::vector<std::string>{"confirm"});
}

TEST(EraTest, ModernRequestsAreToldFromHandshakeOnes) {
  const json plain = json::parse(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}})");
  EXPECT_FALSE(IsModernRequest(nullptr, plain));
  const std::string old_version = "2025-06-18";
  EXPECT_FALSE(IsModernRequest(&old_version, plain));
  const std::string new_version = "2026-07-28";
  EXPECT_TRUE(IsModernRequest(&new_version, plain));
  // A version the handshake era does not have is not the handshake era's.
  const std::string unknown = "2099-01-01";
  EXPECT_TRUE(IsModernRequest(&unknown, plain));
  EXPECT_TRUE(IsModernRequest(
      nullptr,
      json::parse(R"({"jsonrpc":"2.0","id":1,"method":"server/discover"})")));
  EXPECT_TRUE(IsModernRequest(
      nullptr,
      json::parse(
          R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})")));
  EXPECT_TRUE(IsHandshakeVersion("2024-10-07"));
  EXPECT_FALSE(IsHandshakeVersion("2026-07-28"));
  EXPECT_TRUE(IsModernVersion("2026-07-28"));
  EXPECT_FALSE(IsModernVersion("2025-11-25"));
}

TEST(EraTest, ProtocolSettingsAreNamed) {
  EXPECT_EQ(ParseProtocolMode(""), ProtocolMode::kAuto);
  EXPECT_EQ(ParseProtocolMode("modern"), ProtocolMode::kModern);
  EXPECT_EQ(ParseProtocolMode("legacy"), ProtocolMode::kLegacy);
  EXPECT_EQ(ParseProtocolMode("newest"), std::nullopt);
  EXPECT_STREQ(ProtocolModeName(ProtocolMode::kModern), "modern");
  EXPECT_THAT(ModernErrorMeaning(kHeaderMismatch),
              ::testing::StartsWith("HeaderMismatch"));
  EXPECT_EQ(ModernErrorMeaning(-32600), "");
}

// --- capabilities.h ----------------------------------------------------------

TEST(CapabilitiesTest, EachEraDeclaresItsOwnShape) {
  ClientFeatures features;
  features.sampling = true;
  features.elicitation_form = true;
  features.elicitation_url = true;
  features.roots = true;
  const json elicitation = {{"form", json::object()}, {"url", json::object()}};
  EXPECT_EQ(ClientCapabilities(features, Era::kHandshake),
            json({{"sampling", json::object()},
                  {"elicitation", elicitation},
                  {"roots", {{"listChanged", true}}}}));
  // 2026-07-28: roots without listChanged, and the tasks extension.
  EXPECT_EQ(ClientCapabilities(features, Era::kModern),
            json({{"sampling", json::object()},
                  {"elicitation", elicitation},
                  {"roots", json::object()},
                  {"extensions",
                   {{"io.modelcontextprotocol/tasks", json::object()}}}}));
  EXPECT_EQ(ClientCapabilities({}, Era::kHandshake), json::object());
}

// MCP Apps: declared under `extensions` in either era, only when asked for.
TEST(CapabilitiesTest, AppsExtensionOnlyWhenAsked) {
  ClientFeatures features;
  features.apps = true;
  const json apps = {{"mimeTypes", {"text/html;profile=mcp-app"}}};
  EXPECT_EQ(ClientCapabilities(features, Era::kHandshake),
            json({{"extensions", {{"io.modelcontextprotocol/ui", apps}}}}));
  EXPECT_EQ(ClientCapabilities(features, Era::kModern),
            json({{"extensions",
                   {{"io.modelcontextprotocol/tasks", json::object()},
                    {"io.modelcontextprotocol/ui", apps}}}}));
  EXPECT_FALSE(ClientCapabilities({}, Era::kModern)["extensions"].contains(
      "io.modelcontextprotocol/ui"));
}

// --- header_codec.h ----------------------------------------------------------

TEST(HeaderCodecTest, DecodingUndoesEncoding) {
  for (const std::string value :
       {"us-west1", "in side", "Hello, 世界", " padded ", "line1\nline2",
        "tab\there", "=?base64?literal?=", ""}) {
    std::optional<std::string> decoded =
        DecodeHeaderValue(EncodeHeaderValue(value));
    ASSERT_TRUE(decoded.has_value()) << value;
    EXPECT_EQ(*decoded, value);
  }
}

TEST(HeaderCodecTest, OnlyStrictBase64AndCleanPlainValuesDecode) {
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8=?="), "Hello");
  // Missing padding, characters outside the alphabet, '=' inside.
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8?="), std::nullopt);
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVs!!!bG8=?="), std::nullopt);
  EXPECT_EQ(DecodeHeaderValue("=?base64?SG=sbG8=?="), std::nullopt);
  // Only the whole sentinel form is decoded.
  EXPECT_EQ(DecodeHeaderValue("=?base64?SGVsbG8="), "=?base64?SGVsbG8=");
  // Control characters other than tab, and DEL, are no plain value.
  EXPECT_EQ(DecodeHeaderValue("a\tb"), "a\tb");
  EXPECT_EQ(DecodeHeaderValue("a\nb"), std::nullopt);
  EXPECT_EQ(DecodeHeaderValue("a\x7f"), std::nullopt);
}

// --- header_params.h: the server's checks ------------------------------------

TEST(HeaderParamsTest, TargetHeadersMustSayWhatTheBodySays) {
  const json call = json::parse(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a b"}})");
  EXPECT_EQ(CheckTargetHeaders(
                call, Headers({{"mcp-method", "tools/call"}, {"mcp-name", "a b"}})),
            "");
  EXPECT_EQ(CheckTargetHeaders(call, Headers({{"mcp-method", "tools/call"},
                                              {"mcp-name", "=?base64?YSBi?="}})),
            "");
  EXPECT_THAT(CheckTargetHeaders(call, Headers({{"mcp-name", "a b"}})),
              ::testing::HasSubstr("Mcp-Method header is required"));
  EXPECT_THAT(CheckTargetHeaders(
                  call, Headers({{"mcp-method", "tools/list"}, {"mcp-name", "a b"}})),
              ::testing::HasSubstr("does not match the body's method"));
  EXPECT_THAT(CheckTargetHeaders(call, Headers({{"mcp-method", "tools/call"}})),
              ::testing::HasSubstr("Mcp-Name header is required"));
  EXPECT_THAT(CheckTargetHeaders(
                  call, Headers({{"mcp-method", "tools/call"}, {"mcp-name", "b"}})),
              ::testing::HasSubstr("does not match the body's"));
  EXPECT_THAT(CheckTargetHeaders(call, Headers({{"mcp-method", "tools/call"},
                                                {"mcp-name", "=?base64?YS?="}})),
              ::testing::HasSubstr("not a valid header value"));
  // Methods without a target need Mcp-Method only.
  EXPECT_EQ(CheckTargetHeaders(json::parse(R"({"method":"tools/list"})"),
                               Headers({{"mcp-method", "tools/list"}})),
            "");
}

TEST(HeaderParamsTest, TaskRequestsNameTheirTaskOnBothSides) {
  // The tasks extension's requests carry their task in Mcp-Name: the
  // engine sends it and the front doors require it.
  const json get = json::parse(
      R"({"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t1"}})");
  EXPECT_EQ(McpNameOf(get), "t1");
  EXPECT_THAT(ModernRequestHeaders(get, {}),
              ::testing::Contains(std::make_pair(std::string("Mcp-Name"),
                                                 std::string("t1"))));
  EXPECT_THAT(CheckTargetHeaders(get, Headers({{"mcp-method", "tasks/get"}})),
              ::testing::HasSubstr("Mcp-Name header is required"));
  EXPECT_EQ(McpNameOf(json::parse(R"({"method":"tools/list"})")), std::nullopt);
  // A target method without its field needs an empty Mcp-Name.
  EXPECT_EQ(McpNameOf(json::parse(R"({"method":"resources/read","params":{}})")),
            "");
}

TEST(HeaderParamsTest, ParamHeadersMustMatchTheirArguments) {
  const std::vector<HeaderParam> params = {{"Region", {"region"}},
                                           {"N", {"opts", "n"}},
                                           {"Dry", {"dry"}}};
  const json arguments = json::parse(R"({"region":"eu","opts":{"n":7},"dry":true})");
  EXPECT_EQ(CheckParamHeaders(arguments, params,
                              Headers({{"mcp-param-region", "eu"},
                                       {"mcp-param-n", "7"},
                                       {"mcp-param-dry", "true"}})),
            "");
  EXPECT_THAT(CheckParamHeaders(arguments, params,
                                Headers({{"mcp-param-region", "us"},
                                         {"mcp-param-n", "7"},
                                         {"mcp-param-dry", "true"}})),
              ::testing::HasSubstr("does not match"));
  EXPECT_THAT(CheckParamHeaders(arguments, params,
                                Headers({{"mcp-param-n", "7"}, {"mcp-param-dry", "true"}})),
              ::testing::HasSubstr("Mcp-Param-Region is required"));
  // A header for an argument that is not there.
  EXPECT_THAT(CheckParamHeaders(json::parse(R"({"opts":{}})"), {params[0]},
                                Headers({{"mcp-param-region", "eu"}})),
              ::testing::HasSubstr("is given but its argument is not"));
  EXPECT_THAT(CheckParamHeaders(arguments, {params[0]},
                                Headers({{"mcp-param-region", "=?base64?ZX?="}})),
              ::testing::HasSubstr("not a valid header value"));
}

TEST(HeaderParamsTest, ToolsWithInvalidAnnotationsAreNotLearnt) {
  // The schema walk's rules (type, token, case-insensitive duplicates,
  // reachability) hold for every side: a tool breaking them has no
  // header parameters to check, as the engine leaves it out.
  const json tools = json::parse(R"([
      {"name":"ok","inputSchema":{"type":"object","properties":{
          "region":{"type":"string","x-mcp-header":"Region"}}}},
      {"name":"number","inputSchema":{"type":"object","properties":{
          "n":{"type":"number","x-mcp-header":"N"}}}},
      {"name":"twice","inputSchema":{"type":"object","properties":{
          "a":{"type":"string","x-mcp-header":"A"},
          "b":{"type":"string","x-mcp-header":"a"}}}},
      {"name":"spaced","inputSchema":{"type":"object","properties":{
          "a":{"type":"string","x-mcp-header":"has space"}}}},
      {"name":"plain","inputSchema":{"type":"object","properties":{
          "q":{"type":"string"}}}}])");
  std::map<std::string, std::vector<HeaderParam>> learnt =
      ToolHeaderParamsByName(tools);
  ASSERT_EQ(learnt.size(), 1u);
  ASSERT_EQ(learnt.at("ok").size(), 1u);
  EXPECT_EQ(learnt.at("ok")[0].name, "Region");
  EXPECT_EQ(learnt.at("ok")[0].path, std::vector<std::string>{"region"});
}

// --- results.h ---------------------------------------------------------------

TEST(ResultsTest, ResultTypesAreRead) {
  EXPECT_EQ(ResultTypeOf(json::parse(R"({"result":{"content":[]}})")), "complete");
  EXPECT_EQ(ResultTypeOf(json::parse(R"({"result":{"resultType":"task"}})")), "task");
  EXPECT_EQ(ResultTypeOf(json::parse(R"({"error":{"code":1}})")), std::nullopt);
  EXPECT_EQ(ResultTypeOf(json::parse(R"({"result":"garbage"})")), std::nullopt);
  EXPECT_TRUE(MayBeResultType(R"({"result":{"resultType":"task"}})", "task"));
  EXPECT_FALSE(MayBeResultType(R"({"result":{}})", "input_required"));
}

TEST(ResultsTest, AnInputRequestWithoutAMethodIsMalformed) {
  // The era relay once put such an entry to the client with an empty
  // method; the rule now is the engine's: the answer is invalid.
  EXPECT_FALSE(ParseInputRequired(
                   R"({"result":{"resultType":"input_required","inputRequests":{"k":{"params":{}}}}})")
                   .ok());
  EXPECT_FALSE(ParseInputRequired(
                   R"({"result":{"resultType":"input_required","inputRequests":[1]}})")
                   .ok());
  auto state_only = ParseInputRequired(
      R"({"result":{"resultType":"input_required","requestState":"s"}})");
  ASSERT_TRUE(state_only.ok());
  ASSERT_TRUE(state_only->has_value());
  EXPECT_TRUE((*state_only)->requests.empty());
}

}  // namespace
}  // namespace inspector::protocol
