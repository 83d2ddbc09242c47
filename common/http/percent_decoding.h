// Percent-decoding (RFC 3986, section 2.1) of URL paths and queries, for
// the gateway's routes and the front doors' server names. '+' is left as
// it is: turning it into a space is a query form's rule, not the URL's.
#ifndef INSPECTOR_COMMON_HTTP_PERCENT_DECODING_H_
#define INSPECTOR_COMMON_HTTP_PERCENT_DECODING_H_

#include <string>
#include <string_view>

namespace inspector::http {

// The value of one hex digit, or -1.
int HexDigitValue(char c);

// Appends the decoded form of `raw` to `out`; false on a malformed escape
// (then `out` holds a part of it).
bool AppendPercentDecoded(std::string_view raw, std::string* out);

// Decodes `in` into `out` (cleared first); false on a malformed escape.
bool PercentDecode(std::string_view in, std::string* out);

}  // namespace inspector::http

#endif  // INSPECTOR_COMMON_HTTP_PERCENT_DECODING_H_
