// Helpers shared by the tests of the route table and the transcoder: the
// compiled descriptor set, the routing built over it, and the check of an
// INVALID_REQUEST. Stateless; call them from the test's thread.
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

#ifndef INSPECTOR_DESCRIPTOR_SET
#error "INSPECTOR_DESCRIPTOR_SET must name the compiled descriptor set"
#endif

namespace inspector::gateway {

// The serialized FileDescriptorSet of proto/ the build compiled
// (INSPECTOR_DESCRIPTOR_SET); "" if it cannot be read.
inline std::string CompiledDescriptorSet() {
  std::ifstream in(INSPECTOR_DESCRIPTOR_SET, std::ios::binary);
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

// Base of a suite whose tests share one routing: the suite's
// SetUpTestSuite calls BuildFrom() once; TearDownTestSuite deletes it.
// Suites run one after another, so they share the storage.
class RoutingSuite : public ::testing::Test {
 protected:
  static void BuildFrom(const std::string& descriptor_set) {
    BuildRouting(descriptor_set, &pool_, &table_, &transcoder_);
  }
  static void TearDownTestSuite() {
    delete transcoder_;
    delete table_;
    delete pool_;
    transcoder_ = nullptr;
    table_ = nullptr;
    pool_ = nullptr;
  }

  inline static const google::protobuf::DescriptorPool* pool_ = nullptr;
  inline static const RouteTable* table_ = nullptr;
  inline static const Transcoder* transcoder_ = nullptr;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_
