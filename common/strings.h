// The bridge between std::string_view and absl::string_view.
//
// Abseil is built here with its own string_view type (not an alias of
// std::string_view), so the Abseil string functions need a conversion when
// our code holds a std::string_view. AbslView() is that one conversion; use
// it instead of spelling absl::string_view(s.data(), s.size()) at call
// sites. Header-only, no state, thread-safe.
#ifndef INSPECTOR_COMMON_STRINGS_H_
#define INSPECTOR_COMMON_STRINGS_H_

#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace inspector {

// The same characters as `s`, viewed as an absl::string_view. Never copies.
inline absl::string_view AbslView(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// The same characters as `s`, viewed as a std::string_view. Never copies.
inline std::string_view StdView(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// Whether `a` and `b` are equal when ASCII letters are compared without
// case (HTTP field names, tokens, schemes).
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(AbslView(a), AbslView(b));
}

}  // namespace inspector

#endif  // INSPECTOR_COMMON_STRINGS_H_
