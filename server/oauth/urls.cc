#include "server/oauth/urls.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/net/listen_address.h"

namespace inspector::oauth {

std::string Url::Origin() const {
  std::string h = absl::StrContains(host, ':') ? absl::StrCat("[", host, "]")
                                               : host;
  return port.empty() ? absl::StrCat(scheme, "://", h)
                      : absl::StrCat(scheme, "://", h, ":", port);
}

bool Url::SameOrigin(const Url& other) const {
  auto effective = [](const Url& u) {
    if (!u.port.empty()) return u.port;
    return std::string(u.scheme == "https" ? "443" : "80");
  };
  return scheme == other.scheme && host == other.host &&
         effective(*this) == effective(other);
}

bool Url::IsLoopback() const {
  return net::IsLoopbackHost(host);
}

absl::StatusOr<Url> ParseUrl(absl::string_view url, absl::string_view what) {
  auto bad = [&](absl::string_view why) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat(what, ": '", url.substr(0, 200), "' ", why));
  };
  Url out;
  auto colon = url.find("://");
  if (colon == absl::string_view::npos || colon == 0) {
    return bad("is not an absolute URL");
  }
  out.scheme = absl::AsciiStrToLower(url.substr(0, colon));
  absl::string_view rest = url.substr(colon + 3);
  auto hash = rest.find('#');
  if (hash != absl::string_view::npos) {
    out.fragment = std::string(rest.substr(hash + 1));
    rest = rest.substr(0, hash);
  }
  auto q = rest.find('?');
  if (q != absl::string_view::npos) {
    out.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  auto slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  if (slash != absl::string_view::npos) out.path = std::string(rest.substr(slash));
  if (authority.empty()) return bad("has no host");
  if (absl::StrContains(authority, '@')) return bad("carries user information");
  if (authority.front() == '[') {
    auto close = authority.find(']');
    if (close == absl::string_view::npos) return bad("has a broken IPv6 host");
    out.host = std::string(authority.substr(1, close - 1));
    absl::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("has a broken port");
      out.port = std::string(after.substr(1));
    }
  } else {
    auto pc = authority.rfind(':');
    out.host = std::string(authority.substr(0, pc));
    if (pc != absl::string_view::npos) out.port = std::string(authority.substr(pc + 1));
  }
  out.host = absl::AsciiStrToLower(out.host);
  for (char c : out.port) {
    if (!absl::ascii_isdigit(c)) return bad("has a broken port");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return bad("contains spaces or control characters");
    }
  }
  if (out.host.empty()) return bad("has no host");
  return out;
}

absl::Status CheckFetchableUrl(absl::string_view url, absl::string_view what) {
  std::string lower = absl::AsciiStrToLower(url.substr(0, 16));
  if (!absl::StartsWith(lower, "https://") && !absl::StartsWith(lower, "http://")) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat(what, ": '", url.substr(0, 60),
                              "' is not an http(s) URL; only https (or http to "
                              "a loopback address) is accepted"));
  }
  auto parsed = ParseUrl(url, what);
  if (!parsed.ok()) return parsed.status();
  if (parsed->scheme == "http" && !parsed->IsLoopback()) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat(what, ": '", url.substr(0, 200),
                              "' uses plain http; OAuth endpoints must use "
                              "https unless they are on this machine "
                              "(localhost, 127.0.0.1, [::1])"));
  }
  return absl::OkStatus();
}

std::string PercentEncode(absl::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string PercentDecode(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() &&
               absl::ascii_isxdigit(s[i + 1]) && absl::ascii_isxdigit(s[i + 2])) {
      auto hex = [](char c) {
        return absl::ascii_isdigit(c) ? c - '0' : absl::ascii_tolower(c) - 'a' + 10;
      };
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string FormEncode(
    const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    absl::StrAppend(&out, PercentEncode(name), "=", PercentEncode(value));
  }
  return out;
}

std::map<std::string, std::string> ParseQuery(absl::string_view query) {
  std::map<std::string, std::string> out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    auto eq = part.find('=');
    std::string name = PercentDecode(part.substr(0, eq));
    std::string value =
        eq == absl::string_view::npos ? "" : PercentDecode(part.substr(eq + 1));
    out.emplace(std::move(name), std::move(value));
  }
  return out;
}

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

std::vector<std::string> SplitScopes(absl::string_view scopes) {
  return absl::StrSplit(scopes, ' ', absl::SkipEmpty());
}

}  // namespace inspector::oauth
