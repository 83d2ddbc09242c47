// Reading the history a real inspectord wrote, from the end-to-end tests
// of this directory that open its SQLite file after the daemon stopped
// (durability, proxy). Not thread-safe: one Database per test thread.
#ifndef INSPECTOR_TESTS_INTEGRATION_HISTORY_QUERY_H_
#define INSPECTOR_TESTS_INTEGRATION_HISTORY_QUERY_H_

#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "storage/database.h"

namespace inspector {

// The first column of the first row `sql` returns; -1 (and a test failure)
// if it fails or returns no row.
inline int64_t QueryInt(storage::Database& db, const std::string& sql) {
  auto statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return -1;
  auto row = statement->Step();
  EXPECT_TRUE(row.ok() && *row) << sql;
  if (!row.ok() || !*row) return -1;
  return statement->ColumnInt64(0);
}

}  // namespace inspector

#endif  // INSPECTOR_TESTS_INTEGRATION_HISTORY_QUERY_H_
