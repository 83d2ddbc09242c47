// TCP socket owners from /proc/net/tcp and /proc/net/tcp6
// (socket_owner.h).
#include "common/net/socket_owner.h"

#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/strings.h"

namespace inspector::net {
namespace {

// An address and port, IPv4 addresses in their IPv4-mapped IPv6 form so
// that both families compare.
struct Endpoint {
  std::array<uint8_t, 16> address{};
  uint16_t port = 0;
  bool operator==(const Endpoint& other) const {
    return port == other.port && address == other.address;
  }
};

constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0,    0,
                                                   0, 0, 0, 0, 0xff, 0xff};

std::optional<Endpoint> FromSockaddr(const sockaddr_storage& addr) {
  Endpoint out;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    std::memcpy(out.address.data(), kMappedPrefix.data(), 12);
    std::memcpy(out.address.data() + 12, &in->sin_addr, 4);
    out.port = ntohs(in->sin_port);
    return out;
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    std::memcpy(out.address.data(), &in6->sin6_addr, 16);
    out.port = ntohs(in6->sin6_port);
    return out;
  }
  return std::nullopt;
}

bool IsMappedV4(const Endpoint& endpoint) {
  return std::memcmp(endpoint.address.data(), kMappedPrefix.data(), 12) == 0;
}

// "0100007F:1F90" (IPv4) or 32 hex digits and a port (IPv6). The kernel
// prints each 32-bit word of the address as the number it is in this
// machine's byte order (%08X), the port as a number (%04X).
std::optional<Endpoint> ParseProcEndpoint(absl::string_view text) {
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos) return std::nullopt;
  absl::string_view hex = text.substr(0, colon);
  uint32_t port = 0;
  if (!absl::SimpleHexAtoi(text.substr(colon + 1), &port) || port > 0xffff) {
    return std::nullopt;
  }
  Endpoint out;
  out.port = static_cast<uint16_t>(port);
  if (hex.size() != 8 && hex.size() != 32) return std::nullopt;
  const size_t words = hex.size() / 8;
  uint8_t* target = out.address.data();
  if (words == 1) {
    std::memcpy(target, kMappedPrefix.data(), 12);
    target += 12;
  }
  for (size_t i = 0; i < words; ++i) {
    uint32_t word = 0;
    if (!absl::SimpleHexAtoi(hex.substr(i * 8, 8), &word)) return std::nullopt;
    std::memcpy(target + i * 4, &word, 4);
  }
  return out;
}

// The fields of a socket line: "sl local rem st tx:rx tr:when retrnsmt uid
// timeout inode ...".
constexpr size_t kLocalField = 1;
constexpr size_t kRemoteField = 2;
constexpr size_t kStateField = 3;
constexpr size_t kUidField = 7;
constexpr size_t kInodeField = 9;
constexpr char kEstablished[] = "01";  // TCP_ESTABLISHED

std::optional<uint32_t> FindUid(absl::string_view proc_text,
                                const Endpoint& local, const Endpoint& remote) {
  for (absl::string_view line : absl::StrSplit(proc_text, '\n')) {
    std::array<absl::string_view, kInodeField + 1> fields;
    size_t count = 0;
    for (absl::string_view field :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      fields[count++] = field;
      if (count == fields.size()) break;
    }
    // The header line ("sl local_address ...") fails the parse below.
    if (count < fields.size() || fields[kStateField] != kEstablished) continue;
    std::optional<Endpoint> line_local = ParseProcEndpoint(fields[kLocalField]);
    if (!line_local.has_value() || !(*line_local == local)) continue;
    std::optional<Endpoint> line_remote =
        ParseProcEndpoint(fields[kRemoteField]);
    if (!line_remote.has_value() || !(*line_remote == remote)) continue;
    uint32_t uid = 0;
    uint64_t inode = 0;
    if (!absl::SimpleAtoi(fields[kUidField], &uid) ||
        !absl::SimpleAtoi(fields[kInodeField], &inode) || inode == 0) {
      continue;
    }
    return uid;
  }
  return std::nullopt;
}

// The whole of a procfs file; "" when it cannot be read.
std::string ReadProcFile(const char* path) {
  std::string text;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[16 * 1024];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  close(fd);
  return text;
}

// What the kernel's socket diagnostics (NETLINK_SOCK_DIAG) say of one
// socket, asked by its exact address pair: a hash lookup, where reading
// /proc/net/tcp walks every bucket of the established table (milliseconds
// on a machine with a large one, whatever the number of sockets).
struct DiagAnswer {
  bool answered = false;  // false: netlink unavailable, use procfs
  std::optional<uint32_t> uid;
};

DiagAnswer SockDiagUid(const Endpoint& local, const Endpoint& remote) {
  DiagAnswer out;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  inet_diag_req_v2& request = message.request;
  // The established table is shared by both families, and an IPv6 socket
  // talking to an IPv4 address is found by its IPv4 pair.
  const bool v4 = IsMappedV4(local) && IsMappedV4(remote);
  request.sdiag_family = v4 ? AF_INET : AF_INET6;
  request.sdiag_protocol = IPPROTO_TCP;
  request.idiag_states = ~0u;
  request.id.idiag_sport = htons(local.port);
  request.id.idiag_dport = htons(remote.port);
  std::memcpy(request.id.idiag_src, local.address.data() + (v4 ? 12 : 0),
              v4 ? 4 : 16);
  std::memcpy(request.id.idiag_dst, remote.address.data() + (v4 ? 12 : 0),
              v4 ? 4 : 16);
  request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return out;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  alignas(nlmsghdr) char buffer[1024];
  ssize_t n = -1;
  if (sendto(fd, &message, sizeof(message), 0,
             reinterpret_cast<sockaddr*>(&kernel),
             sizeof(kernel)) == static_cast<ssize_t>(sizeof(message))) {
    do {
      n = recv(fd, buffer, sizeof(buffer), 0);
    } while (n < 0 && errno == EINTR);
  }
  close(fd);
  if (n < static_cast<ssize_t>(sizeof(nlmsghdr))) return out;
  const auto* reply = reinterpret_cast<const nlmsghdr*>(buffer);
  if (!NLMSG_OK(reply, static_cast<size_t>(n))) return out;
  if (reply->nlmsg_type == NLMSG_ERROR) {
    const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(reply));
    // No such socket: a definite answer. Anything else (a kernel without
    // the module, a refusal): procfs decides.
    out.answered = reply->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr)) &&
                   error->error == -ENOENT;
    return out;
  }
  if (reply->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
      reply->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
    return out;
  }
  const auto* socket_info =
      static_cast<const inet_diag_msg*>(NLMSG_DATA(reply));
  out.answered = true;
  // As in procfs: established and held by a process, or nobody's.
  if (socket_info->idiag_state == TCP_ESTABLISHED &&
      socket_info->idiag_inode != 0) {
    out.uid = socket_info->idiag_uid;
  }
  return out;
}

}  // namespace

std::optional<uint32_t> FindTcpSocketUid(std::string_view proc_text,
                                         const sockaddr_storage& local,
                                         const sockaddr_storage& remote) {
  std::optional<Endpoint> want_local = FromSockaddr(local);
  std::optional<Endpoint> want_remote = FromSockaddr(remote);
  if (!want_local.has_value() || !want_remote.has_value()) return std::nullopt;
  return FindUid(AbslView(proc_text), *want_local, *want_remote);
}

std::optional<uint32_t> TcpPeerUid(const sockaddr_storage& self,
                                   const sockaddr_storage& peer) {
  std::optional<Endpoint> client = FromSockaddr(peer);
  std::optional<Endpoint> server = FromSockaddr(self);
  if (!client.has_value() || !server.has_value()) return std::nullopt;
  DiagAnswer diag = SockDiagUid(*client, *server);
  if (diag.answered) return diag.uid;
  return TcpPeerUidFromProc(self, peer);
}

std::optional<uint32_t> TcpPeerUidFromProc(const sockaddr_storage& self,
                                           const sockaddr_storage& peer) {
  std::optional<Endpoint> client = FromSockaddr(peer);
  std::optional<Endpoint> server = FromSockaddr(self);
  if (!client.has_value() || !server.has_value()) return std::nullopt;
  // The client's socket: its local end is our peer, its remote end us. An
  // IPv4 client may also have reached an IPv6 listener (mapped addresses),
  // so IPv4 connections are looked up in both files.
  if (IsMappedV4(*client)) {
    if (auto uid = FindUid(ReadProcFile("/proc/net/tcp"), *client, *server)) {
      return uid;
    }
  }
  return FindUid(ReadProcFile("/proc/net/tcp6"), *client, *server);
}

}  // namespace inspector::net
