#include "common/mcp/answer_checks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/strings.h"

namespace inspector::mcp::internal {
namespace {

using nlohmann::json;

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

}  // namespace

absl::Status Invalid(std::string message, std::string field, std::string rule) {
  return Error(v1::INVALID_REQUEST, message,
               {{"field", std::move(field)}, {"rule", std::move(rule)}});
}

std::string Quote(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() <= kQuoteLimit) return text;
  size_t cut = kQuoteLimit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut) + "…";
}

std::string JsonTypeName(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_boolean()) return "a boolean";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

int64_t CodePoints(std::string_view text) {
  int64_t count = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++count;
  }
  return count;
}

bool IsAscii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x80;
  });
}

bool IsUri(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  if (!absl::ascii_isalpha(static_cast<unsigned char>(text[0]))) return false;
  for (size_t i = 1; i < colon; ++i) {
    const char c = text[i];
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '-' && c != '.') {
      return false;
    }
  }
  static constexpr std::string_view kAllowed = "-._~:/?#[]@!$&'()*+,;=";
  for (size_t i = colon + 1; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;  // fewer than two hex digits
      if (!IsHex(text[i + 1]) || !IsHex(text[i + 2])) return false;
      i += 2;
      continue;
    }
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) continue;
    if (kAllowed.find(c) != std::string_view::npos) continue;
    return false;
  }
  return true;
}

// An RFC 5321 mailbox as forms check it: local@domain, one "@", no blanks
// or control characters, a dot-atom local part (or a quoted one), and a
// domain of letter/digit/hyphen labels (non-ASCII allowed for IDNs) or an
// address literal in brackets.
bool IsEmail(std::string_view text) {
  const size_t at = text.rfind('@');
  if (at == std::string_view::npos || at == 0 || at + 1 == text.size()) {
    return false;
  }
  std::string_view local = text.substr(0, at), domain = text.substr(at + 1);
  if (local.size() > 64 || domain.size() > 255) return false;
  auto has_blank = [](std::string_view part) {
    return std::any_of(part.begin(), part.end(), [](char ch) {
      const auto c = static_cast<unsigned char>(ch);
      return c <= 0x20 || c == 0x7F;
    });
  };
  if (has_blank(domain)) return false;
  if (local.size() >= 2 && local.front() == '"' && local.back() == '"') {
    // Quoted local part: anything printable but a bare quote.
    std::string_view inner = local.substr(1, local.size() - 2);
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '\\') {
        ++i;
        continue;
      }
      if (inner[i] == '"' || static_cast<unsigned char>(inner[i]) < 0x20) {
        return false;
      }
    }
  } else {
    if (has_blank(local)) return false;
    if (local.find('@') != std::string_view::npos) return false;
    if (local.front() == '.' || local.back() == '.' ||
        local.find("..") != std::string_view::npos) {
      return false;
    }
    static constexpr std::string_view kSpecials = "()<>[]:;\\,\"";
    for (char c : local) {
      if (kSpecials.find(c) != std::string_view::npos) return false;
    }
  }
  if (domain.front() == '[') return domain.back() == ']' && domain.size() > 2;
  for (absl::string_view label : absl::StrSplit(AbslView(domain), '.')) {
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (unsigned char c : label) {
      if (!absl::ascii_isalnum(c) && c != '-' && c < 0x80) return false;
    }
  }
  return true;
}

}  // namespace inspector::mcp::internal
