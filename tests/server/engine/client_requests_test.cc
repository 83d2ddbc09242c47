// The engine as each server's MCP client, over a fake transport and a real
// (in-memory) configuration store: capabilities from the configuration,
// sampling and elicitation as pending items answered upstream with the
// server's own id, roots answered from the configuration and announced
// when they change, and items ending with their session.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/field_mask.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/config/config_manager.h"
#include "server/engine/engine.h"
#include "storage/database.h"
#include "storage/server_store.h"
#include "tests/server/engine/engine_fixture.h"
#include "tests/server/engine/fake_transport.h"

namespace inspector::engine {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::Answer;
using testing::FakeWire;

class ClientRequestsTest : public testing::EngineFixture {
 protected:
  void SetUp() override { StartEngine(EngineOptions()); }

  // Sends a tools/call through the engine and plays the server's handshake
  // on the first connection; returns the call as the server received it.
  json StartCall(Answer* answer, json* initialize = nullptr) {
    engine_->Forward("fake",
                     R"({"jsonrpc":"2.0","id":"caller-1","method":"tools/call","params":{"name":"ask"}})",
                     {}, answer->Callback());
    auto wire = Wire(0);
    Handshake(*wire, initialize);
    return json::parse(wire->NextSent());
  }

  // Waits for a pending event with `status`.
  std::optional<v1::PendingRequest> NextPendingEvent(v1::PendingStatus status) {
    auto event = NextEvent([status](const v1::Event& event) {
      return event.has_pending() && event.pending().status() == status;
    });
    if (!event) return std::nullopt;
    return event->pending();
  }

  // Outlives the engine, which fails calls still in flight when it goes.
  Answer answer_;
};

TEST_F(ClientRequestsTest, EveryClientFeatureIsDeclaredByDefault) {
  AddFakeServer();
  json init;
  StartCall(&answer_, &init);
  EXPECT_EQ(init["params"]["capabilities"],
            json::parse(R"({"sampling": {},
                            "elicitation": {"form": {}, "url": {}},
                            "roots": {"listChanged": true}})"));
}

TEST_F(ClientRequestsTest, TheConfigurationChoosesTheDeclaredFeatures) {
  v1::ServerConfig config;
  config.mutable_client_capabilities()->set_sampling(false);
  config.mutable_client_capabilities()->set_elicitation_url(false);
  AddFakeServer(config);
  json init;
  StartCall(&answer_, &init);
  EXPECT_EQ(init["params"]["capabilities"],
            json::parse(R"({"elicitation": {"form": {}},
                            "roots": {"listChanged": true}})"));
  // Sampling was not declared, so the server's request is refused at once.
  auto wire = Wire(0);
  wire->Deliver(R"({"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{}})");
  EXPECT_EQ(json::parse(wire->NextSent())["error"]["code"], -32601);
  EXPECT_TRUE(engine_->ListPending("", v1::PENDING_KIND_UNSPECIFIED)->empty());
}

TEST_F(ClientRequestsTest, AnElicitationWaitsAndItsAnswerGoesUpstreamOnce) {
  std::string server_id = AddFakeServer();
  json call = StartCall(&answer_);
  auto wire = Wire(0);
  wire->Deliver(R"({"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","default":30}},"required":["name"]}}})");
  auto event = NextPendingEvent(v1::PENDING);
  ASSERT_TRUE(event.has_value());

  auto listed = engine_->ListPending("fake", v1::ELICITATION);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  const v1::PendingRequest& item = (*listed)[0];
  EXPECT_EQ(item.id(), event->id());
  EXPECT_EQ(item.server_id(), server_id);
  EXPECT_EQ(item.method(), "elicitation/create");
  EXPECT_EQ(item.params().fields().at("message").string_value(), "Name?");
  EXPECT_TRUE(engine_->ListPending(server_id, v1::SAMPLING)->empty());
  EXPECT_EQ(ErrorReason(engine_->ListPending("nobody", v1::SAMPLING).status()),
            "SERVER_NOT_FOUND");

  // Content that breaks the schema is refused and nothing is sent.
  auto refused = engine_->ResolvePending(
      item.id(), {{"action", "accept"}, {"content", {{"age", 3}}}}, true);
  EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST");

  auto resolved = engine_->ResolvePending(
      item.id(), {{"action", "accept"}, {"content", {{"name", "Ada"}}}}, true);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->status(), v1::RESOLVED);
  std::string sent = wire->NextSent();
  EXPECT_THAT(sent, HasSubstr(R"("id":"srv-1")"));
  json response = json::parse(sent);
  EXPECT_EQ(response["result"]["content"], json({{"name", "Ada"}, {"age", 30}}));

  auto twice = engine_->RejectPending(item.id(), "", v1::REJECT_ACTION_DECLINE);
  EXPECT_EQ(ErrorReason(twice.status()), "FAILED_PRECONDITION");

  // The server finishes the tool call with what it was told.
  wire->Reply(call, {{"content", json::array()}});
  ASSERT_TRUE(answer_.Wait());
  ASSERT_TRUE(answer_.value.ok()) << answer_.value.status();
  EXPECT_EQ(json::parse(*answer_.value)["id"], "caller-1");
  absl::MutexLock lock(&wire->mu);
  EXPECT_TRUE(wire->sent.empty());  // nothing else went upstream
}

TEST_F(ClientRequestsTest, ACrashEndsThePendingItemsOfItsSession) {
  AddFakeServer();
  StartCall(&answer_);
  auto wire = Wire(0);
  wire->Deliver(R"({"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}})");
  auto item = NextPendingEvent(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  wire->Close(Error(v1::PROCESS_CRASHED, "exited with code 3"));
  auto expired = NextPendingEvent(v1::EXPIRED);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->id(), item->id());
  EXPECT_TRUE(engine_->ListPending("", v1::PENDING_KIND_UNSPECIFIED)->empty());
  auto late = engine_->ResolvePending(item->id(), json::object(), false);
  EXPECT_EQ(ErrorReason(late.status()), "NOT_FOUND");
  EXPECT_THAT(late.status().message(), HasSubstr("session ended"));
  ASSERT_TRUE(answer_.Wait());
  EXPECT_EQ(ErrorReason(answer_.value.status()), "PROCESS_CRASHED");
}

TEST_F(ClientRequestsTest, RootsAreAnsweredFromTheConfigurationAndChangesAnnounced) {
  v1::ServerConfig config;
  v1::Root* root = config.add_roots();
  root->set_uri("file:///work/project");
  root->set_name("Project");
  std::string server_id = AddFakeServer(config);
  json call = StartCall(&answer_);
  auto wire = Wire(0);

  wire->Deliver(R"({"jsonrpc":"2.0","id":"r1","method":"roots/list"})");
  json listed = json::parse(wire->NextSent());
  EXPECT_EQ(listed["id"], "r1");
  EXPECT_EQ(listed["result"]["roots"],
            json::parse(R"([{"uri": "file:///work/project", "name": "Project"}])"));
  // Shown to watchers as already answered, never listed as pending.
  auto shown = NextPendingEvent(v1::RESOLVED);
  ASSERT_TRUE(shown.has_value());
  EXPECT_EQ(shown->kind(), v1::ROOTS);
  EXPECT_TRUE(engine_->ListPending("", v1::ROOTS)->empty());

  v1::Root changed;
  changed.set_uri("file:///work/other");
  auto set = engine_->SetRoots("fake", {changed});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->server_id(), server_id);
  ASSERT_EQ(set->roots_size(), 1);
  // The live session is told, not restarted.
  EXPECT_EQ(json::parse(wire->NextSent())["method"],
            "notifications/roots/list_changed");
  wire->Deliver(R"({"jsonrpc":"2.0","id":"r2","method":"roots/list"})");
  listed = json::parse(wire->NextSent());
  EXPECT_EQ(listed["result"]["roots"],
            json::parse(R"([{"uri": "file:///work/other"}])"));
  EXPECT_EQ(wire_count(), 1u);
  EXPECT_EQ(engine_->GetRoots(server_id)->roots(0).uri(), "file:///work/other");

  // Not a file:// URI: refused, nothing changes, nothing is announced.
  v1::Root bad;
  bad.set_uri("https://example.com/");
  auto refused = engine_->SetRoots("fake", {bad});
  EXPECT_EQ(ErrorReason(refused.status()), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(refused.status())["field"], "roots[0].uri");
  EXPECT_EQ(engine_->GetRoots("fake")->roots(0).uri(), "file:///work/other");

  // The call still completes on the same session.
  wire->Reply(call, {{"content", json::array()}});
  ASSERT_TRUE(answer_.Wait());
  EXPECT_TRUE(answer_.value.ok()) << answer_.value.status();
  absl::MutexLock lock(&wire->mu);
  EXPECT_TRUE(wire->sent.empty());
}

TEST_F(ClientRequestsTest, OtherConfigurationChangesStillReconnect) {
  AddFakeServer();
  StartCall(&answer_);
  v1::ServerConfig patch;
  patch.mutable_client_capabilities()->set_roots(false);
  google::protobuf::FieldMask mask;
  mask.add_paths("clientCapabilities.roots");
  ASSERT_TRUE(configs_->Update("fake", patch, mask).ok());
  ASSERT_TRUE(answer_.Wait());
  EXPECT_EQ(ErrorReason(answer_.value.status()), "CANCELLED");
}

}  // namespace
}  // namespace inspector::engine
