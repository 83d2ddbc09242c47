#include "server/transport/curl_api.h"

#include <dlfcn.h>

#include <string>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "common/dl_symbol.h"
#include "common/errors.h"

namespace inspector::transport::http_internal {
namespace {

// The names Debian and others give libcurl's runtime library, in order of
// preference: the OpenSSL build (whose headers the project compiles
// against), then the GnuTLS one, which has the same ABI.
constexpr const char* kLibraryNames[] = {"libcurl.so.4",
                                         "libcurl-gnutls.so.4"};

struct Loaded {
  CurlApi api{};
  absl::Status status;
};

void Load(Loaded* loaded) {
  void* library = nullptr;
  std::string errors;
  for (const char* name : kLibraryNames) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
    const char* reason = dlerror();
    absl::StrAppend(&errors, errors.empty() ? "" : "; ",
                    reason != nullptr ? reason : name);
  }
  if (library == nullptr) {
    loaded->status = Error(
        v1::TRANSPORT_ERROR,
        absl::StrCat("HTTP transports need libcurl, which could not be "
                     "loaded (install the libcurl4 package): ",
                     errors));
    return;
  }
  CurlApi& api = loaded->api;
  std::string missing;
  bool ok = true;
#define INSPECTOR_RESOLVE_CURL(name) \
  ok &= ResolveSymbol(library, "curl_" #name, &api.name, &missing);
  INSPECTOR_CURL_FUNCTIONS(INSPECTOR_RESOLVE_CURL)
#undef INSPECTOR_RESOLVE_CURL
  if (!ok) {
    loaded->status =
        Error(v1::TRANSPORT_ERROR,
              absl::StrCat("the libcurl found is too old for the HTTP "
                           "transports (7.68 or newer is needed); it lacks ",
                           missing));
    return;
  }
  const CURLcode init = api.global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) {
    loaded->status = Error(
        v1::TRANSPORT_ERROR,
        absl::StrCat("curl_global_init failed: ", api.easy_strerror(init)));
  }
}

absl::once_flag load_once;
Loaded* loaded = nullptr;

}  // namespace

absl::StatusOr<const CurlApi*> LoadCurl() {
  absl::call_once(load_once, [] {
    loaded = new Loaded();  // never freed: the library stays loaded
    Load(loaded);
  });
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

}  // namespace inspector::transport::http_internal
