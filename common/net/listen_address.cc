#include "common/net/listen_address.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace inspector::net {
namespace {

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid listen address '", std::string(text), "': ", std::string(why),
      " (expected host:port such as 127.0.0.1:50051, [::1]:50051 or "
      "unix:/path/to/socket)"));
}

}  // namespace

std::string ListenAddress::ToGrpcTarget() const {
  if (unix_socket) return absl::StrCat("unix:", host);
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress out;
  if (absl::StartsWith(AbslView(text), "unix:")) {
    out.host = std::string(text.substr(5));
    if (out.host.empty()) return Invalid(text, "empty socket path");
    out.unix_socket = true;
    out.local = true;
    return out;
  }
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() ||
        text[close + 1] != ':') {
      return Invalid(text, "an IPv6 address needs the form [addr]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return Invalid(text, "no port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      return Invalid(text, "put an IPv6 address in brackets");
    }
  }
  if (host.empty()) return Invalid(text, "no host");
  int port_number = -1;
  if (!absl::SimpleAtoi(AbslView(port), &port_number) || port_number < 0 ||
      port_number > 65535) {
    return Invalid(text, "the port must be a number from 0 to 65535");
  }
  out.host = std::string(host);
  out.port = port_number;
  out.local = IsLoopbackHost(out.host);
  return out;
}

absl::StatusOr<ListenAddress> CheckListenAddress(std::string_view text,
                                                 bool allow_network_exposure,
                                                 std::string_view flag_name) {
  auto address = ParseListenAddress(text);
  if (!address.ok()) return address;
  if (!address->local && !allow_network_exposure) {
    return absl::PermissionDeniedError(absl::StrCat(
        "refusing to listen on '", std::string(text),
        "': it is not a loopback address, so anyone who can reach this "
        "machine could start processes through it. Use 127.0.0.1 or [::1], "
        "or pass ",
        std::string(flag_name),
        " if you really mean to expose the API to the network."));
  }
  return address;
}

bool IsLoopbackHost(std::string_view host) {
  std::string name = absl::AsciiStrToLower(std::string(host));
  if (name == "localhost" || name == "localhost.") return true;
  in_addr v4;
  if (inet_pton(AF_INET, name.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, name.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6);
  }
  return false;
}

absl::Status CheckUnixSocketUnused(const ListenAddress& address) {
  if (!address.unix_socket) return absl::OkStatus();
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (address.host.size() >= sizeof(sun.sun_path)) return absl::OkStatus();
  std::memcpy(sun.sun_path, address.host.data(), address.host.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();
  bool in_use =
      connect(fd, reinterpret_cast<const sockaddr*>(&sun), sizeof(sun)) == 0;
  close(fd);
  if (!in_use) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "another process is serving on unix:", address.host,
      "; stop it first, or choose another --listen path"));
}

}  // namespace inspector::net
