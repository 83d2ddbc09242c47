// Tests of the route table: the real descriptor set's routes, lookup with
// 404 / 405, and build errors from small hand-made descriptors.
#include <functional>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include "gateway/route_table.h"
#include "common/errors.h"
#include "google/api/annotations.pb.h"
#include "inspector/v1/errors.pb.h"
#include "tests/gateway/transcoder_test_util.h"

namespace inspector::gateway {
namespace {

using ::google::protobuf::DescriptorPool;
using ::google::protobuf::FieldDescriptorProto;
using ::google::protobuf::FileDescriptorProto;
using ::google::protobuf::FileDescriptorSet;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

class RealRoutesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string bytes = CompiledDescriptorSet();
    ASSERT_FALSE(bytes.empty()) << INSPECTOR_DESCRIPTOR_SET;
    auto pool = LoadDescriptorSet(bytes);
    ASSERT_TRUE(pool.ok()) << pool.status();
    pool_ = pool->release();
    auto table = RouteTable::Build(*pool_);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = new RouteTable(*std::move(table));
  }
  static void TearDownTestSuite() {
    delete table_;
    delete pool_;
    table_ = nullptr;
    pool_ = nullptr;
  }

  static RouteTable::Match Find(std::string_view method,
                                std::string_view path) {
    return table_->Find(method, path);
  }

  static const DescriptorPool* pool_;
  static const RouteTable* table_;
};

const DescriptorPool* RealRoutesTest::pool_ = nullptr;
const RouteTable* RealRoutesTest::table_ = nullptr;

TEST_F(RealRoutesTest, EveryAnnotatedMethodHasARoute) {
  int annotated = 0;
  const auto* index =
      pool_->FindFileByName(std::string(kDescriptorSetIndexFile));
  ASSERT_NE(index, nullptr);
  for (int f = 0; f < index->dependency_count(); ++f) {
    const auto* file = index->dependency(f);
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        google::api::HttpRule rule;
        if (HttpRuleFromOptions(file->service(s)->method(m)->options(),
                                &rule)) {
          // One route per rule, and one per additional binding.
          annotated += 1 + rule.additional_bindings_size();
        }
      }
    }
  }
  // The contract has dozens of REST routes; none is lost.
  EXPECT_GT(annotated, 40);
  EXPECT_EQ(table_->routes().size(), static_cast<size_t>(annotated));
}

TEST_F(RealRoutesTest, FindsGetServerById) {
  RouteTable::Match match = Find("GET", "/config/abc");
  ASSERT_EQ(match.kind, RouteTable::Match::kFound);
  EXPECT_EQ(match.route->method->full_name(),
            "inspector.v1.ConfigService.GetServer");
  EXPECT_EQ(match.route->grpc_path, "/inspector.v1.ConfigService/GetServer");
  EXPECT_EQ(match.route->pattern, "/config/{id}");
  EXPECT_EQ(match.route->body, "");
  EXPECT_FALSE(match.route->server_streaming);
  EXPECT_THAT(match.bindings, ElementsAre(Pair("id", "abc")));
}

TEST_F(RealRoutesTest, LiteralRoutesBeatVariableOnes) {
  RouteTable::Match exported = Find("GET", "/config/export");
  ASSERT_EQ(exported.kind, RouteTable::Match::kFound);
  EXPECT_EQ(exported.route->method->name(), "ExportServers");
  EXPECT_TRUE(exported.bindings.empty());

  RouteTable::Match imported = Find("POST", "/config/import");
  ASSERT_EQ(imported.kind, RouteTable::Match::kFound);
  EXPECT_EQ(imported.route->method->name(), "ImportServers");
  EXPECT_EQ(imported.route->body, "*");

  RouteTable::Match list = Find("GET", "/config");
  ASSERT_EQ(list.kind, RouteTable::Match::kFound);
  EXPECT_EQ(list.route->method->name(), "ListServers");
}

TEST_F(RealRoutesTest, FindsVerbRoutes) {
  RouteTable::Match resolve = Find("POST", "/api/pending/p1:resolve");
  ASSERT_EQ(resolve.kind, RouteTable::Match::kFound);
  EXPECT_EQ(resolve.route->method->full_name(),
            "inspector.v1.ClientRequestsService.Resolve");
  EXPECT_THAT(resolve.bindings, ElementsAre(Pair("id", "p1")));

  RouteTable::Match reject = Find("POST", "/api/pending/p1:reject");
  ASSERT_EQ(reject.kind, RouteTable::Match::kFound);
  EXPECT_EQ(reject.route->method->name(), "Reject");

  RouteTable::Match call = Find("POST", "/api/servers/s%201/tools/echo:call");
  ASSERT_EQ(call.kind, RouteTable::Match::kFound);
  EXPECT_EQ(call.route->method->full_name(),
            "inspector.v1.McpService.CallTool");
  EXPECT_THAT(call.bindings,
              ElementsAre(Pair("server_id", "s 1"), Pair("name", "echo")));

  RouteTable::Match advance = Find("POST", "/api/oauth/s1/flow:advance");
  ASSERT_EQ(advance.kind, RouteTable::Match::kFound);
  EXPECT_EQ(advance.route->method->name(), "AdvanceFlow");
  RouteTable::Match flow = Find("POST", "/api/oauth/s1/flow");
  ASSERT_EQ(flow.kind, RouteTable::Match::kFound);
  EXPECT_EQ(flow.route->method->name(), "StartFlow");
  RouteTable::Match metadata = Find("GET", "/api/mcp/oauth/metadata");
  ASSERT_EQ(metadata.kind, RouteTable::Match::kFound);
  EXPECT_EQ(metadata.route->method->name(), "GetMetadata");
}

TEST_F(RealRoutesTest, ForwardTakesAnHttpBodyField) {
  RouteTable::Match mcp = Find("POST", "/mcp");
  ASSERT_EQ(mcp.kind, RouteTable::Match::kFound);
  EXPECT_EQ(mcp.route->method->name(), "Forward");
  EXPECT_EQ(mcp.route->body, "body");
  EXPECT_EQ(mcp.route->method->output_type()->full_name(),
            "google.api.HttpBody");
}

TEST_F(RealRoutesTest, WatchIsServerStreaming) {
  RouteTable::Match events = Find("GET", "/api/events");
  ASSERT_EQ(events.kind, RouteTable::Match::kFound);
  EXPECT_TRUE(events.route->server_streaming);
}

TEST_F(RealRoutesTest, UnknownPathsAreNotFound) {
  EXPECT_EQ(Find("GET", "/nope").kind, RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("GET", "/config/a/b").kind, RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("GET", "/config/").kind, RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("GET", "").kind, RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("GET", "config").kind, RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("POST", "/api/pending/p1:explode").kind,
            RouteTable::Match::kNotFound);
  EXPECT_EQ(Find("GET", "/config/%zz").kind, RouteTable::Match::kNotFound);
  RouteTable::Match none = Find("GET", "/nope");
  EXPECT_EQ(none.route, nullptr);
  EXPECT_TRUE(none.allowed_methods.empty());
}

TEST_F(RealRoutesTest, WrongMethodIsMethodNotAllowedWithTheAllowedOnes) {
  RouteTable::Match patch = Find("PATCH", "/config/abc");
  EXPECT_EQ(patch.kind, RouteTable::Match::kMethodNotAllowed);
  EXPECT_EQ(patch.route, nullptr);
  EXPECT_THAT(patch.allowed_methods, ElementsAre("DELETE", "GET", "PUT"));

  RouteTable::Match mcp = Find("GET", "/mcp");
  EXPECT_EQ(mcp.kind, RouteTable::Match::kMethodNotAllowed);
  EXPECT_THAT(mcp.allowed_methods, ElementsAre("POST"));

  RouteTable::Match config = Find("DELETE", "/config");
  EXPECT_EQ(config.kind, RouteTable::Match::kMethodNotAllowed);
  EXPECT_THAT(config.allowed_methods, ElementsAre("GET", "POST"));

  RouteTable::Match unknown = Find("BREW", "/health");
  EXPECT_EQ(unknown.kind, RouteTable::Match::kMethodNotAllowed);
  EXPECT_THAT(unknown.allowed_methods, ElementsAre("GET"));
}

// ---------------------------------------------------------------------
// Hand-made descriptors.

// package t; message Req { string id = 1; Inner inner = 2;
// repeated string tags = 3; int32 count = 4; } message Inner { string name
// = 1; } message Resp { string text = 1; } service S { rpc A..D(Req)
// returns (Resp); }
FileDescriptorProto TestFile() {
  FileDescriptorProto file;
  file.set_name("t/test.proto");
  file.set_package("t");
  file.set_syntax("proto3");
  auto add_field = [](google::protobuf::DescriptorProto* message,
                      const char* name, int number,
                      FieldDescriptorProto::Type type,
                      const char* type_name = nullptr, bool repeated = false) {
    FieldDescriptorProto* field = message->add_field();
    field->set_name(name);
    field->set_number(number);
    field->set_type(type);
    field->set_label(repeated ? FieldDescriptorProto::LABEL_REPEATED
                              : FieldDescriptorProto::LABEL_OPTIONAL);
    if (type_name != nullptr) field->set_type_name(type_name);
  };
  auto* inner = file.add_message_type();
  inner->set_name("Inner");
  add_field(inner, "name", 1, FieldDescriptorProto::TYPE_STRING);
  auto* req = file.add_message_type();
  req->set_name("Req");
  add_field(req, "id", 1, FieldDescriptorProto::TYPE_STRING);
  add_field(req, "inner", 2, FieldDescriptorProto::TYPE_MESSAGE, ".t.Inner");
  add_field(req, "tags", 3, FieldDescriptorProto::TYPE_STRING, nullptr, true);
  add_field(req, "count", 4, FieldDescriptorProto::TYPE_INT32);
  auto* resp = file.add_message_type();
  resp->set_name("Resp");
  add_field(resp, "text", 1, FieldDescriptorProto::TYPE_STRING);
  auto* service = file.add_service();
  service->set_name("S");
  for (const char* name : {"A", "B", "C", "D"}) {
    auto* method = service->add_method();
    method->set_name(name);
    method->set_input_type(".t.Req");
    method->set_output_type(".t.Resp");
  }
  return file;
}

google::api::HttpRule* RuleOf(FileDescriptorProto* file, int method) {
  return file->mutable_service(0)
      ->mutable_method(method)
      ->mutable_options()
      ->MutableExtension(google::api::http);
}

absl::StatusOr<RouteTable> BuildFrom(const FileDescriptorProto& file,
                                     std::unique_ptr<DescriptorPool>* pool) {
  FileDescriptorSet set;
  *set.add_file() = file;
  auto loaded = LoadDescriptorSet(set.SerializeAsString());
  if (!loaded.ok()) return loaded.status();
  *pool = *std::move(loaded);
  return RouteTable::Build(**pool);
}

TEST(RouteTableBuildTest, RegistersRulesAndAdditionalBindings) {
  FileDescriptorProto file = TestFile();
  auto* a = RuleOf(&file, 0);
  a->set_get("/items/{id}");
  auto* extra = a->add_additional_bindings();
  extra->set_post("/items/{id}:fetch");
  extra->set_body("*");
  RuleOf(&file, 1)->mutable_custom()->set_kind("OPTIONS");
  RuleOf(&file, 1)->mutable_custom()->set_path("/items");
  RuleOf(&file, 2)->set_patch("/items/{inner.name}/x");
  RuleOf(&file, 2)->set_body("tags");
  RuleOf(&file, 2)->set_response_body("text");
  std::unique_ptr<DescriptorPool> pool;
  auto table = BuildFrom(file, &pool);
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_EQ(table->routes().size(), 4u);
  EXPECT_EQ(table->routes()[0].http_method, "GET");
  EXPECT_EQ(table->routes()[1].http_method, "POST");
  EXPECT_EQ(table->routes()[1].pattern, "/items/{id}:fetch");
  EXPECT_EQ(table->routes()[1].method, table->routes()[0].method);
  EXPECT_EQ(table->routes()[1].grpc_path, "/t.S/A");
  EXPECT_EQ(table->routes()[2].http_method, "OPTIONS");
  EXPECT_EQ(table->routes()[3].body, "tags");
  EXPECT_EQ(table->routes()[3].response_body, "text");

  RouteTable::Match fetch = table->Find("POST", "/items/7:fetch");
  ASSERT_EQ(fetch.kind, RouteTable::Match::kFound);
  EXPECT_THAT(fetch.bindings, ElementsAre(Pair("id", "7")));
  EXPECT_EQ(table->Find("OPTIONS", "/items").kind, RouteTable::Match::kFound);
  RouteTable::Match nested = table->Find("PATCH", "/items/n1/x");
  ASSERT_EQ(nested.kind, RouteTable::Match::kFound);
  EXPECT_THAT(nested.bindings, ElementsAre(Pair("inner.name", "n1")));
}

TEST(RouteTableBuildTest, PrefersTheMostSpecificTemplate) {
  FileDescriptorProto file = TestFile();
  RuleOf(&file, 0)->set_get("/v/{id=**}");
  RuleOf(&file, 1)->set_get("/v/{id}");
  RuleOf(&file, 2)->set_get("/v/special");
  RuleOf(&file, 3)->set_get("/{id}/special");
  std::unique_ptr<DescriptorPool> pool;
  auto table = BuildFrom(file, &pool);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->Find("GET", "/v/special").route->method->name(), "C");
  EXPECT_EQ(table->Find("GET", "/v/x").route->method->name(), "B");
  EXPECT_EQ(table->Find("GET", "/v/x/y").route->method->name(), "A");
  EXPECT_EQ(table->Find("GET", "/v").route->method->name(), "A");
  // A literal first segment beats a variable one.
  EXPECT_EQ(table->Find("GET", "/w/special").route->method->name(), "D");
}

struct BuildErrorCase {
  const char* name;
  std::function<void(FileDescriptorProto*)> edit;
  std::vector<std::string> expected;
};

TEST(RouteTableBuildTest, RejectsBadRulesNamingMethodAndTemplate) {
  const std::vector<BuildErrorCase> cases = {
      {"duplicate",
       [](FileDescriptorProto* f) {
         RuleOf(f, 0)->set_get("/items/{id}");
         RuleOf(f, 1)->set_get("/items/{count}");
       },
       {"t.S.B", "/items/{count}", "t.S.A", "GET /items/*"}},
      {"duplicate additional binding",
       [](FileDescriptorProto* f) {
         RuleOf(f, 0)->set_post("/items");
         RuleOf(f, 0)->add_additional_bindings()->set_post("/items");
       },
       {"t.S.A", "same method and path"}},
      {"bad template",
       [](FileDescriptorProto* f) { RuleOf(f, 0)->set_get("/items/{id"); },
       {"t.S.A", "/items/{id", "unbalanced '{'"}},
      {"missing body field",
       [](FileDescriptorProto* f) {
         RuleOf(f, 0)->set_post("/items");
         RuleOf(f, 0)->set_body("nope");
       },
       {"t.S.A", "body \"nope\" names no field of t.Req"}},
      {"missing response_body field",
       [](FileDescriptorProto* f) {
         RuleOf(f, 0)->set_get("/items");
         RuleOf(f, 0)->set_response_body("nope");
       },
       {"t.S.A", "response_body \"nope\""}},
      {"unknown path variable",
       [](FileDescriptorProto* f) { RuleOf(f, 2)->set_get("/items/{nope}"); },
       {"t.S.C", "/items/{nope}", "has no field \"nope\""}},
      {"message path variable",
       [](FileDescriptorProto* f) { RuleOf(f, 0)->set_get("/items/{inner}"); },
       {"t.S.A", "is a message, not a scalar"}},
      {"repeated path variable",
       [](FileDescriptorProto* f) { RuleOf(f, 0)->set_get("/items/{tags}"); },
       {"t.S.A", "is repeated"}},
      {"path through a scalar",
       [](FileDescriptorProto* f) { RuleOf(f, 0)->set_get("/items/{id.x}"); },
       {"t.S.A", "is not a message"}},
      {"no pattern",
       [](FileDescriptorProto* f) { RuleOf(f, 3)->set_body("*"); },
       {"t.S.D", "no method and path"}},
      {"nested additional bindings",
       [](FileDescriptorProto* f) {
         RuleOf(f, 0)->set_get("/a");
         auto* extra = RuleOf(f, 0)->add_additional_bindings();
         extra->set_get("/b");
         extra->add_additional_bindings()->set_get("/c");
       },
       {"t.S.A", "cannot nest"}},
  };
  for (const BuildErrorCase& c : cases) {
    FileDescriptorProto file = TestFile();
    c.edit(&file);
    std::unique_ptr<DescriptorPool> pool;
    auto table = BuildFrom(file, &pool);
    ASSERT_FALSE(table.ok()) << c.name;
    EXPECT_EQ(ErrorReason(table.status()), "INVALID_CONFIG") << c.name;
    for (const std::string& part : c.expected) {
      EXPECT_THAT(std::string(table.status().message()), HasSubstr(part))
          << c.name;
    }
  }
}

TEST(RouteTableBuildTest, ReadsRulesKeptAsUnknownFields) {
  google::api::HttpRule rule;
  rule.set_post("/x/{id}:go");
  rule.set_body("*");
  google::protobuf::MethodOptions options;
  options.mutable_unknown_fields()->AddLengthDelimited(
      google::api::kHttpFieldNumber, rule.SerializeAsString());
  ASSERT_FALSE(options.HasExtension(google::api::http));
  google::api::HttpRule read;
  ASSERT_TRUE(HttpRuleFromOptions(options, &read));
  EXPECT_EQ(read.post(), "/x/{id}:go");
  EXPECT_EQ(read.body(), "*");

  google::protobuf::MethodOptions none;
  EXPECT_FALSE(HttpRuleFromOptions(none, &read));
}

TEST(LoadDescriptorSetTest, RejectsGarbageAndMissingImports) {
  auto garbage = LoadDescriptorSet("\xff\xff\xff garbage");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(ErrorReason(garbage.status()), "INVALID_CONFIG");
  EXPECT_THAT(std::string(garbage.status().message()),
              HasSubstr("not a serialized google.protobuf.FileDescriptorSet"));

  auto empty = LoadDescriptorSet("");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr("no files"));

  FileDescriptorSet set;
  FileDescriptorProto file = TestFile();
  file.add_dependency("missing/dep.proto");
  *set.add_file() = file;
  auto missing = LoadDescriptorSet(set.SerializeAsString());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("\"t/test.proto\" imports \"missing/dep.proto\""));

  FileDescriptorSet broken;
  FileDescriptorProto bad = TestFile();
  bad.mutable_message_type(1)->mutable_field(1)->set_type_name(".t.Nope");
  *broken.add_file() = bad;
  auto unbuildable = LoadDescriptorSet(broken.SerializeAsString());
  ASSERT_FALSE(unbuildable.ok());
  EXPECT_THAT(std::string(unbuildable.status().message()),
              HasSubstr("does not build"));
}

TEST(LoadDescriptorSetTest, AcceptsFilesInAnyOrder) {
  FileDescriptorProto base;
  base.set_name("b/base.proto");
  base.set_package("b");
  base.set_syntax("proto3");
  base.add_message_type()->set_name("Base");
  FileDescriptorProto user = TestFile();
  user.add_dependency("b/base.proto");
  FileDescriptorSet set;
  *set.add_file() = user;  // before its import
  *set.add_file() = base;
  auto pool = LoadDescriptorSet(set.SerializeAsString());
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_NE((*pool)->FindMessageTypeByName("b.Base"), nullptr);
  EXPECT_NE((*pool)->FindMessageTypeByName("t.Req"), nullptr);
}

TEST(LoadDescriptorSetTest, BuildNeedsAPoolFromLoadDescriptorSet) {
  DescriptorPool pool;
  auto table = RouteTable::Build(pool);
  ASSERT_FALSE(table.ok());
  EXPECT_THAT(std::string(table.status().message()),
              HasSubstr("not made by LoadDescriptorSet"));
}

}  // namespace
}  // namespace inspector::gateway
