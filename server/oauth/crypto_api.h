// libcrypto (OpenSSL 3), loaded when the first client assertion is signed
// or private key read rather than when the daemon starts: an idle daemon
// (or one whose servers never use private_key_jwt) does not carry it, as
// with libcurl (server/transport/curl_api.h). The headers come from
// OpenSSL's development package, so the signatures are checked at compile
// time.
//
// Thread-safe: the first caller loads the library, later ones wait for it.
// The library stays loaded for the life of the process.
#ifndef INSPECTOR_SERVER_OAUTH_CRYPTO_API_H_
#define INSPECTOR_SERVER_OAUTH_CRYPTO_API_H_

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "absl/status/statusor.h"

namespace inspector::oauth {

// The libcrypto functions jwt_assertion.cc (signing) and
// server/auth/jwks.cc and jwt_access_token.cc (verifying) use, by their own
// names. Adding one here adds its field and its lookup.
#define INSPECTOR_CRYPTO_FUNCTIONS(X)                                       \
  X(BIO_new_mem_buf) X(BIO_free) X(PEM_read_bio_PrivateKey)                \
  X(ERR_clear_error) X(EVP_PKEY_free) X(EVP_PKEY_get_base_id)              \
  X(EVP_PKEY_get_bits) X(EVP_sha256) X(EVP_sha384) X(EVP_sha512)           \
  X(EVP_MD_CTX_new) X(EVP_MD_CTX_free) X(EVP_DigestSignInit)               \
  X(EVP_DigestSign) X(EVP_PKEY_CTX_set_rsa_padding)                        \
  X(EVP_PKEY_CTX_set_rsa_pss_saltlen) X(d2i_ECDSA_SIG) X(ECDSA_SIG_free)   \
  X(ECDSA_SIG_get0) X(BN_bn2binpad) X(BN_bin2bn) X(BN_free)               \
  X(ECDSA_SIG_new) X(ECDSA_SIG_set0) X(i2d_ECDSA_SIG)                      \
  X(EVP_DigestVerifyInit) X(EVP_DigestVerify)                              \
  X(EVP_PKEY_CTX_new_from_name) X(EVP_PKEY_CTX_free)                       \
  X(EVP_PKEY_fromdata_init) X(EVP_PKEY_fromdata)                           \
  X(EVP_PKEY_new_raw_public_key) X(OSSL_PARAM_BLD_new)                     \
  X(OSSL_PARAM_BLD_free) X(OSSL_PARAM_BLD_push_BN)                         \
  X(OSSL_PARAM_BLD_push_utf8_string) X(OSSL_PARAM_BLD_push_octet_string)   \
  X(OSSL_PARAM_BLD_to_param) X(OSSL_PARAM_free)

struct CryptoApi {
#define INSPECTOR_CRYPTO_FIELD(name) decltype(&::name) name;
  INSPECTOR_CRYPTO_FUNCTIONS(INSPECTOR_CRYPTO_FIELD)
#undef INSPECTOR_CRYPTO_FIELD
};

// Loads libcrypto.so.3. FAILED_PRECONDITION naming the library and
// dlerror()'s reason when it cannot be loaded or lacks a function.
absl::StatusOr<const CryptoApi*> LoadCrypto();

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_CRYPTO_API_H_
