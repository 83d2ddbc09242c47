// Writing JSON string literals by hand, for the code that renders JSON
// without building a document first (the gateway's transcoder and its error
// bodies). One escaping rule: '"', '\\' and control characters are escaped
// (\b \f \n \r \t, others as \u00XX), and bytes that are not well-formed
// UTF-8 become U+FFFD, so the result is always valid JSON. Pure functions,
// thread-safe.
#ifndef INSPECTOR_COMMON_JSON_TEXT_H_
#define INSPECTOR_COMMON_JSON_TEXT_H_

#include <string>
#include <string_view>

namespace inspector {

// Appends `value` to `out` as a JSON string literal (quotes included).
void AppendJsonString(std::string* out, std::string_view value);

// `value` as a JSON string literal (quotes included).
std::string JsonString(std::string_view value);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_JSON_TEXT_H_
