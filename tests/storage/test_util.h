// Helpers for the storage tests: status assertions, a temporary
// directory and a fixture with a database file in one. Not thread-safe.
#ifndef INSPECTOR_TESTS_STORAGE_TEST_UTIL_H_
#define INSPECTOR_TESTS_STORAGE_TEST_UTIL_H_

#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "gtest/gtest.h"
#include "storage/database.h"

// Fails the test (fatally / not) if `expr`, an absl::Status, is not OK.
#define ASSERT_OK(expr)                                 \
  do {                                                  \
    const ::absl::Status assert_status_ = (expr);       \
    ASSERT_TRUE(assert_status_.ok()) << assert_status_; \
  } while (0)
#define EXPECT_OK(expr)                                 \
  do {                                                  \
    const ::absl::Status expect_status_ = (expr);       \
    EXPECT_TRUE(expect_status_.ok()) << expect_status_; \
  } while (0)

#define STORAGE_TEST_CONCAT_INNER_(a, b) a##b
#define STORAGE_TEST_CONCAT_(a, b) STORAGE_TEST_CONCAT_INNER_(a, b)

// Asserts that `rexpr` (an absl::StatusOr) is OK and moves its value into
// `lhs` (which may be a declaration).
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                       \
  ASSERT_OK_AND_ASSIGN_IMPL_(STORAGE_TEST_CONCAT_(assert_statusor_, __LINE__), \
                             lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  ASSERT_TRUE(statusor.ok()) << statusor.status();       \
  lhs = std::move(statusor).value()

namespace inspector::storage::testing {

// The first column of the first row `sql` returns, as text ("" for NULL);
// kNotFound if it returns no row.
inline absl::StatusOr<std::string> QueryText(Database& db,
                                             std::string_view sql) {
  ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return absl::NotFoundError("no row");
  return statement.ColumnText(0);
}

// The same as an integer.
inline absl::StatusOr<int64_t> QueryInt(Database& db, std::string_view sql) {
  ASSIGN_OR_RETURN(Statement statement, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return absl::NotFoundError("no row");
  return statement.ColumnInt64(0);
}

// A temporary directory for one test under ::testing::TempDir(), removed
// with everything in it when the object is destroyed.
class TempDir {
 public:
  TempDir() {
    std::string base = ::testing::TempDir();
    if (base.empty()) base = "/tmp/";
    if (base.back() != '/') base += '/';
    std::vector<char> name(base.begin(), base.end());
    const std::string suffix = "inspector-storage-XXXXXX";
    name.insert(name.end(), suffix.begin(), suffix.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) != nullptr) path_ = name.data();
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed under " << base;
  }
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // `name` inside the directory.
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A fixture whose tests start from a database file, "inspector.db" in a
// fresh temporary directory, opened (so migrated) as db_.
class DatabaseFileFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }
  std::string path() const { return dir_.File("inspector.db"); }

  TempDir dir_;
  std::unique_ptr<Database> db_;
};

}  // namespace inspector::storage::testing

#endif  // INSPECTOR_TESTS_STORAGE_TEST_UTIL_H_
