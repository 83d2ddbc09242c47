// RFC 9110 tokens: the one definition of which bytes may form an HTTP
// method or header field name (`token = 1*tchar`, section 5.6.2), used by
// the HTTP/1.1 parser, the configuration checks on server headers and
// inspectorctl's --header option. Header-only, constexpr, thread-safe.
#ifndef INSPECTOR_COMMON_HTTP_TOKENS_H_
#define INSPECTOR_COMMON_HTTP_TOKENS_H_

#include <array>
#include <string_view>

namespace inspector::http {
namespace tokens_internal {

constexpr bool IsTcharSlow(unsigned char c) {
  if (c >= '0' && c <= '9') return true;
  if (c >= 'a' && c <= 'z') return true;
  if (c >= 'A' && c <= 'Z') return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// A lookup table, as the parser asks for every byte of every header name.
struct TcharTable {
  std::array<bool, 256> is_tchar{};
  constexpr TcharTable() {
    for (int i = 0; i < 256; ++i) {
      is_tchar[i] = IsTcharSlow(static_cast<unsigned char>(i));
    }
  }
};
inline constexpr TcharTable kTcharTable;

}  // namespace tokens_internal

// The token characters as one string, for error messages.
inline constexpr std::string_view kTcharPunctuation = "!#$%&'*+-.^_`|~";

// True for a tchar: an ASCII letter or digit, or one of !#$%&'*+-.^_`|~.
constexpr bool IsTchar(char c) {
  return tokens_internal::kTcharTable.is_tchar[static_cast<unsigned char>(c)];
}

// True for an RFC 9110 token: one or more tchars (methods, header field
// names). False for the empty string.
constexpr bool IsToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!IsTchar(c)) return false;
  }
  return true;
}

}  // namespace inspector::http

#endif  // INSPECTOR_COMMON_HTTP_TOKENS_H_
