// The doctor's network checks: name resolution, the TCP connection and the
// TLS certificate (doctor_run.h).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/transport/http_client.h"
#include "server/doctor/doctor_run.h"

namespace inspector::doctor {
namespace {

// The address of a socket address, without the port ("127.0.0.1", "::1").
std::string AddressText(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr,
              text, sizeof(text));
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr,
              text, sizeof(text));
  }
  return text;
}

bool IsTlsCurlCode(int code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

}  // namespace

// Loopback, private (RFC 1918, unique local), link-local or unspecified.
bool IsLocalAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    uint32_t a =
        ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr);
    return (a >> 24) == 127 || (a >> 24) == 10 || (a >> 24) == 0 ||
           (a >> 20) == (172u << 4 | 1) || (a >> 16) == (192u << 8 | 168) ||
           (a >> 16) == (169u << 8 | 254) || (a >> 22) == (100u << 2 | 1);
  }
  if (addr->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) ||
        IN6_IS_ADDR_LINKLOCAL(&a) || (a.s6_addr[0] & 0xfe) == 0xfc) {
      return true;
    }
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      sockaddr_in v4{};
      v4.sin_family = AF_INET;
      std::memcpy(&v4.sin_addr, &a.s6_addr[12], 4);
      return IsLocalAddress(reinterpret_cast<const sockaddr*>(&v4));
    }
  }
  return false;
}

// The origin of an http(s) URL ("https://host:port"), "" if not one.
std::string OriginOf(const config::HttpUrl& url) {
  std::string host = url.ipv6 ? absl::StrCat("[", url.host, "]") : url.host;
  return url.port > 0 ? absl::StrCat(url.scheme, "://", host, ":", url.port)
                      : absl::StrCat(url.scheme, "://", host);
}

// The path of a URL without query and fragment; "" for "/".
std::string PathOf(const config::HttpUrl& url) {
  std::string path = url.path.substr(0, url.path.find_first_of("?#"));
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

int PortOf(const config::HttpUrl& url) {
  if (url.port > 0) return url.port;
  return url.scheme == "https" ? 443 : 80;
}

// --- HTTP -------------------------------------------------------------------

std::optional<Resolved> DoctorRun::Impl::Resolve(const std::string& host,
                                                 int port) {
  struct Lookup {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    Resolved resolved ABSL_GUARDED_BY(mu);
  };
  auto lookup = std::make_shared<Lookup>();
  // getaddrinfo cannot be interrupted: it runs on a thread of its own that
  // is left behind if it outlasts the run.
  std::thread([lookup, host, port = std::to_string(port)] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    Resolved resolved;
    resolved.gai_error = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
      sockaddr_storage storage{};
      std::memcpy(&storage, ai->ai_addr, ai->ai_addrlen);
      resolved.addresses.push_back(storage);
      resolved.lengths.push_back(ai->ai_addrlen);
    }
    if (list != nullptr) freeaddrinfo(list);
    absl::MutexLock lock(&lookup->mu);
    lookup->resolved = std::move(resolved);
    lookup->done = true;
  }).detach();
  bool done = false;
  while (!done && !Over()) {
    absl::MutexLock lock(&lookup->mu);
    done = lookup->mu.AwaitWithTimeout(absl::Condition(&lookup->done),
                                       std::min(kPollSlice, Left()));
  }
  if (!done) return std::nullopt;
  absl::MutexLock lock(&lookup->mu);
  return lookup->resolved;
}

void DoctorRun::Impl::CheckDns() {
  v1::DoctorCheck* check = Next("dns", "Name resolution");
  if (check == nullptr) return;
  const std::string host = url_->host;
  std::optional<Resolved> resolved = Resolve(host, PortOf(*url_));
  if (!resolved.has_value()) {
    if (!FailIfOver(check)) {
      Fail(check, "the lookup did not finish", "", "CONNECTION_TIMEOUT");
    }
    Stop("not run: the host name did not resolve");
    return;
  }
  resolved_ = *std::move(resolved);
  if (resolved_.gai_error != 0 || resolved_.addresses.empty()) {
    Fail(check,
         absl::StrCat("cannot resolve ", host, ": ",
                      resolved_.gai_error != 0
                          ? gai_strerror(resolved_.gai_error)
                          : "no address"),
         absl::StrCat("check the host name in the URL (",
                      UpdateHint("--url URL"),
                      "), and that the daemon's machine can resolve names"),
         "TRANSPORT_ERROR");
    Stop("not run: the host name did not resolve");
    return;
  }
  std::vector<std::string> addresses;
  for (const sockaddr_storage& a : resolved_.addresses) {
    std::string text = AddressText(reinterpret_cast<const sockaddr*>(&a));
    if (std::find(addresses.begin(), addresses.end(), text) ==
        addresses.end()) {
      addresses.push_back(text);
    }
  }
  in6_addr ignored6;
  in_addr ignored4;
  bool literal = inet_pton(AF_INET, host.c_str(), &ignored4) == 1 ||
                 inet_pton(AF_INET6, host.c_str(), &ignored6) == 1;
  Pass(check, literal
                  ? absl::StrCat(host, " is an IP address")
                  : absl::StrCat(host, " is ", absl::StrJoin(addresses, ", ")));
}

void DoctorRun::Impl::CheckTcp() {
  v1::DoctorCheck* check = Next("tcp", "TCP connection");
  if (check == nullptr) return;
  const int port = PortOf(*url_);
  absl::Duration connect_limit =
      config_.timeouts().connection() > 0
          ? absl::Milliseconds(config_.timeouts().connection())
          : absl::Seconds(30);
  int last_error = 0;
  bool timed_out = false;
  for (size_t i = 0; i < resolved_.addresses.size(); ++i) {
    const sockaddr* addr =
        reinterpret_cast<const sockaddr*>(&resolved_.addresses[i]);
    std::string where = addr->sa_family == AF_INET6
                            ? absl::StrCat("[", AddressText(addr), "]:", port)
                            : absl::StrCat(AddressText(addr), ":", port);
    absl::Time began = clock_->Now();
    int fd =
        socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    int error = 0;
    if (connect(fd, addr, resolved_.lengths[i]) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        absl::Time until = std::min(began + connect_limit, deadline_);
        error = ETIMEDOUT;
        while (!cancelled() && clock_->Now() < until) {
          pollfd p{fd, POLLOUT, 0};
          int wait = static_cast<int>(absl::ToInt64Milliseconds(
              std::min(kPollSlice, until - clock_->Now())));
          int ready = poll(&p, 1, std::max(wait, 1));
          if (ready > 0) {
            socklen_t len = sizeof(error);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
            break;
          }
        }
      }
    }
    close(fd);
    std::string took = FormatMs(clock_->Now() - began);
    if (error == 0) {
      Pass(check, absl::StrCat("connected to ", where, " in ", took));
      return;
    }
    if (error == ETIMEDOUT) timed_out = true;
    last_error = error;
    check->add_details(
        absl::StrCat(where, ": ", std::strerror(error), " (", took, ")"));
    if (Over()) break;
  }
  Stop("not run: no TCP connection");
  if (FailIfOver(check)) return;
  std::string target = absl::StrCat(url_->host, " port ", port);
  if (last_error == ECONNREFUSED) {
    Fail(check,
         absl::StrCat("connection refused by ", target,
                      ": nothing listens there"),
         absl::StrCat("start the server, or correct the port in the URL (",
                      UpdateHint("--url URL"), ")"),
         "CONNECTION_REFUSED");
  } else if (timed_out) {
    Fail(check,
         absl::StrCat("no answer from ", target, " within ",
                      absl::FormatDuration(connect_limit)),
         "check that the host is up and that no firewall drops the "
         "connection (or raise timeouts.connection)",
         "CONNECTION_TIMEOUT");
  } else {
    Fail(check,
         absl::StrCat("cannot connect to ", target, ": ",
                      std::strerror(last_error)),
         "check the host and port in the URL and the network route to it",
         "CONNECTION_REFUSED");
  }
}

void DoctorRun::Impl::CheckTls() {
  v1::DoctorCheck* check = Next("tls", "TLS certificate");
  if (check == nullptr) return;
  if (url_->scheme != "https") {
    if (net::IsLoopbackHost(url_->host)) {
      Skip(check, "plain http on loopback: no TLS");
    } else {
      Warn(check,
           absl::StrCat("plain http to ", url_->host,
                        ": requests, headers and tokens travel unencrypted"),
           "use an https URL if the server offers one");
    }
    return;
  }
  // Any request will do: the handshake is done once the head arrives.
  HttpRequest request = BaseRequest("GET", config_.url());
  request.headers.emplace_back("Accept", "text/event-stream");
  Probe probe =
      Fetch(std::move(request), [](const Probe& p) { return p.got_head; });
  if (probe.status.ok() || probe.got_head) {
    Pass(check, absl::StrCat("the certificate of ", url_->host,
                             " verifies (system CA store, host name)"));
    return;
  }
  if (FailIfOver(check)) {
    Stop("not run: the TLS handshake did not finish");
    return;
  }
  auto details = GetErrorDetails(probe.status);
  int curl_code = 0;
  if (auto it = details.find("curlCode"); it != details.end()) {
    curl_code = std::atoi(it->second.c_str());
  }
  std::string message(probe.status.message());
  // TransferError's message ends with libcurl's own words.
  size_t colon = message.find("failed: ");
  std::string why =
      colon == std::string::npos ? message : message.substr(colon + 8);
  Stop("not run: the TLS connection failed");
  if (!IsTlsCurlCode(curl_code)) {
    Fail(check, absl::StrCat("no TLS connection: ", why),
         "check that the server speaks https on this port",
         ErrorReason(probe.status));
    return;
  }
  std::string lower = absl::AsciiStrToLower(why);
  std::string fix;
  if (absl::StrContains(lower, "self-signed") ||
      absl::StrContains(lower, "self signed")) {
    fix =
        "the certificate is self-signed: give the server a certificate from "
        "a CA this machine trusts, or add its CA to the system store "
        "(/usr/local/share/ca-certificates, then update-ca-certificates); "
        "inspectord never skips verification";
  } else if (absl::StrContains(lower, "expired")) {
    fix = "renew the server's certificate";
  } else if (absl::StrContains(lower, "subject name") ||
             absl::StrContains(lower, "does not match")) {
    fix = absl::StrCat(
        "use the host name the certificate was issued for "
        "in the URL, or a certificate that names ",
        url_->host);
  } else if (absl::StrContains(lower, "issuer") ||
             absl::StrContains(lower, "local issuer")) {
    fix =
        "the certificate's CA is not trusted here: add it to the system "
        "store (update-ca-certificates), or have the server send its "
        "full chain";
  } else {
    fix =
        "check the server's TLS setup (certificate, chain, protocol "
        "versions)";
  }
  Fail(check, absl::StrCat("certificate verification failed: ", why), fix,
       "TRANSPORT_ERROR");
}

}  // namespace inspector::doctor
