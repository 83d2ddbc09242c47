#include "server/oauth/crypto_api.h"

#include <dlfcn.h>

#include <string>

#include "absl/base/call_once.h"
#include "absl/strings/str_cat.h"
#include "common/dl_symbol.h"
#include "common/errors.h"

namespace inspector::oauth {
namespace {

struct Loaded {
  CryptoApi api{};
  absl::Status status;
};

void Load(Loaded* loaded) {
  void* library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    loaded->status = Error(
        v1::FAILED_PRECONDITION,
        absl::StrCat("JWT signatures (private_key_jwt client assertions, "
                     "front-door access tokens) need OpenSSL's libcrypto 3, "
                     "which could not be loaded (install the libssl3 "
                     "package): ",
                     reason != nullptr ? reason : "libcrypto.so.3"));
    return;
  }
  std::string missing;
  bool ok = true;
#define INSPECTOR_RESOLVE_CRYPTO(name) \
  ok &= ResolveSymbol(library, #name, &loaded->api.name, &missing);
  INSPECTOR_CRYPTO_FUNCTIONS(INSPECTOR_RESOLVE_CRYPTO)
#undef INSPECTOR_RESOLVE_CRYPTO
  if (!ok) {
    loaded->status = Error(
        v1::FAILED_PRECONDITION,
        absl::StrCat("the libcrypto found lacks ", missing,
                     " (OpenSSL 3.0 or newer is needed)"));
  }
}

absl::once_flag load_once;
Loaded* loaded = nullptr;

}  // namespace

absl::StatusOr<const CryptoApi*> LoadCrypto() {
  absl::call_once(load_once, [] {
    loaded = new Loaded;
    Load(loaded);
  });
  if (!loaded->status.ok()) return loaded->status;
  return &loaded->api;
}

}  // namespace inspector::oauth
