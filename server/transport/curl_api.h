// libcurl, loaded when the first HTTP transport needs it rather than when
// the daemon starts.
//
// libcurl and the libraries it brings (TLS, Kerberos, LDAP, SSH, IDN, ...)
// are about a quarter of an idle inspectord's memory, and a daemon that
// only speaks stdio never needs them. The HTTP transports call libcurl
// through the function table below, filled by dlopen()/dlsym() on first
// use; the headers still come from libcurl's development package, so the
// types and constants are checked at compile time.
//
// Thread-safe: the first caller loads the library, later ones wait for it.
// The library stays loaded for the life of the process.
#ifndef INSPECTOR_SERVER_TRANSPORT_CURL_API_H_
#define INSPECTOR_SERVER_TRANSPORT_CURL_API_H_

#include <curl/curl.h>

#include "absl/status/statusor.h"

namespace inspector::transport::http_internal {

// The libcurl functions the transports use, without their curl_ prefix.
// Adding one here adds its field and its lookup.
#define INSPECTOR_CURL_FUNCTIONS(X)                                        \
  X(global_init) X(free) X(easy_init) X(easy_setopt) X(easy_getinfo)      \
  X(easy_cleanup) X(easy_strerror) X(slist_append) X(slist_free_all)      \
  X(easy_perform)                                                         \
  X(multi_init) X(multi_cleanup) X(multi_add_handle)                      \
  X(multi_remove_handle) X(multi_perform) X(multi_poll) X(multi_wakeup)   \
  X(multi_info_read) X(url) X(url_cleanup) X(url_set) X(url_get)

// Those functions, with libcurl's own signatures: `easy_init` is
// curl_easy_init.
struct CurlApi {
#define INSPECTOR_CURL_FIELD(name) decltype(&::curl_##name) name;
  INSPECTOR_CURL_FUNCTIONS(INSPECTOR_CURL_FIELD)
#undef INSPECTOR_CURL_FIELD
};

// Loads libcurl (libcurl.so.4, else libcurl-gnutls.so.4) and runs
// curl_global_init once. TRANSPORT_ERROR naming the library and dlerror()'s
// reason when it cannot be loaded or lacks a function (libcurl older than
// 7.68, which added curl_multi_poll and curl_multi_wakeup).
absl::StatusOr<const CurlApi*> LoadCurl();

}  // namespace inspector::transport::http_internal

#endif  // INSPECTOR_SERVER_TRANSPORT_CURL_API_H_
