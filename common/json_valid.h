// Checking that a text is one JSON value without building a document: the
// check run on every message the daemon forwards. Pure function,
// thread-safe.
#ifndef INSPECTOR_COMMON_JSON_VALID_H_
#define INSPECTOR_COMMON_JSON_VALID_H_

#include <string_view>

namespace inspector::json_scan {

// True exactly when nlohmann::json::accept(text) is (nlohmann 3.11.2,
// default arguments: no comments, nothing but whitespace after the value),
// for every input; the tests compare the two. That is RFC 8259:
//  - one value, with optional whitespace (space, tab, LF, CR) around it;
//    empty or all-whitespace text is rejected;
//  - strings: no unescaped byte below 0x20; escapes \" \\ \/ \b \f \n \r \t
//    and \uXXXX (hex in either case), where a high surrogate D800-DBFF must
//    be followed at once by a \u low surrogate DC00-DFFF and a lone low
//    surrogate is rejected; raw bytes must be well-formed UTF-8 (RFC 3629:
//    no overlong forms, no encoded surrogates, nothing past U+10FFFF, no
//    stray continuation bytes, no cut-short sequences);
//  - numbers -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?;
//  - the literals true, false and null;
//  - no limit on nesting depth.
// And nlohmann's own rules on top of RFC 8259:
//  - a number whose magnitude rounds to infinity as a double (1e999, -1e400,
//    an integer of 310 digits: anything at or past 2^1024 - 2^970) is
//    rejected; huge integers that stay finite and underflow (1e-999) are
//    accepted;
//  - one UTF-8 byte order mark (EF BB BF) is allowed as the very first
//    bytes, before any whitespace;
//  - a NUL byte where the end of the text could be ends the text: anything
//    after it is ignored ("1\0garbage" is accepted); elsewhere, NUL is
//    rejected like any other stray byte.
// Never recurses; allocates nothing unless nesting is deeper than 64.
bool IsValidJson(std::string_view text);

}  // namespace inspector::json_scan

#endif  // INSPECTOR_COMMON_JSON_VALID_H_
