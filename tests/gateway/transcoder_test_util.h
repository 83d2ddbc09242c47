// Helpers shared by the gateway core's tests (route table, transcoder):
// reading the descriptor set, building the routing over it, checking
// errors. Not thread-safe.
#ifndef INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_
#define INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "gateway/route_table.h"
#include "gateway/transcoder.h"
#include "common/errors.h"

namespace inspector::gateway {

// The whole content of the file at `path` ("" if it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// Expects an INVALID_REQUEST whose message names `field` (and whose
// details carry it, when given).
inline void ExpectInvalid(const absl::Status& status, const std::string& field,
                          const std::string& text = "") {
  ASSERT_FALSE(status.ok()) << "expected an error for " << field;
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST") << status;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  std::string message(status.message());
  if (!field.empty()) {
    EXPECT_THAT(message, ::testing::HasSubstr("\"" + field + "\"")) << message;
    EXPECT_EQ(GetErrorDetails(status)["field"], field) << message;
  }
  if (!text.empty()) {
    EXPECT_THAT(message, ::testing::HasSubstr(text));
  }
}

// For a suite's SetUpTestSuite: loads `descriptor_set` (a serialized
// FileDescriptorSet), then builds its route table and a transcoder over
// it. The suite owns the three and deletes them in TearDownTestSuite.
inline void BuildRouting(const std::string& descriptor_set,
                         const google::protobuf::DescriptorPool** pool,
                         const RouteTable** table,
                         const Transcoder** transcoder) {
  auto loaded = LoadDescriptorSet(descriptor_set);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  *pool = loaded->release();
  auto built = RouteTable::Build(**pool);
  ASSERT_TRUE(built.ok()) << built.status();
  *table = new RouteTable(*std::move(built));
  *transcoder = new Transcoder(*pool);
}

}  // namespace inspector::gateway

#endif  // INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_
