// Reading the fields of OAuth and OIDC documents (metadata, registration
// and token answers) without exceptions: a field of another type reads as
// absent.
#ifndef INSPECTOR_SERVER_OAUTH_JSON_FIELDS_H_
#define INSPECTOR_SERVER_OAUTH_JSON_FIELDS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"

namespace inspector::oauth {

// The string `key` of `j`, or "".
inline std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A metadata flag: true only for a JSON true (a string "true" or any other
// type is not).
inline bool BoolField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// The strings of the array `key` of `j` (other elements skipped).
inline std::vector<std::string> StringList(const nlohmann::json& j,
                                           const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const auto& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

inline bool Contains(const std::vector<std::string>& list,
                     absl::string_view v) {
  for (const auto& s : list) {
    if (s == v) return true;
  }
  return false;
}

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_JSON_FIELDS_H_
