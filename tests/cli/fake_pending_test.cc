// Runs the inspectorctl binary against an in-process fake of inspectord's
// ClientRequestsService (with the ConfigService.ListServers that names
// servers and the EventsService.Watch that `pending --follow` reads) on
// 127.0.0.1:0, to check what `pending`, `respond` and `roots` send, print
// and exit with. The fake holds two pending requests: an elicitation form
// and a sampling request.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/exit_codes.h"
#include "common/errors.h"
#include "google/protobuf/util/json_util.h"
#include "inspector/v1/client_requests.grpc.pb.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "tests/cli/fake_daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector::cli {
namespace fake_pending_test {

using fakes::CheckToken;
using fakes::Child;
using fakes::kEverythingId;
using fakes::kToken;
using fakes::Lines;
using fakes::StartServer;

using ::inspector::testing::ProcessResult;
using ::inspector::testing::RunProcess;
using ::inspector::testing::WaitUntil;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kFormId[] = "a1b2c3d4-0000-4000-8000-000000000001";
constexpr char kSamplingId[] = "5e6f7a8b-0000-4000-8000-000000000002";
// Listed, but the fake says it was answered already.
constexpr char kAnsweredId[] = "0ddba11a-0000-4000-8000-000000000003";

google::protobuf::Struct ToStruct(const json& value) {
  google::protobuf::Struct out;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(value.dump(), &out).ok());
  return out;
}

json ToJson(const google::protobuf::Message& message) {
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &text).ok());
  return json::parse(text);
}

double NowMs() { return static_cast<double>(absl::ToUnixMillis(absl::Now())); }

v1::PendingRequest FormItem() {
  v1::PendingRequest item;
  item.set_id(kFormId);
  item.set_server_id(kEverythingId);
  item.set_kind(v1::ELICITATION);
  item.set_method("elicitation/create");
  *item.mutable_params() =
      ToStruct({{"message", "Please provide your name"},
                {"requestedSchema",
                 {{"type", "object"},
                  {"properties",
                   {{"name", {{"type", "string"}, {"minLength", 2}}},
                    {"age", {{"type", "integer"}, {"default", 30}}},
                    {"color",
                     {{"type", "string"},
                      {"oneOf",
                       {{{"const", "#f00"}, {"title", "Red"}},
                        {{"const", "#00f"}, {"title", "Blue"}}}}}}}},
                  {"required", {"name"}}}}});
  item.set_received_at(NowMs() - 65000);
  item.set_deadline(NowMs() + 600000);
  item.set_status(v1::PENDING);
  return item;
}

v1::PendingRequest SamplingItem() {
  v1::PendingRequest item;
  item.set_id(kSamplingId);
  item.set_server_id(kEverythingId);
  item.set_kind(v1::SAMPLING);
  item.set_method("sampling/createMessage");
  *item.mutable_params() = ToStruct(
      {{"messages",
        {{{"role", "user"},
          {"content", {{"type", "text"}, {"text", "Capital of France?"}}}}}},
       {"maxTokens", 20}});
  item.set_received_at(NowMs() - 5000);
  item.set_deadline(NowMs() + 600000);
  item.set_status(v1::PENDING);
  return item;
}

class FakeClientRequests final : public v1::ClientRequestsService::Service {
 public:
  FakeClientRequests() {
    items_ = {FormItem(), SamplingItem()};
    v1::PendingRequest answered = FormItem();
    answered.set_id(kAnsweredId);
    items_.push_back(answered);
  }

  grpc::Status ListPending(grpc::ServerContext* context,
                           const v1::ListPendingRequest* request,
                           v1::ListPendingResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    lists_.push_back(*request);
    for (const v1::PendingRequest& item : items_) {
      if (!request->server_id().empty() &&
          request->server_id() != item.server_id()) {
        continue;
      }
      if (request->kind() != v1::PENDING_KIND_UNSPECIFIED &&
          request->kind() != item.kind()) {
        continue;
      }
      *response->add_pending() = item;
    }
    return grpc::Status::OK;
  }

  grpc::Status Resolve(grpc::ServerContext* context,
                       const v1::ResolveRequest* request,
                       v1::PendingRequest* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    resolves_.push_back(*request);
    return Answer(request->id(), v1::RESOLVED, response);
  }

  grpc::Status Reject(grpc::ServerContext* context,
                      const v1::RejectRequest* request,
                      v1::PendingRequest* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    rejects_.push_back(*request);
    return Answer(request->id(), v1::REJECTED, response);
  }

  grpc::Status GetRoots(grpc::ServerContext* context,
                        const v1::GetRootsRequest* request,
                        v1::Roots* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    if (request->server_id() != "everything") {
      return ToGrpcStatus(
          Error(v1::SERVER_NOT_FOUND,
                "server \"" + request->server_id() + "\" not found"));
    }
    absl::MutexLock lock(&mu_);
    *response = roots_;
    return grpc::Status::OK;
  }

  grpc::Status SetRoots(grpc::ServerContext* context,
                        const v1::SetRootsRequest* request,
                        v1::Roots* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    set_roots_.push_back(*request);
    roots_.set_server_id(kEverythingId);
    *roots_.mutable_roots() = request->roots();
    *response = roots_;
    return grpc::Status::OK;
  }

  void Clear() {
    absl::MutexLock lock(&mu_);
    items_.clear();
  }
  // The listed item at `index`, exactly as ListPending sends it.
  v1::PendingRequest item(size_t index) {
    absl::MutexLock lock(&mu_);
    return items_.at(index);
  }
  void AddRoot(const std::string& uri, const std::string& name) {
    absl::MutexLock lock(&mu_);
    v1::Root* root = roots_.add_roots();
    root->set_uri(uri);
    root->set_name(name);
  }
  std::vector<v1::ListPendingRequest> lists() {
    absl::MutexLock lock(&mu_);
    return lists_;
  }
  std::vector<v1::ResolveRequest> resolves() {
    absl::MutexLock lock(&mu_);
    return resolves_;
  }
  std::vector<v1::RejectRequest> rejects() {
    absl::MutexLock lock(&mu_);
    return rejects_;
  }
  std::vector<v1::SetRootsRequest> set_roots() {
    absl::MutexLock lock(&mu_);
    return set_roots_;
  }

 private:
  grpc::Status Answer(const std::string& id, v1::PendingStatus status,
                      v1::PendingRequest* response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (id == kAnsweredId) {
      return ToGrpcStatus(Error(v1::FAILED_PRECONDITION,
                                "pending request " + id + " was resolved"));
    }
    for (const v1::PendingRequest& item : items_) {
      if (item.id() == id) {
        *response = item;
        response->set_status(status);
        return grpc::Status::OK;
      }
    }
    return ToGrpcStatus(
        Error(v1::NOT_FOUND, "no pending request \"" + id + "\""));
  }

  absl::Mutex mu_;
  std::vector<v1::PendingRequest> items_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ListPendingRequest> lists_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ResolveRequest> resolves_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::RejectRequest> rejects_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::SetRootsRequest> set_roots_ ABSL_GUARDED_BY(mu_);
  v1::Roots roots_ ABSL_GUARDED_BY(mu_);
};

// Streams the events pushed by the test until the client cancels.
class FakeEvents final : public v1::EventsService::Service {
 public:
  grpc::Status Watch(grpc::ServerContext* context,
                     const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::Event>* writer) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    size_t next = 0;
    {
      absl::MutexLock lock(&mu_);
      watches_.push_back(*request);
    }
    while (true) {
      v1::Event event;
      {
        absl::MutexLock lock(&mu_);
        // Woken by Push; the timeout only bounds how late a cancellation
        // is noticed.
        while (next >= events_.size() && !context->IsCancelled()) {
          pushed_.WaitWithTimeout(&mu_, absl::Milliseconds(20));
        }
        if (context->IsCancelled()) {
          saw_cancel_ = true;
          return grpc::Status::CANCELLED;
        }
        event = events_[next++];
      }
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
    }
  }

  void Push(const v1::PendingRequest& item) {
    absl::MutexLock lock(&mu_);
    v1::Event event;
    event.set_sequence(events_.size() + 1);
    event.set_timestamp(NowMs());
    *event.mutable_pending() = item;
    events_.push_back(event);
    pushed_.SignalAll();
  }
  bool saw_cancel() {
    absl::MutexLock lock(&mu_);
    return saw_cancel_;
  }
  std::vector<v1::WatchRequest> watches() {
    absl::MutexLock lock(&mu_);
    return watches_;
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::WatchRequest> watches_ ABSL_GUARDED_BY(mu_);
  absl::CondVar pushed_;
  bool saw_cancel_ ABSL_GUARDED_BY(mu_) = false;
};

class FakePendingTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&config_, &requests_, &events_}); }

  // The only Resolve sent; fails the test if there was not exactly one.
  v1::ResolveRequest OnlyResolve() {
    std::vector<v1::ResolveRequest> sent = requests_.resolves();
    EXPECT_EQ(sent.size(), 1u);
    return sent.empty() ? v1::ResolveRequest() : sent.back();
  }

  v1::RejectRequest OnlyReject() {
    std::vector<v1::RejectRequest> sent = requests_.rejects();
    EXPECT_EQ(sent.size(), 1u);
    return sent.empty() ? v1::RejectRequest() : sent.back();
  }

  fakes::EverythingConfig config_;
  FakeClientRequests requests_;
  FakeEvents events_;
};

// ---- pending ----------------------------------------------------------------

TEST_F(FakePendingTest, PendingTable) {
  ProcessResult result = Run({"pending"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  std::vector<std::string> lines = Lines(result.out);
  ASSERT_EQ(lines.size(), 4u) << result.out;
  EXPECT_THAT(lines[0], StartsWith("ID\tSERVER\tKIND\tMETHOD\tAGE"));
  EXPECT_THAT(lines[0], HasSubstr("TIME LEFT"));
  EXPECT_THAT(lines[1], StartsWith("a1b2c3d4\teverything\telicitation\t"
                                   "elicitation/create\t1m"));
  EXPECT_THAT(lines[1], HasSubstr("Please provide your name"));
  EXPECT_THAT(lines[1], HasSubstr("10m"));
  EXPECT_THAT(lines[2], StartsWith("5e6f7a8b\teverything\tsampling\t"
                                   "sampling/createMessage"));
  EXPECT_THAT(lines[2], HasSubstr("Capital of France?"));
  ASSERT_EQ(requests_.lists().size(), 1u);
  EXPECT_EQ(requests_.lists()[0].server_id(), "");
  EXPECT_EQ(requests_.lists()[0].kind(), v1::PENDING_KIND_UNSPECIFIED);
}

TEST_F(FakePendingTest, PendingFiltersByServerNameAndKind) {
  ProcessResult result =
      Run({"pending", "--server", "everything", "--kind", "sampling"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(Lines(result.out).size(), 2u) << result.out;
  ASSERT_EQ(requests_.lists().size(), 1u);
  // The name is sent as the server's id.
  EXPECT_EQ(requests_.lists()[0].server_id(), kEverythingId);
  EXPECT_EQ(requests_.lists()[0].kind(), v1::SAMPLING);

  result = Run({"pending", "--kind", "prompts"});
  EXPECT_EQ(result.exit_code, kExitUsage);
}

TEST_F(FakePendingTest, PendingJson) {
  ProcessResult result = Run({"pending", "-o", "json"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  json parsed = json::parse(result.out);
  ASSERT_EQ(parsed["pending"].size(), 3u);
  EXPECT_EQ(parsed["pending"][0]["id"], kFormId);
  EXPECT_EQ(parsed["pending"][0]["kind"], "ELICITATION");
  EXPECT_EQ(parsed["pending"][0]["params"]["message"],
            "Please provide your name");
}

TEST_F(FakePendingTest, NothingPending) {
  requests_.Clear();
  ProcessResult result = Run({"pending", "--kind", "elicitation"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "no pending elicitation requests\n");
}

TEST_F(FakePendingTest, FollowPrintsCurrentThenChangesUntilCtrlC) {
  Child child({"pending", "--follow"}, Environment());
  std::string out = child.ReadLines(3);
  ASSERT_EQ(Lines(out).size(), 3u) << out;
  EXPECT_THAT(out, HasSubstr("  pending   a1b2c3d4  everything  elicitation  "
                             "elicitation/create  "));
  // The same item again is not printed twice; a new one and a change are.
  events_.Push(requests_.item(0));
  v1::PendingRequest fresh = SamplingItem();
  fresh.set_id("9c9c9c9c-0000-4000-8000-000000000009");
  events_.Push(fresh);
  v1::PendingRequest resolved = requests_.item(0);
  resolved.set_status(v1::RESOLVED);
  events_.Push(resolved);
  out = child.ReadLines(5);
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 5u) << out;
  EXPECT_THAT(lines[3],
              HasSubstr("  pending   9c9c9c9c  everything  sampling"));
  EXPECT_THAT(lines[4], HasSubstr("  resolved  a1b2c3d4  everything"));
  ASSERT_EQ(events_.watches().size(), 1u);
  EXPECT_THAT(events_.watches()[0].kinds(),
              ::testing::ElementsAre(v1::EVENT_KIND_PENDING));

  ASSERT_EQ(kill(child.pid(), SIGINT), 0);
  EXPECT_EQ(child.Wait(), kExitInterrupted);
  EXPECT_TRUE(WaitUntil([&] { return events_.saw_cancel(); }, absl::Seconds(10),
                        "the daemon sees the cancel"));
}

TEST_F(FakePendingTest, FollowJsonIsNdjson) {
  Child child({"pending", "-f", "-o", "json", "--kind", "elicitation"},
              Environment());
  std::string out = child.ReadLines(2);
  ASSERT_EQ(Lines(out).size(), 2u) << out;
  // A sampling event is filtered out by --kind; the elicitation passes.
  v1::PendingRequest sampling = SamplingItem();
  sampling.set_id("77777777");
  events_.Push(sampling);
  v1::PendingRequest fresh = FormItem();
  fresh.set_id("88888888");
  events_.Push(fresh);
  out = child.ReadLines(3);
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(json::parse(lines[0])["id"], kFormId);
  EXPECT_EQ(json::parse(lines[2])["id"], "88888888");
  EXPECT_EQ(json::parse(lines[2])["status"], "PENDING");
  ASSERT_EQ(kill(child.pid(), SIGINT), 0);
  EXPECT_EQ(child.Wait(), kExitInterrupted);
}

// ---- respond
// ------------------------------------------------------------------

TEST_F(FakePendingTest, RespondJsonResolvesWithTheCheckedResult) {
  ProcessResult result =
      Run({"respond", "a1b2", "--json", R"({"name": "Ada", "age": 41})"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "accepted a1b2c3d4 (elicitation/create from everything)\n");
  v1::ResolveRequest sent = OnlyResolve();
  EXPECT_EQ(sent.id(), kFormId);
  EXPECT_FALSE(sent.apply_defaults());
  EXPECT_EQ(ToJson(sent.result()),
            json({{"action", "accept"},
                  {"content", {{"name", "Ada"}, {"age", 41}}}}));
}

TEST_F(FakePendingTest, RespondJsonFromAFileOrStdin) {
  inspector::testing::WriteFile(
      dir_.File("answer.json"),
      R"({"role":"assistant","content":{"type":"text","text":"Paris"},)"
      R"("model":"m"})");
  ProcessResult result = Run({"respond", kSamplingId, "--json",
                              "@" + dir_.File("answer.json"), "-o", "json"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(json::parse(result.out)["status"], "RESOLVED");
  result = Run({"respond", "5e6f", "--json", "-"},
               R"({"role":"assistant","content":{"type":"text","text":"x"},)"
               R"("model":"m"})");
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  std::vector<v1::ResolveRequest> sent = requests_.resolves();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(ToJson(sent[0].result())["content"]["text"], "Paris");
  EXPECT_EQ(ToJson(sent[1].result())["content"]["text"], "x");
}

TEST_F(FakePendingTest, RespondAcceptDefaultsAndFields) {
  ProcessResult result =
      Run({"respond", "a1b2", "name=Ada", "color=Blue", "--accept-defaults"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  v1::ResolveRequest sent = OnlyResolve();
  EXPECT_TRUE(sent.apply_defaults());
  EXPECT_EQ(ToJson(sent.result())["content"],
            json({{"name", "Ada"}, {"age", 30}, {"color", "#00f"}}));
}

TEST_F(FakePendingTest, RespondTypesKeyValueByTheSchema) {
  ProcessResult result =
      Run({"respond", kFormId, "name=42", "age=7", "color=1"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(ToJson(OnlyResolve().result())["content"],
            json({{"name", "42"}, {"age", 7}, {"color", "#f00"}}));
}

TEST_F(FakePendingTest, RespondDeclineCancelReject) {
  ProcessResult result = Run({"respond", "a1b2", "--decline"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "declined a1b2c3d4 (elicitation/create from everything)\n");
  EXPECT_EQ(OnlyReject().action(), v1::REJECT_ACTION_DECLINE);

  result = Run({"respond", "5e6f", "--reject", "not now"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  std::vector<v1::RejectRequest> sent = requests_.rejects();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].id(), kSamplingId);
  EXPECT_EQ(sent[1].action(), v1::REJECT_ACTION_ERROR);
  EXPECT_EQ(sent[1].reason(), "not now");
  EXPECT_THAT(result.out, HasSubstr("rejected with an error: not now"));

  // --cancel does not fit a sampling request: nothing is sent.
  result = Run({"respond", "5e6f", "--cancel"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_EQ(requests_.rejects().size(), 2u);
}

TEST_F(FakePendingTest, RespondTextForSampling) {
  ProcessResult result = Run({"respond", "5e6f", "--text", "Paris"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(ToJson(OnlyResolve().result()),
            json({{"role", "assistant"},
                  {"content", {{"type", "text"}, {"text", "Paris"}}},
                  {"model", "inspectorctl"},
                  {"stopReason", "endTurn"}}));
}

TEST_F(FakePendingTest, BadAnswersNeverLeaveTheMachine) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"respond", "a1b2", "name=A"},
           {"respond", "a1b2", "age=old", "name=Ada"},
           {"respond", "a1b2", "name=Ada", "color=Green"},
           {"respond", "a1b2", "nickname=x", "name=Ada"},
           {"respond", "a1b2", "--json", R"({"action":"accept"})"},
           {"respond", "5e6f", "--json", R"({"role":"assistant"})"}}) {
    ProcessResult result = Run(args);
    EXPECT_EQ(result.exit_code, kExitInvalidInput) << args.back() << "\n"
                                                   << result.err;
    EXPECT_THAT(result.err, HasSubstr("hint: checked before sending: nothing "
                                      "was sent"));
  }
  ProcessResult result = Run({"respond", "a1b2", "age=old", "name=Ada"});
  EXPECT_THAT(result.err, HasSubstr("error: field \"age\""));
  EXPECT_TRUE(requests_.resolves().empty());
}

TEST_F(FakePendingTest, ErrorsAndExitCodes) {
  // Unknown id: the daemon says so.
  ProcessResult result = Run({"respond", "ffffffff", "--decline"});
  EXPECT_EQ(result.exit_code, kExitNotFound) << result.err;
  EXPECT_THAT(result.err, HasSubstr("no pending request"));
  // Answered already.
  result = Run({"respond", "0ddb", "name=Ada"});
  EXPECT_EQ(result.exit_code, kExitConflict) << result.err;
  // No answer and stdin is not a terminal.
  result = Run({"respond", "a1b2"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
  EXPECT_THAT(result.err, HasSubstr("stdin is not a terminal"));
  // Two answers at once.
  result = Run({"respond", "a1b2", "--decline", "--text", "x"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
  // An empty id.
  result = Run({"respond", "", "--decline"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
  // Interactive on an unknown id.
  result = Run({"respond", "ffffffff", "--interactive"});
  EXPECT_EQ(result.exit_code, kExitNotFound) << result.err;
  // Only the answer to the answered request reached the daemon.
  ASSERT_EQ(requests_.resolves().size(), 1u);
  EXPECT_EQ(requests_.resolves()[0].id(), kAnsweredId);
}

TEST_F(FakePendingTest, InteractiveFormFromStdin) {
  // Start, name, age (Enter keeps 30), color by label, send.
  ProcessResult result =
      Run({"respond", "a1b2", "--interactive"}, "\nAda\n\nblue\ny\n");
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.err, HasSubstr("everything asks for input "
                                    "(elicitation/create, id " +
                                    std::string(kFormId) + "):"));
  EXPECT_THAT(result.err, HasSubstr("age [30]: "));
  EXPECT_EQ(
      ToJson(OnlyResolve().result()),
      json({{"action", "accept"},
            {"content", {{"name", "Ada"}, {"age", 30}, {"color", "#00f"}}}}));
  // Declining in the form is a Reject.
  result = Run({"respond", "a1b2", "-i"}, "d\n");
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(OnlyReject().action(), v1::REJECT_ACTION_DECLINE);
  // Input that ends early sends nothing.
  result = Run({"respond", "a1b2", "-i"}, "\nAda\n");
  EXPECT_EQ(result.exit_code, kExitOther) << result.err;
  EXPECT_EQ(requests_.resolves().size(), 1u);
}

TEST_F(FakePendingTest, NotImplementedExits8) {
  // An inspectord without ClientRequestsService answers UNIMPLEMENTED.
  fakes::EverythingConfig config;
  std::string address;
  std::unique_ptr<grpc::Server> server = StartServer({&config}, &address);
  ASSERT_NE(server, nullptr);
  std::map<std::string, std::string> env = Environment();
  env["INSPECTOR_ADDR"] = address;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"pending"},
                                             {"respond", "x", "--decline"},
                                             {"roots", "everything"}}) {
    std::vector<std::string> argv = {INSPECTORCTL_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv, env);
    EXPECT_EQ(result.exit_code, kExitNotImplemented)
        << args[0] << ": " << result.err;
  }
  server->Shutdown();
}

// ---- roots
// --------------------------------------------------------------------

TEST_F(FakePendingTest, RootsShowSetAddRmClear) {
  ProcessResult result = Run({"roots", "everything"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "everything has no roots\n");

  result = Run({"roots", "everything", "set", "file:///srv/app=App",
                dir_.path() + "/data dir"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  ASSERT_EQ(requests_.set_roots().size(), 1u);
  const v1::SetRootsRequest set = requests_.set_roots()[0];
  EXPECT_EQ(set.server_id(), "everything");
  ASSERT_EQ(set.roots_size(), 2);
  EXPECT_EQ(set.roots(0).uri(), "file:///srv/app");
  EXPECT_EQ(set.roots(0).name(), "App");
  EXPECT_EQ(set.roots(1).uri(), "file://" + dir_.path() + "/data%20dir");
  EXPECT_THAT(result.out, StartsWith("URI"));
  EXPECT_THAT(result.out, HasSubstr("file:///srv/app"));

  result = Run(
      {"roots", "everything", "add", "file:///srv/app=Renamed", "file:///b"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  const v1::SetRootsRequest added = requests_.set_roots().back();
  ASSERT_EQ(added.roots_size(), 3);
  EXPECT_EQ(added.roots(0).name(), "Renamed");
  EXPECT_EQ(added.roots(2).uri(), "file:///b");

  result = Run({"roots", "everything", "rm", "file:///nope"});
  EXPECT_EQ(result.exit_code, kExitNotFound) << result.err;
  result = Run({"roots", "everything", "rm", "file:///b", "-o", "json"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(json::parse(result.out)["roots"].size(), 2u);

  result = Run({"roots", "everything", "clear"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(requests_.set_roots().back().roots_size(), 0);
  EXPECT_EQ(requests_.set_roots().size(), 4u);

  result = Run({"roots", "everything", "set"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  result = Run({"roots", "everything", "wipe"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  result = Run({"roots", "everything", "set", "https://example.com"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  result = Run({"roots", "nowhere"});
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_EQ(requests_.set_roots().size(), 4u);
}

}  // namespace fake_pending_test
}  // namespace inspector::cli
