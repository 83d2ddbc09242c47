#include "storage/server_store.h"

#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/time_util.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::google::protobuf::util::TimeUtil;
using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::Pair;

v1::ServerConfig MinimalConfig(const std::string& id, const std::string& name) {
  v1::ServerConfig config;
  config.set_id(id);
  config.set_name(name);
  config.set_transport("stdio");
  config.set_command("echo");
  *config.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(1000);
  *config.mutable_updated_at() = TimeUtil::MillisecondsToTimestamp(2000);
  return config;
}

// Every field set, including nested and awkward values.
v1::ServerConfig FullConfig() {
  v1::ServerConfig config;
  config.set_id("3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f");
  config.set_name("everything \"quoted\" ünïcode");
  config.set_transport("streamableHttp");
  config.set_command("node");
  config.add_args("server.js");
  config.add_args("--flag=a b");
  config.add_args("");
  (*config.mutable_env())["API_KEY"] = "s3cr3t";
  (*config.mutable_env())["EMPTY"] = "";
  (*config.mutable_env())["MULTI"] = "line\nbreak";
  config.set_cwd("/srv/mcp");
  config.set_url("https://example.com/mcp?x=1");
  (*config.mutable_headers())["Authorization"] = "Bearer abc";
  (*config.mutable_headers())["X-Trace"] = "1";
  config.set_connection_mode("direct");
  v1::Timeouts* timeouts = config.mutable_timeouts();
  timeouts->set_connection(1000);
  timeouts->set_request(2000);
  timeouts->set_max_total(3000);
  timeouts->set_ping_interval(4000);
  timeouts->set_idle(5000);
  timeouts->set_progress_resets_timeout(false);
  v1::OAuthConfig* oauth = config.mutable_oauth();
  oauth->set_client_id("client");
  oauth->set_client_secret("secret");
  oauth->set_authorization_url("https://auth.example.com/authorize");
  oauth->set_token_url("https://auth.example.com/token");
  oauth->add_scopes("read");
  oauth->add_scopes("write");
  oauth->set_redirect_uri("http://127.0.0.1:6274/oauth/callback");
  oauth->set_protocol_version("2025-06-18");
  oauth->set_registration_strategy("preregistered");
  config.set_max_retries(0);  // set, and zero: no retries
  config.add_retry_backoff(250);
  config.add_retry_backoff(8000);
  config.add_retryable_errors("ECONNREFUSED");
  config.add_retryable_errors("RATE_LIMITED");
  auto& extra = *config.mutable_extra()->mutable_fields();
  extra["disabled"].set_bool_value(true);
  extra["envFile"].set_string_value("${workspaceFolder}/.env");
  extra["weight"].set_number_value(0.1);
  extra["count"].set_number_value(42);
  extra["nothing"].set_null_value(google::protobuf::NULL_VALUE);
  auto& nested = *extra["nested"].mutable_struct_value()->mutable_fields();
  nested["list"].mutable_list_value()->add_values()->set_string_value("x");
  nested["list"].mutable_list_value()->add_values()->set_number_value(-1.5);
  nested["deeper"].mutable_struct_value();
  *config.mutable_created_at() =
      TimeUtil::MillisecondsToTimestamp(1717171717123);
  *config.mutable_updated_at() =
      TimeUtil::MillisecondsToTimestamp(1717171718456);
  return config;
}

void ExpectSameConfig(const v1::ServerConfig& actual,
                      const v1::ServerConfig& expected) {
  std::string differences;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&differences);
  EXPECT_TRUE(differencer.Compare(expected, actual)) << differences;
}

class ServerStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = Database::Open(dir_.File("servers.db"));
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(db).value();
    store_ = std::make_unique<ServerStore>(db_.get());
  }

  TempDir dir_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<ServerStore> store_;
};

TEST_F(ServerStoreTest, FullConfigRoundTripsExactly) {
  const v1::ServerConfig config = FullConfig();
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig inserted, store_->Insert(config));
  ExpectSameConfig(inserted, config);
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig got, store_->Get(config.id()));
  ExpectSameConfig(got, config);
  EXPECT_TRUE(got.timeouts().has_progress_resets_timeout());
  EXPECT_TRUE(got.has_max_retries());
  EXPECT_EQ(got.max_retries(), 0u);

  // And through a fresh connection, as another reader would see it.
  db_.reset();
  store_.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(dir_.File("servers.db")));
  ServerStore store(db.get());
  ASSERT_OK_AND_ASSIGN(got, store.Get(config.id()));
  ExpectSameConfig(got, config);
}

TEST_F(ServerStoreTest, ColumnsHoldReadableJson) {
  ASSERT_OK(store_->Insert(FullConfig()).status());
  ASSERT_OK_AND_ASSIGN(std::string args,
                       QueryText(*db_, "SELECT args_json FROM servers"));
  EXPECT_EQ(args, R"(["server.js","--flag=a b",""])");
  ASSERT_OK_AND_ASSIGN(std::string headers,
                       QueryText(*db_, "SELECT headers_json FROM servers"));
  EXPECT_EQ(headers, R"({"Authorization":"Bearer abc","X-Trace":"1"})");
  ASSERT_OK_AND_ASSIGN(
      int64_t max_total,
      QueryInt(
          *db_,
          "SELECT json_extract(timeouts_json, '$.maxTotal') FROM servers"));
  EXPECT_EQ(max_total, 3000);
  ASSERT_OK_AND_ASSIGN(
      std::string list_item,
      QueryText(*db_,
                "SELECT json_extract(extra_json, '$.nested.list[0]') "
                "FROM servers"));
  EXPECT_EQ(list_item, "x");
  ASSERT_OK_AND_ASSIGN(int64_t created,
                       QueryInt(*db_, "SELECT created_at FROM servers"));
  EXPECT_EQ(created, 1717171717123);
  ASSERT_OK_AND_ASSIGN(std::string retry,
                       QueryText(*db_, "SELECT retry_json FROM servers"));
  EXPECT_EQ(retry, R"({"maxRetries":0,"retryBackoff":[250,8000],)"
                   R"("retryableErrors":["ECONNREFUSED","RATE_LIMITED"]})");
}

TEST_F(ServerStoreTest, UnsetFieldsAreNullAndReadBackUnset) {
  v1::ServerConfig config;
  config.set_id("bare");
  config.set_name("bare");
  config.set_transport("sse");
  *config.mutable_created_at() = TimeUtil::MillisecondsToTimestamp(5);
  *config.mutable_updated_at() = TimeUtil::MillisecondsToTimestamp(6);
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig got, store_->Insert(config));
  ExpectSameConfig(got, config);
  EXPECT_FALSE(got.has_command());
  EXPECT_FALSE(got.has_cwd());
  EXPECT_FALSE(got.has_url());
  EXPECT_FALSE(got.has_connection_mode());
  EXPECT_FALSE(got.has_timeouts());
  EXPECT_FALSE(got.has_oauth());
  EXPECT_FALSE(got.has_extra());
  ASSERT_OK_AND_ASSIGN(
      int64_t nulls,
      QueryInt(*db_,
               "SELECT (command IS NULL) + (cwd IS NULL) + (url IS NULL) + "
               "(connection_mode IS NULL) + (timeouts_json IS NULL) + "
               "(oauth_json IS NULL) + (extra_json IS NULL) + "
               "(retry_json IS NULL) FROM servers"));
  EXPECT_EQ(nulls, 8);
  EXPECT_FALSE(got.has_max_retries());
  ASSERT_OK_AND_ASSIGN(std::string empties,
                       QueryText(*db_,
                                 "SELECT args_json || env_json || headers_json "
                                 "FROM servers"));
  EXPECT_EQ(empties, "[]{}{}");

  // Set-but-empty values stay set, and an empty string is not NULL.
  config.set_id("empty");
  config.set_name("empty");
  config.set_command("");
  config.mutable_timeouts();
  config.mutable_extra();
  ASSERT_OK_AND_ASSIGN(got, store_->Insert(config));
  ExpectSameConfig(got, config);
  EXPECT_TRUE(got.has_command());
  EXPECT_TRUE(got.has_timeouts());
  EXPECT_TRUE(got.has_extra());
}

TEST_F(ServerStoreTest, GetsByIdOrName) {
  ASSERT_OK(store_->Insert(MinimalConfig("id-1", "alpha")).status());
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig by_id, store_->Get("id-1"));
  EXPECT_EQ(by_id.name(), "alpha");
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig by_name, store_->Get("alpha"));
  EXPECT_EQ(by_name.id(), "id-1");
  // Names are case-sensitive.
  EXPECT_EQ(ErrorReason(store_->Get("ALPHA").status()), "SERVER_NOT_FOUND");

  // An id wins over another server's identical name.
  ASSERT_OK(store_->Insert(MinimalConfig("id-2", "id-1")).status());
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig ambiguous, store_->Get("id-1"));
  EXPECT_EQ(ambiguous.name(), "alpha");
}

TEST_F(ServerStoreTest, GetMissingIsServerNotFound) {
  absl::Status status = store_->Get("nope").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ErrorReason(status), "SERVER_NOT_FOUND");
  EXPECT_EQ(status.message(), "No server configuration found with ID 'nope'");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("serverId", "nope")));
}

TEST_F(ServerStoreTest, ListsOrderedByName) {
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> empty, store_->List());
  EXPECT_TRUE(empty.empty());
  ASSERT_OK(store_->Insert(MinimalConfig("1", "charlie")).status());
  ASSERT_OK(store_->Insert(MinimalConfig("2", "alpha")).status());
  ASSERT_OK(store_->Insert(MinimalConfig("3", "bravo")).status());
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  std::vector<std::string> names;
  for (const v1::ServerConfig& config : all) names.push_back(config.name());
  EXPECT_THAT(names, ElementsAre("alpha", "bravo", "charlie"));
}

TEST_F(ServerStoreTest, DuplicateNameIsAlreadyExists) {
  ASSERT_OK(store_->Insert(MinimalConfig("1", "same")).status());
  absl::Status status = store_->Insert(MinimalConfig("2", "same")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrorReason(status), "ALREADY_EXISTS");
  EXPECT_EQ(status.message(), "a server named 'same' already exists");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("serverName", "same")));

  absl::Status same_id = store_->Insert(MinimalConfig("1", "other")).status();
  EXPECT_EQ(ErrorReason(same_id), "ALREADY_EXISTS");
  EXPECT_THAT(GetErrorDetails(same_id), ElementsAre(Pair("serverId", "1")));
}

TEST_F(ServerStoreTest, RejectsIncompleteConfigs) {
  v1::ServerConfig config = MinimalConfig("1", "x");
  config.clear_name();
  absl::Status status = store_->Insert(config).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("field", "name")));

  config = MinimalConfig("1", "x");
  config.set_transport("carrier-pigeon");
  status = store_->Insert(config).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("field", "transport")));

  config = MinimalConfig("", "x");
  EXPECT_EQ(ErrorReason(store_->Insert(config).status()), "INVALID_CONFIG");

  config = MinimalConfig("1", "x");
  config.add_args(std::string("\xff\xfe", 2));
  status = store_->Insert(config).status();
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("field", "args")));

  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  EXPECT_TRUE(all.empty());
}

TEST_F(ServerStoreTest, UpdateReplacesTheWholeRow) {
  ASSERT_OK(store_->Insert(FullConfig()).status());
  v1::ServerConfig replacement = MinimalConfig(FullConfig().id(), "renamed");
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig updated, store_->Update(replacement));
  ExpectSameConfig(updated, replacement);
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig got, store_->Get("renamed"));
  ExpectSameConfig(got, replacement);
  EXPECT_FALSE(got.has_url());
  EXPECT_TRUE(got.env().empty());
  EXPECT_EQ(ErrorReason(store_->Get(FullConfig().name()).status()),
            "SERVER_NOT_FOUND");
}

TEST_F(ServerStoreTest, UpdateErrors) {
  ASSERT_OK(store_->Insert(MinimalConfig("1", "one")).status());
  ASSERT_OK(store_->Insert(MinimalConfig("2", "two")).status());

  absl::Status missing = store_->Update(MinimalConfig("3", "three")).status();
  EXPECT_EQ(ErrorReason(missing), "SERVER_NOT_FOUND");
  EXPECT_THAT(GetErrorDetails(missing), ElementsAre(Pair("serverId", "3")));

  absl::Status taken = store_->Update(MinimalConfig("2", "one")).status();
  EXPECT_EQ(ErrorReason(taken), "ALREADY_EXISTS");
  EXPECT_THAT(GetErrorDetails(taken), ElementsAre(Pair("serverName", "one")));
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig unchanged, store_->Get("2"));
  EXPECT_EQ(unchanged.name(), "two");
}

TEST_F(ServerStoreTest, UpdateKeepsDependentRows) {
  ASSERT_OK(store_->Insert(MinimalConfig("1", "one")).status());
  ASSERT_OK(db_->Exec(
      "INSERT INTO oauth_tokens (server_id, access_token, obtained_at) "
      "VALUES ('1', 'token', 1)"));
  ASSERT_OK(store_->Update(MinimalConfig("1", "uno")).status());
  ASSERT_OK_AND_ASSIGN(int64_t tokens,
                       QueryInt(*db_, "SELECT count(*) FROM oauth_tokens"));
  EXPECT_EQ(tokens, 1) << "an update must not delete and re-insert the row";
}

TEST_F(ServerStoreTest, DeletesByIdOrName) {
  ASSERT_OK(store_->Insert(MinimalConfig("1", "one")).status());
  ASSERT_OK(store_->Insert(MinimalConfig("2", "two")).status());
  ASSERT_OK(db_->Exec(
      "INSERT INTO oauth_tokens (server_id, access_token, obtained_at) "
      "VALUES ('1', 'token', 1)"));
  ASSERT_OK(store_->Delete("1"));
  ASSERT_OK(store_->Delete("two"));
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  EXPECT_TRUE(all.empty());
  ASSERT_OK_AND_ASSIGN(int64_t tokens,
                       QueryInt(*db_, "SELECT count(*) FROM oauth_tokens"));
  EXPECT_EQ(tokens, 0);

  absl::Status status = store_->Delete("1");
  EXPECT_EQ(ErrorReason(status), "SERVER_NOT_FOUND");
  EXPECT_THAT(GetErrorDetails(status), ElementsAre(Pair("serverId", "1")));
}

TEST_F(ServerStoreTest, TransactionIsAllOrNothing) {
  ASSERT_OK(store_->Insert(MinimalConfig("0", "existing")).status());
  absl::Status status = store_->RunInTransaction([](ServerTable& table) {
    RETURN_IF_ERROR(table.Insert(MinimalConfig("1", "new-one")).status());
    RETURN_IF_ERROR(table.Update(MinimalConfig("0", "renamed")).status());
    RETURN_IF_ERROR(table.Delete("new-one"));
    RETURN_IF_ERROR(table.Insert(MinimalConfig("2", "new-two")).status());
    // Fails: the name is taken inside this transaction.
    return table.Insert(MinimalConfig("3", "new-two")).status();
  });
  EXPECT_EQ(ErrorReason(status), "ALREADY_EXISTS");
  EXPECT_FALSE(db_->InTransaction());
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  ASSERT_EQ(all.size(), 1u);
  ExpectSameConfig(all[0], MinimalConfig("0", "existing"));
}

TEST_F(ServerStoreTest, TransactionCommitsOnSuccess) {
  ASSERT_OK(store_->RunInTransaction([](ServerTable& table) {
    RETURN_IF_ERROR(table.Insert(MinimalConfig("1", "a")).status());
    RETURN_IF_ERROR(table.Insert(MinimalConfig("2", "b")).status());
    // Reads inside see the writes.
    ASSIGN_OR_RETURN(std::vector<v1::ServerConfig> all, table.List());
    if (all.size() != 2) return absl::InternalError("writes not visible");
    return absl::OkStatus();
  }));
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  EXPECT_EQ(all.size(), 2u);
  // The store works normally afterwards.
  ASSERT_OK(store_->Delete("a"));
}

TEST_F(ServerStoreTest, CorruptRowIsDataLoss) {
  ASSERT_OK(store_->Insert(MinimalConfig("1", "one")).status());
  ASSERT_OK(db_->Exec("UPDATE servers SET args_json = '{not json'"));
  absl::Status status = store_->Get("1").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  ASSERT_OK(db_->Exec("UPDATE servers SET args_json = '[1]'"));
  EXPECT_EQ(store_->List().status().code(), absl::StatusCode::kDataLoss);
  ASSERT_OK(
      db_->Exec("UPDATE servers SET args_json = '[]', timeouts_json = "
                "'{\"idle\":\"x\"}'"));
  EXPECT_EQ(store_->Get("one").status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(ServerStoreTest, ConcurrentWritersThroughOneStore) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        EXPECT_TRUE(store_->Insert(MinimalConfig(id, "n" + id)).ok());
        EXPECT_TRUE(store_->Get(id).ok());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_OK_AND_ASSIGN(std::vector<v1::ServerConfig> all, store_->List());
  EXPECT_EQ(all.size(), static_cast<size_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace inspector::storage

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;

TEST(ServerStoreConvertedTest, ConvertedFromStdioRoundTripsAsJson) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(dir.File("servers.db")));
  ServerStore store(db.get());
  v1::ServerConfig config;
  config.set_id("33333333-3333-4333-8333-333333333333");
  config.set_name("converted");
  config.set_transport("streamableHttp");
  config.set_url("http://127.0.0.1:9000/mcp");
  v1::ConvertedFromStdio* original = config.mutable_converted_from_stdio();
  original->set_command("npx");
  original->add_args("-y");
  original->add_args("@modelcontextprotocol/server-everything");
  (*original->mutable_env())["DISPLAY"] = ":0";
  ASSERT_OK(store.Insert(config).status());
  ASSERT_OK_AND_ASSIGN(v1::ServerConfig got, store.Get("converted"));
  ASSERT_TRUE(got.has_converted_from_stdio());
  EXPECT_EQ(got.converted_from_stdio().command(), "npx");
  EXPECT_EQ(got.converted_from_stdio().args_size(), 2);
  EXPECT_EQ(got.converted_from_stdio().env().at("DISPLAY"), ":0");
  ASSERT_OK_AND_ASSIGN(
      std::string stored,
      QueryText(*db, "SELECT json_extract(converted_from_stdio_json, "
                     "'$.command') FROM servers"));
  EXPECT_EQ(stored, "npx");

  // Cleared: NULL again, and read back unset.
  config.clear_converted_from_stdio();
  ASSERT_OK(store.Update(config).status());
  ASSERT_OK_AND_ASSIGN(got, store.Get("converted"));
  EXPECT_FALSE(got.has_converted_from_stdio());
  ASSERT_OK_AND_ASSIGN(
      int64_t nulls,
      QueryInt(*db, "SELECT count(*) FROM servers WHERE "
                    "converted_from_stdio_json IS NULL"));
  EXPECT_EQ(nulls, 1);
}

}  // namespace
}  // namespace inspector::storage
