// Helpers shared by the transcoder's tests.
#ifndef INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_
#define INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "common/errors.h"

namespace inspector::gateway {

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

}  // namespace inspector::gateway

#endif  // INSPECTOR_TESTS_GATEWAY_TRANSCODER_TEST_UTIL_H_
