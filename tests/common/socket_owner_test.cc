// Tests of the TCP socket owner lookup (common/net/socket_owner.h): the
// parsing of /proc/net/tcp and tcp6 text, and a live loopback connection.
#include "common/net/socket_owner.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace inspector::net {
namespace {

sockaddr_storage V4(const char* address, uint16_t port) {
  sockaddr_storage out{};
  auto* in = reinterpret_cast<sockaddr_in*>(&out);
  in->sin_family = AF_INET;
  in->sin_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET, address, &in->sin_addr), 1);
  return out;
}

sockaddr_storage V6(const char* address, uint16_t port) {
  sockaddr_storage out{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET6, address, &in6->sin6_addr), 1);
  return out;
}

// /proc/net/tcp as a little-endian machine prints it (addresses are 32-bit
// words in host order): a listener on 127.0.0.1:8080, the daemon's end of
// a connection from port 54210 (uid 1000), the client's end (uid 65534),
// a client end of uid 0 whose process has closed it (FIN_WAIT1, inode 0),
// and another established socket of uid 42 on 127.0.0.2.
constexpr char kProcTcp[] =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "
    "retrnsmt   uid  timeout inode\n"
    "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 "
    "00000000  1000        0 40001 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:1F90 0100007F:D3C2 01 00000000:00000000 00:00000000 "
    "00000000  1000        0 40002 1 0000000000000000 20 4 30 10 -1\n"
    "   2: 0100007F:D3C2 0100007F:1F90 01 00000000:00000000 00:00000000 "
    "00000000 65534        0 40003 1 0000000000000000 20 4 30 10 -1\n"
    "   3: 0100007F:D3C3 0100007F:1F90 04 00000000:00000000 01:00000014 "
    "00000000     0        0 0 3 0000000000000000 20 4 30 10 -1\n"
    "   4: 0200007F:D3C4 0100007F:1F90 01 00000000:00000000 00:00000000 "
    "00000000    42        0 40005 1 0000000000000000 20 4 30 10 -1\n";

// /proc/net/tcp6 of the same machine: a client on [::1]:40000 (uid 1001)
// connected to [::1]:8080, and one on ::ffff:127.0.0.1:40001 (uid 1002).
constexpr char kProcTcp6[] =
    "  sl  local_address                         remote_address        "
    "                st tx_queue rx_queue tr tm->when retrnsmt   uid  "
    "timeout inode\n"
    "   0: 00000000000000000000000001000000:9C40 "
    "00000000000000000000000001000000:1F90 01 00000000:00000000 "
    "00:00000000 00000000  1001        0 50001 1 0000000000000000 20 4 30 "
    "10 -1\n"
    "   1: 0000000000000000FFFF00000100007F:9C41 "
    "0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 "
    "00:00000000 00000000  1002        0 50002 1 0000000000000000 20 4 30 "
    "10 -1\n";

bool LittleEndian() {
  const uint16_t one = 1;
  uint8_t first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

TEST(SocketOwnerTest, FindsTheClientsEndOfAnIpv4Connection) {
  if (!LittleEndian()) GTEST_SKIP() << "the fixture is little-endian text";
  // The client's socket: local = the server's peer, remote = the server.
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 54210), V4("127.0.0.1", 8080)),
      65534u);
  // The other direction is the server's own end.
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 8080), V4("127.0.0.1", 54210)),
      1000u);
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.2", 54212), V4("127.0.0.1", 8080)),
      42u);
}

TEST(SocketOwnerTest, MatchesAddressAndPortOfBothEnds) {
  if (!LittleEndian()) GTEST_SKIP() << "the fixture is little-endian text";
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 54210), V4("127.0.0.1", 8081)),
      std::nullopt);
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 54211), V4("127.0.0.1", 8080)),
      std::nullopt);
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.3", 54210), V4("127.0.0.1", 8080)),
      std::nullopt);
  // The listener (remote 0.0.0.0:0) is nobody's client.
  EXPECT_EQ(FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 8080), V4("0.0.0.0", 0)),
            std::nullopt);
}

TEST(SocketOwnerTest, AClosedSocketVouchesForNobody) {
  if (!LittleEndian()) GTEST_SKIP() << "the fixture is little-endian text";
  // Listed as uid 0 while it winds down: must not pass for root.
  EXPECT_EQ(
      FindTcpSocketUid(kProcTcp, V4("127.0.0.1", 54211), V4("127.0.0.1", 8080)),
      std::nullopt);
}

TEST(SocketOwnerTest, ReadsIpv6AndMappedAddresses) {
  if (!LittleEndian()) GTEST_SKIP() << "the fixture is little-endian text";
  EXPECT_EQ(FindTcpSocketUid(kProcTcp6, V6("::1", 40000), V6("::1", 8080)),
            1001u);
  // A mapped address in tcp6 matches its IPv4 form and its mapped form.
  EXPECT_EQ(FindTcpSocketUid(kProcTcp6, V4("127.0.0.1", 40001),
                             V4("127.0.0.1", 8080)),
            1002u);
  EXPECT_EQ(FindTcpSocketUid(kProcTcp6, V6("::ffff:127.0.0.1", 40001),
                             V6("::ffff:127.0.0.1", 8080)),
            1002u);
  // And an IPv4 line matches the mapped form.
  EXPECT_EQ(FindTcpSocketUid(kProcTcp, V6("::ffff:127.0.0.1", 54210),
                             V6("::ffff:127.0.0.1", 8080)),
            65534u);
  EXPECT_EQ(FindTcpSocketUid(kProcTcp6, V6("::2", 40000), V6("::1", 8080)),
            std::nullopt);
}

TEST(SocketOwnerTest, ToleratesGarbage) {
  EXPECT_EQ(FindTcpSocketUid("", V4("127.0.0.1", 1), V4("127.0.0.1", 2)),
            std::nullopt);
  EXPECT_EQ(FindTcpSocketUid("   0: zz:1 yy:2 01 a b c x 0 9\nshort line\n",
                             V4("127.0.0.1", 1), V4("127.0.0.1", 2)),
            std::nullopt);
}

// A real connection on 127.0.0.1: the accepting side finds its client's
// owner, this process's user.
TEST(SocketOwnerTest, FindsThisProcessAsTheOwnerOfALiveClient) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_storage bound = V4("127.0.0.1", 0);
  ASSERT_EQ(
      bind(listener, reinterpret_cast<sockaddr*>(&bound), sizeof(sockaddr_in)),
      0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t length = sizeof(bound);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length),
            0);
  int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(
      connect(client, reinterpret_cast<sockaddr*>(&bound), sizeof(sockaddr_in)),
      0);
  sockaddr_storage peer{};
  length = sizeof(peer);
  int accepted = accept(listener, reinterpret_cast<sockaddr*>(&peer), &length);
  ASSERT_GE(accepted, 0);
  sockaddr_storage self{};
  length = sizeof(self);
  ASSERT_EQ(getsockname(accepted, reinterpret_cast<sockaddr*>(&self), &length),
            0);
  EXPECT_EQ(TcpPeerUid(self, peer), geteuid());
  EXPECT_EQ(TcpPeerUidFromProc(self, peer), geteuid());
  // Once the client has closed its end, nobody vouches for it.
  close(client);
  EXPECT_EQ(TcpPeerUid(self, peer), std::nullopt);
  EXPECT_EQ(TcpPeerUidFromProc(self, peer), std::nullopt);
  close(accepted);
  close(listener);
}

}  // namespace
}  // namespace inspector::net
