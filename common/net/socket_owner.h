// Which user owns the other end of a TCP connection made on this machine.
//
// A server that accepts a connection on 127.0.0.1 knows its peer's address,
// not who is behind it: SO_PEERCRED works for Unix sockets only. On Linux
// the kernel lists every TCP socket of the network namespace with its
// owner's uid in /proc/net/tcp (IPv4) and /proc/net/tcp6 (IPv6). The
// client's socket is the one whose local address is the server's peer
// address and whose remote address is the server's own address, both with
// ports, so the pair names it exactly.
//
// Only an established socket with an inode (one a process still holds)
// counts: a socket its process has closed is listed as owned by root (uid
// 0) while it winds down, so it must never vouch for anybody. A peer on
// another host or in another network namespace is not listed: no owner.
//
// TcpPeerUid asks the kernel's socket diagnostics (NETLINK_SOCK_DIAG) for
// that one socket first: a hash lookup of some microseconds. Reading
// /proc/net/tcp walks every bucket of the established table instead, some
// milliseconds on a machine with a large one whatever the number of
// sockets; it is the fallback where netlink is not available.
//
// Thread-safe (no shared state). Never waits on the network.
#ifndef INSPECTOR_COMMON_NET_SOCKET_OWNER_H_
#define INSPECTOR_COMMON_NET_SOCKET_OWNER_H_

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace inspector::net {

// In `proc_text` (the text of /proc/net/tcp or /proc/net/tcp6, header line
// included), the uid of the established socket, held by a process, whose
// local address and port are `local` and whose remote address and port
// are `remote` (AF_INET or AF_INET6; IPv4 and IPv4-mapped IPv6 addresses
// match each other). nullopt when no line matches.
std::optional<uint32_t> FindTcpSocketUid(std::string_view proc_text,
                                         const sockaddr_storage& local,
                                         const sockaddr_storage& remote);

// The uid of the process owning the client's end of a connection this
// process accepted, `self` being the connection's local address
// (getsockname) and `peer` the client's (accept, getpeername). nullopt when
// the client is not a socket of this machine's network namespace, is
// closing, or procfs cannot be read.
std::optional<uint32_t> TcpPeerUid(const sockaddr_storage& self,
                                   const sockaddr_storage& peer);
// The same from /proc/net/tcp and tcp6 only (TcpPeerUid's fallback).
std::optional<uint32_t> TcpPeerUidFromProc(const sockaddr_storage& self,
                                           const sockaddr_storage& peer);

}  // namespace inspector::net

#endif  // INSPECTOR_COMMON_NET_SOCKET_OWNER_H_
