#include "gateway/request_policy.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace inspector::gateway {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ValidHostChars(std::string_view host) {
  if (host.empty()) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
           c == '.' || c == ':' || c == '_';
  });
}

// A TCP port: 1 to 65535 in decimal.
bool ValidPort(std::string_view port) {
  if (port.empty() || port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  return value >= 1 && value <= 65535;
}

}  // namespace

RequestPolicy::RequestPolicy(std::vector<std::string> origins,
                             std::vector<std::string> hosts, int port) {
  for (const std::string& origin : origins) {
    std::string normal = NormalizeOrigin(origin);
    if (!normal.empty()) origins_.push_back(std::move(normal));
  }
  for (const char* own : {"localhost", "127.0.0.1", "[::1]"}) {
    origins_.push_back(NormalizeOrigin("http://" + std::string(own) + ":" +
                                       std::to_string(port)));
  }
  hosts_ = {"localhost", "127.0.0.1", "::1"};
  for (const std::string& host : hosts) {
    std::string name = HostName(host);
    if (!name.empty()) hosts_.push_back(std::move(name));
  }
}

std::string RequestPolicy::HostName(std::string_view host_header) {
  std::string_view host = host_header;
  while (!host.empty() && (host.back() == ' ' || host.back() == '\t')) {
    host.remove_suffix(1);
  }
  while (!host.empty() && (host.front() == ' ' || host.front() == '\t')) {
    host.remove_prefix(1);
  }
  if (host.empty()) return "";
  if (host.front() == '[') {
    size_t close = host.find(']');
    if (close == std::string_view::npos) return "";
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !ValidPort(rest.substr(1)))) {
      return "";
    }
    std::string_view inner = host.substr(1, close - 1);
    if (!ValidHostChars(inner)) return "";
    return Lower(inner);
  }
  size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    if (host.find(':', colon + 1) != std::string_view::npos) return "";
    if (!ValidPort(host.substr(colon + 1))) return "";
    host = host.substr(0, colon);
  }
  if (!ValidHostChars(host)) return "";
  // A trailing dot ("localhost.") names the same host to DNS but another
  // origin to a browser: it is not one of ours, and matches nothing.
  return Lower(host);
}

std::string RequestPolicy::NormalizeOrigin(std::string_view origin) {
  std::string text = Lower(origin);
  std::string scheme;
  if (text.rfind("http://", 0) == 0) {
    scheme = "http";
  } else if (text.rfind("https://", 0) == 0) {
    scheme = "https";
  } else {
    return "";
  }
  std::string_view rest = std::string_view(text).substr(scheme.size() + 3);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.empty() || rest.find('/') != std::string_view::npos ||
      rest.find('@') != std::string_view::npos) {
    return "";
  }
  std::string host = HostName(rest);
  if (host.empty()) return "";
  std::string port;
  size_t bracket = rest.rfind(']');
  size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos &&
      (bracket == std::string_view::npos || colon > bracket)) {
    port = std::string(rest.substr(colon + 1));
  }
  if ((scheme == "http" && port == "80") ||
      (scheme == "https" && port == "443")) {
    port.clear();
  }
  bool v6 = host.find(':') != std::string::npos;
  std::string out = scheme + "://" + (v6 ? "[" + host + "]" : host);
  if (!port.empty()) out += ":" + port;
  return out;
}

bool RequestPolicy::HostAllowed(std::string_view host_header) const {
  std::string name = HostName(host_header);
  if (name.empty()) return false;
  return std::find(hosts_.begin(), hosts_.end(), name) != hosts_.end();
}

std::optional<std::string_view> RequestPolicy::TargetAuthority(
    std::string_view target) {
  size_t scheme_end = target.find("://");
  if (target.empty() || target.front() == '/' || target == "*" ||
      scheme_end == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = target.substr(scheme_end + 3);
  return rest.substr(0, rest.find_first_of("/?#"));
}

bool RequestPolicy::RequestHostAllowed(std::string_view target,
                                       const std::string* host_header) const {
  if (std::optional<std::string_view> authority = TargetAuthority(target)) {
    std::string scheme = Lower(target.substr(0, target.find("://")));
    return (scheme == "http" || scheme == "https") && HostAllowed(*authority);
  }
  return host_header != nullptr && HostAllowed(*host_header);
}

bool RequestPolicy::OriginAllowed(std::string_view origin) const {
  // Browsers send scheme://host[:port] and nothing else; a path, even a
  // bare "/", means the value was not made by one.
  if (!origin.empty() && origin.back() == '/') return false;
  std::string normal = NormalizeOrigin(origin);
  if (normal.empty()) return false;
  return std::find(origins_.begin(), origins_.end(), normal) != origins_.end();
}

std::vector<std::pair<std::string, std::string>> RequestPolicy::CorsHeaders(
    std::string_view origin) const {
  return {{"Access-Control-Allow-Origin", std::string(origin)},
          {"Access-Control-Allow-Credentials", "true"},
          {"Access-Control-Expose-Headers", "Location, Mcp-Session-Id"},
          {"Vary", "Origin"}};
}

std::vector<std::pair<std::string, std::string>>
RequestPolicy::PreflightHeaders(std::string_view origin) const {
  auto headers = CorsHeaders(origin);
  headers.emplace_back("Access-Control-Allow-Methods",
                       "GET, POST, PUT, PATCH, DELETE, OPTIONS");
  headers.emplace_back("Access-Control-Allow-Headers",
                       "Content-Type, Authorization, X-Session-Token, "
                       "Accept, Last-Event-ID, Mcp-Session-Id, "
                       "MCP-Protocol-Version");
  headers.emplace_back("Access-Control-Max-Age", "600");
  return headers;
}

}  // namespace inspector::gateway
