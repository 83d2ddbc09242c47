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

// The libcurl functions the transports use, with libcurl's own signatures.
struct CurlApi {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_free) free;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_perform) multi_perform;
  decltype(&::curl_multi_poll) multi_poll;
  decltype(&::curl_multi_wakeup) multi_wakeup;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_url) url;
  decltype(&::curl_url_cleanup) url_cleanup;
  decltype(&::curl_url_set) url_set;
  decltype(&::curl_url_get) url_get;
};

// Loads libcurl (libcurl.so.4, else libcurl-gnutls.so.4) and runs
// curl_global_init once. TRANSPORT_ERROR naming the library and dlerror()'s
// reason when it cannot be loaded or lacks a function (libcurl older than
// 7.68, which added curl_multi_poll and curl_multi_wakeup).
absl::StatusOr<const CurlApi*> LoadCurl();

// True once LoadCurl has succeeded in this process.
bool CurlLoaded();

}  // namespace inspector::transport::http_internal

#endif  // INSPECTOR_SERVER_TRANSPORT_CURL_API_H_
