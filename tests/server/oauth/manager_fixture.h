// A fixture for the OAuth manager's tests (oauth_manager_test.cc,
// grant_renewal_test.cc): a real SQLite file in a fresh temporary folder
// holding one streamableHttp server, id "id-1" at kServer, its
// configuration (config_), a fake clock, and managers over a new fetcher
// of the test's type (fetcher_). The test's thread drives it; the manager
// may call back on its own threads.
#ifndef INSPECTOR_TESTS_SERVER_OAUTH_MANAGER_FIXTURE_H_
#define INSPECTOR_TESTS_SERVER_OAUTH_MANAGER_FIXTURE_H_

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gtest/gtest.h"
#include "server/oauth/oauth_manager.h"
#include "storage/database.h"
#include "tests/server/oauth/scripted_fetcher.h"
#include "tests/testing/fake_clock.h"

namespace inspector::oauth {

template <typename Fetcher>
class ManagerFixture : public ::testing::Test {
 protected:
  // The server is named `server_name` (and found by it or by "id-1").
  explicit ManagerFixture(std::string server_name)
      : server_name_(std::move(server_name)) {}

  void SetUp() override {
    const ::testing::UnitTest* unit = ::testing::UnitTest::GetInstance();
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("oauth-manager-test-", getpid(), "-",
                        unit->random_seed(), "-",
                        unit->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "inspector.db").string();
    auto db = storage::Database::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    const std::string insert = absl::StrCat(
        "INSERT INTO servers (id, name, transport, url, created_at, "
        "updated_at) VALUES ('id-1', '",
        server_name_, "', 'streamableHttp', '", kServer, "', 0, 0)");
    ASSERT_TRUE((*db)->Exec(insert).ok());
    config_.set_id("id-1");
    config_.set_name(server_name_);
    config_.set_transport("streamableHttp");
    config_.set_url(kServer);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A manager made with `options` and this fixture's database, clock and
  // server, over a new Fetcher (fetcher_); null, and a failure, if it
  // cannot be made.
  std::unique_ptr<OAuthManager> NewManager(OAuthManagerOptions options) {
    options.database_path = path_;
    options.clock = &clock_;
    options.find_server =
        [this](const std::string& s) -> absl::StatusOr<v1::ServerConfig> {
      if (s == server_name_ || s == "id-1") return config_;
      return Error(v1::SERVER_NOT_FOUND, "no such server");
    };
    auto fetcher = std::make_unique<Fetcher>();
    fetcher_ = fetcher.get();
    auto manager = OAuthManager::Create(std::move(options), std::move(fetcher));
    EXPECT_TRUE(manager.ok()) << manager.status();
    return manager.ok() ? *std::move(manager) : nullptr;
  }

  std::filesystem::path dir_;
  std::string path_;
  inspector::testing::FakeClock clock_;
  v1::ServerConfig config_;
  Fetcher* fetcher_ = nullptr;

 private:
  const std::string server_name_;
};

}  // namespace inspector::oauth

#endif  // INSPECTOR_TESTS_SERVER_OAUTH_MANAGER_FIXTURE_H_
