// UnusedLoopbackPort: a TCP port on 127.0.0.1 where nothing listens (bound
// to port 0, read back, closed), for tests that need a connection to be
// refused. Another process could take the port in between; on a test
// machine that is rare enough not to matter.
//
// Header-only (it reports failures through gtest, which every test links).
// Any thread.
#ifndef INSPECTOR_TESTS_TESTING_UNUSED_PORT_H_
#define INSPECTOR_TESTS_TESTING_UNUSED_PORT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace inspector::testing {

inline int UnusedLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_UNUSED_PORT_H_
