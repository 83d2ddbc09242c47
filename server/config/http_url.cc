// ParseHttpUrl() (validation.h): the strict http(s) URL parser every URL
// field of a configuration goes through. Pure; thread-safe.
#include <arpa/inet.h>

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"
#include "server/config/validation.h"

namespace inspector::config {

absl::StatusOr<HttpUrl> ParseHttpUrl(std::string_view url) {
  if (url.size() > kMaxUrlBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("is longer than ", kMaxUrlBytes, " bytes"));
  }
  if (url.empty()) return absl::InvalidArgumentError("is empty");
  for (char c : url) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      return absl::InvalidArgumentError(
          "contains whitespace or a control character; percent-encode it "
          "(%20 for a space)");
    }
    if (u >= 0x80) {
      return absl::InvalidArgumentError(
          "contains non-ASCII characters; percent-encode them (and use the "
          "xn-- form for international host names)");
    }
    if (c == '\\') {
      return absl::InvalidArgumentError(
          "contains a backslash; use '/' or percent-encode it (%5C)");
    }
  }
  size_t colon = url.find("://");
  if (colon == std::string_view::npos) {
    size_t scheme_end = url.find(':');
    if (scheme_end != std::string_view::npos && scheme_end > 0 &&
        std::all_of(url.begin(), url.begin() + scheme_end, [](char c) {
          return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                 c == '+' || c == '-' || c == '.';
        })) {
      return absl::InvalidArgumentError(
          "is not an http(s) URL; use http://... or https://...");
    }
    return absl::InvalidArgumentError(
        "is not an absolute URL; write it as http://host[:port]/path or "
        "https://host[:port]/path");
  }
  HttpUrl out;
  out.scheme = absl::AsciiStrToLower(AbslView(url.substr(0, colon)));
  if (out.scheme != "http" && out.scheme != "https") {
    return absl::InvalidArgumentError(
        "is not an http(s) URL; use http://... or https://...");
  }
  std::string_view rest = url.substr(colon + 3);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  out.path = std::string(authority_end == std::string_view::npos
                             ? std::string_view()
                             : rest.substr(authority_end));
  if (authority.find('@') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "contains user credentials (user:password@); remove them and send "
        "credentials in headers instead");
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("has an unterminated [IPv6] host");
    }
    out.host = std::string(authority.substr(1, close - 1));
    out.ipv6 = true;
    in6_addr addr;
    if (out.host.empty() || inet_pton(AF_INET6, out.host.c_str(), &addr) != 1) {
      return absl::InvalidArgumentError(
          "has an invalid IPv6 address in brackets");
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        return absl::InvalidArgumentError(
            "has unexpected characters after the [IPv6] host");
      }
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    size_t port_colon = authority.find(':');
    out.host = std::string(authority.substr(0, port_colon));
    if (port_colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(port_colon + 1);
    }
    if (out.host.empty()) {
      return absl::InvalidArgumentError("has no host");
    }
    for (char c : out.host) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
          c != '.' && c != '_' && c != '~') {
        return absl::InvalidArgumentError(absl::StrCat(
            "has an invalid character '", std::string(1, c), "' in its host"));
      }
    }
    if (out.host[0] == '.' || out.host.find("..") != std::string::npos) {
      return absl::InvalidArgumentError("has an empty label in its host");
    }
  }
  if (has_port) {
    if (port_text.empty()) {
      return absl::InvalidArgumentError(
          "has an empty port; remove the ':' or give a port");
    }
    if (port_text.size() > 5 ||
        !std::all_of(port_text.begin(), port_text.end(), [](char c) {
          return absl::ascii_isdigit(static_cast<unsigned char>(c));
        })) {
      return absl::InvalidArgumentError(
          "has an invalid port; use a number from 1 to 65535");
    }
    int port = 0;
    for (char c : port_text) port = port * 10 + (c - '0');
    if (port < 1 || port > 65535) {
      return absl::InvalidArgumentError(
          "has an invalid port; use a number from 1 to 65535");
    }
    out.port = port;
  }
  for (size_t i = 0; i < out.path.size(); ++i) {
    if (out.path[i] != '%') continue;
    if (i + 2 >= out.path.size() ||
        !absl::ascii_isxdigit(static_cast<unsigned char>(out.path[i + 1])) ||
        !absl::ascii_isxdigit(static_cast<unsigned char>(out.path[i + 2]))) {
      return absl::InvalidArgumentError(
          "has a malformed percent escape; '%' must be followed by two hex "
          "digits (write %25 for '%')");
    }
  }
  return out;
}

}  // namespace inspector::config
