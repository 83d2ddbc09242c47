// Parsing and policy for the addresses inspectord listens on.
//
// Every listener binds loopback by default. An address that is not loopback
// (127.0.0.0/8, ::1, "localhost") or a unix socket is refused unless the
// caller explicitly allows network exposure. Thread-safe (pure functions).
#ifndef INSPECTOR_COMMON_NET_LISTEN_ADDRESS_H_
#define INSPECTOR_COMMON_NET_LISTEN_ADDRESS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inspector::net {

struct ListenAddress {
  // Host without brackets ("127.0.0.1", "::1", "localhost"), or the path of
  // a unix socket.
  std::string host;
  // 0 asks the kernel for a free port.
  int port = 0;
  bool unix_socket = false;
  // True for loopback hosts and unix sockets.
  bool local = false;

  // The form gRPC expects: "127.0.0.1:50051", "[::1]:0", "unix:/path".
  std::string ToGrpcTarget() const;
};

// Whether `host` (a URL's or listen address's host, without brackets) names
// this machine: "localhost" (any case, a trailing dot allowed), an IPv4
// address in 127.0.0.0/8 written as a dotted quad, or the IPv6 loopback
// address. Nothing else: "127.evil.example" and "localhost.evil.example"
// are names DNS answers for. The one rule every loopback check uses.
bool IsLoopbackHost(std::string_view host);

// Parses "host:port", "[v6]:port" or "unix:/path". INVALID_ARGUMENT with a
// message saying what is wrong otherwise.
absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text);

// Parses `text` and refuses non-local addresses unless
// `allow_network_exposure`. `flag_name` is the flag that allows it, quoted
// in the error so the user knows what to pass.
absl::StatusOr<ListenAddress> CheckListenAddress(
    std::string_view text, bool allow_network_exposure,
    std::string_view flag_name);

// For a unix socket address: FAILED_PRECONDITION when a process already
// accepts connections on its path (gRPC would remove the file and take the
// path over silently). OK when nothing listens there (a file left by a
// process that died is taken over, as it should be) and for TCP addresses,
// whose bind fails by itself.
absl::Status CheckUnixSocketUnused(const ListenAddress& address);

}  // namespace inspector::net

#endif  // INSPECTOR_COMMON_NET_LISTEN_ADDRESS_H_
