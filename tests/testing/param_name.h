// Names for the cases of a parameterized test whose parameter has a
// readable `label`: gtest takes only letters, digits and '_' in a name, so
// every other character of the label becomes '_'. Header-only and
// stateless; any thread.
#ifndef INSPECTOR_TESTS_TESTING_PARAM_NAME_H_
#define INSPECTOR_TESTS_TESTING_PARAM_NAME_H_

#include <cctype>
#include <string>

#include "gtest/gtest.h"

namespace inspector::testing {

// The last argument of INSTANTIATE_TEST_SUITE_P for a parameter type with a
// std::string `label` member.
struct LabelName {
  template <typename Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
    std::string name;
    for (char ch : info.param.label) {
      name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    }
    return name;
  }
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_PARAM_NAME_H_
