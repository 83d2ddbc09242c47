#include "server/protocol/header_codec.h"

#include "absl/strings/string_view.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace inspector::protocol {
namespace {

constexpr absl::string_view kPrefix = "=?base64?";
constexpr absl::string_view kSuffix = "?=";

// Standard Base64 with its padding, nothing else (RFC 4648, section 4).
bool StrictBase64(absl::string_view text) {
  if (text.size() % 4 != 0) return false;
  size_t pad = 0;
  for (char c : text) {
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad > 0) return false;  // '=' only at the end
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '/') {
      return false;
    }
  }
  return pad <= 2;
}

bool IsSentinelForm(const std::string& value) {
  return value.size() >= kPrefix.size() + kSuffix.size() &&
         absl::StartsWith(value, kPrefix) && absl::EndsWith(value, kSuffix);
}

}  // namespace

std::string EncodeHeaderValue(const std::string& value) {
  if (value.empty()) return value;
  bool plain = value.front() != ' ' && value.back() != ' ';
  for (unsigned char c : value) {
    // A tab is legal inside a field value, but intermediaries disagree on
    // it; the revision's examples encode it.
    if (!(c == ' ' || (c >= 0x21 && c <= 0x7e))) plain = false;
  }
  if (absl::StartsWith(value, kPrefix) && absl::EndsWith(value, kSuffix)) {
    plain = false;
  }
  if (plain) return value;
  return absl::StrCat(kPrefix, absl::Base64Escape(value), kSuffix);
}

std::optional<std::string> DecodeHeaderValue(const std::string& value) {
  if (IsSentinelForm(value)) {
    absl::string_view encoded = absl::string_view(value).substr(
        kPrefix.size(), value.size() - kPrefix.size() - kSuffix.size());
    std::string decoded;
    if (!StrictBase64(encoded) || !absl::Base64Unescape(encoded, &decoded)) {
      return std::nullopt;
    }
    return decoded;
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return std::nullopt;
  }
  return value;
}

}  // namespace inspector::protocol
