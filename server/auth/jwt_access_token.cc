#include "server/auth/jwt_access_token.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/oauth/crypto_api.h"

namespace inspector::auth {
namespace {

using Json = nlohmann::json;
using oauth::CryptoApi;

constexpr size_t kMaxTokenBytes = 16 * 1024;
constexpr size_t kEs256SignatureBytes = 64;

TokenVerdict Refuse(TokenVerdict verdict, TokenProblem problem,
                    std::string detail) {
  verdict.problem = problem;
  verdict.detail = std::move(detail);
  return verdict;
}

// base64url without padding (RFC 7515 section 2), then JSON object.
bool DecodePart(std::string_view part, std::string* out) {
  if (part.empty() || part.find('=') != std::string_view::npos) return false;
  return absl::WebSafeBase64Unescape(AbslView(part), out);
}

bool DecodeObject(std::string_view part, Json* out) {
  std::string text;
  if (!DecodePart(part, &text)) return false;
  *out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return out->is_object();
}

std::string StringClaim(const Json& claims, const char* name) {
  auto it = claims.find(name);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : "";
}

// A NumericDate claim (seconds since the epoch, possibly fractional).
bool TimeClaim(const Json& claims, const char* name, absl::Time* out) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return false;
  const double seconds = it->get<double>();
  if (!std::isfinite(seconds)) return false;
  *out = absl::FromUnixMicros(static_cast<int64_t>(seconds * 1e6));
  return true;
}

bool TypeAccepted(std::string typ, bool accept_plain_jwt) {
  absl::AsciiStrToLower(&typ);
  if (typ == "at+jwt" || typ == "application/at+jwt") return true;
  return accept_plain_jwt && (typ == "jwt" || typ == "application/jwt");
}

bool AudienceContains(const Json& claims, const std::string& resource) {
  auto it = claims.find("aud");
  if (it == claims.end()) return false;
  if (it->is_string()) return it->get<std::string>() == resource;
  if (!it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const Json& aud) {
    return aud.is_string() && aud.get<std::string>() == resource;
  });
}

// The resource, or one of the rules' audiences when they name some.
bool AudienceAccepted(const Json& claims, const TokenRules& rules) {
  if (rules.audiences.empty()) return AudienceContains(claims, rules.resource);
  return std::any_of(
      rules.audiences.begin(), rules.audiences.end(),
      [&](const std::string& aud) { return AudienceContains(claims, aud); });
}

std::vector<std::string> Scopes(const Json& claims) {
  std::vector<std::string> scopes;
  for (const char* name : {"scope", "scp"}) {
    auto it = claims.find(name);
    if (it == claims.end()) continue;
    if (it->is_string()) {
      for (absl::string_view s :
           absl::StrSplit(it->get<std::string>(), ' ', absl::SkipEmpty())) {
        scopes.emplace_back(s);
      }
    } else if (it->is_array()) {
      for (const Json& s : *it) {
        if (s.is_string()) scopes.push_back(s.get<std::string>());
      }
    }
    break;
  }
  return scopes;
}

// JWS ES256 signatures are r || s (RFC 7518 section 3.4); libcrypto takes
// the DER ECDSA-Sig-Value. Empty when the conversion fails.
std::string Es256Der(const CryptoApi& c, const std::string& raw) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  ECDSA_SIG* sig = c.ECDSA_SIG_new();
  if (sig == nullptr) return "";
  BIGNUM* r = c.BN_bin2bn(bytes, 32, nullptr);
  BIGNUM* s = c.BN_bin2bn(bytes + 32, 32, nullptr);
  std::string der;
  if (r != nullptr && s != nullptr && c.ECDSA_SIG_set0(sig, r, s) == 1) {
    r = s = nullptr;  // owned by sig now
    const int size = c.i2d_ECDSA_SIG(sig, nullptr);
    if (size > 0) {
      der.resize(static_cast<size_t>(size));
      auto* out = reinterpret_cast<unsigned char*>(der.data());
      if (c.i2d_ECDSA_SIG(sig, &out) != size) der.clear();
    }
  }
  if (r != nullptr) c.BN_free(r);
  if (s != nullptr) c.BN_free(s);
  c.ECDSA_SIG_free(sig);
  return der;
}

bool SignatureVerifies(const CryptoApi& c, const JsonWebKey& key,
                       JwsAlgorithm alg, std::string_view signing_input,
                       const std::string& signature) {
  std::string der;
  const std::string* sig = &signature;
  if (alg == JwsAlgorithm::kES256) {
    if (signature.size() != kEs256SignatureBytes) return false;
    der = Es256Der(c, signature);
    if (der.empty()) return false;
    sig = &der;
  }
  EVP_MD_CTX* ctx = c.EVP_MD_CTX_new();
  if (ctx == nullptr) return false;
  EVP_PKEY_CTX* pctx = nullptr;
  const EVP_MD* md = alg == JwsAlgorithm::kEdDSA ? nullptr : c.EVP_sha256();
  bool ok = c.EVP_DigestVerifyInit(ctx, &pctx, md, nullptr, key.key.get()) == 1;
  if (ok && alg == JwsAlgorithm::kPS256) {
    ok = c.EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
         c.EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1;
  }
  ok = ok && c.EVP_DigestVerify(
                 ctx, reinterpret_cast<const unsigned char*>(sig->data()),
                 sig->size(),
                 reinterpret_cast<const unsigned char*>(signing_input.data()),
                 signing_input.size()) == 1;
  c.EVP_MD_CTX_free(ctx);
  c.ERR_clear_error();
  return ok;
}

}  // namespace

std::string_view TokenProblemName(TokenProblem problem) {
  switch (problem) {
    case TokenProblem::kNone:
      return "";
    case TokenProblem::kMalformed:
      return "malformed";
    case TokenProblem::kType:
      return "type";
    case TokenProblem::kAlgorithm:
      return "algorithm";
    case TokenProblem::kIssuer:
      return "issuer";
    case TokenProblem::kUnknownKey:
      return "unknown_key";
    case TokenProblem::kSignature:
      return "signature";
    case TokenProblem::kAudience:
      return "audience";
    case TokenProblem::kExpired:
      return "expired";
    case TokenProblem::kNotYetValid:
      return "not_yet_valid";
    case TokenProblem::kSubject:
      return "subject";
    case TokenProblem::kInactive:
      return "inactive";
    case TokenProblem::kUnverifiable:
      return "unverifiable";
  }
  return "";
}

TokenVerdict VerifyJwtAccessToken(std::string_view token,
                                  const TokenRules& rules,
                                  const KeyLookup& keys, absl::Time now) {
  TokenVerdict verdict;
  if (token.size() > kMaxTokenBytes) {
    return Refuse(
        std::move(verdict), TokenProblem::kMalformed,
        absl::StrCat("the token is longer than ", kMaxTokenBytes, " bytes"));
  }
  std::vector<std::string_view> parts;
  for (absl::string_view part : absl::StrSplit(AbslView(token), '.')) {
    parts.push_back(StdView(part));
  }
  Json header;
  Json claims;
  std::string signature;
  if (parts.size() != 3 || !DecodeObject(parts[0], &header) ||
      !DecodeObject(parts[1], &claims) || !DecodePart(parts[2], &signature)) {
    return Refuse(std::move(verdict), TokenProblem::kMalformed,
                  "the token is not a signed JWT (three base64url parts: a "
                  "JSON header, JSON claims and a signature)");
  }
  verdict.kid = StringClaim(header, "kid");
  JwsAlgorithm alg;
  const std::string alg_name = StringClaim(header, "alg");
  if (!ParseJwsAlgorithm(alg_name, &alg)) {
    return Refuse(std::move(verdict), TokenProblem::kAlgorithm,
                  absl::StrCat("the token is signed with \"", alg_name,
                               "\"; accepted: RS256, PS256, ES256, EdDSA"));
  }
  if (header.contains("crit")) {
    return Refuse(std::move(verdict), TokenProblem::kAlgorithm,
                  "the token's header has critical extensions (crit), which "
                  "are not supported");
  }
  if (!TypeAccepted(StringClaim(header, "typ"), rules.accept_plain_jwt_type)) {
    return Refuse(
        std::move(verdict), TokenProblem::kType,
        absl::StrCat("the token's typ is \"", StringClaim(header, "typ"),
                     "\", not \"at+jwt\" (RFC 9068)"));
  }
  verdict.issuer = StringClaim(claims, "iss");
  if (std::find(rules.issuers.begin(), rules.issuers.end(), verdict.issuer) ==
      rules.issuers.end()) {
    return Refuse(std::move(verdict), TokenProblem::kIssuer,
                  absl::StrCat("the token's issuer \"", verdict.issuer,
                               "\" is not trusted here"));
  }
  absl::StatusOr<const CryptoApi*> api = oauth::LoadCrypto();
  if (!api.ok()) {
    return Refuse(std::move(verdict), TokenProblem::kSignature,
                  std::string(api.status().message()));
  }
  const std::vector<JsonWebKey>* issuer_keys =
      keys ? keys(verdict.issuer) : nullptr;
  bool candidate = false;
  bool verified = false;
  if (issuer_keys != nullptr) {
    const std::string_view signing_input(token.data(),
                                         parts[0].size() + 1 + parts[1].size());
    for (const JsonWebKey& key : *issuer_keys) {
      if (!verdict.kid.empty() && key.kid != verdict.kid) continue;
      if (!key.Suits(alg)) continue;
      candidate = true;
      if (SignatureVerifies(**api, key, alg, signing_input, signature)) {
        verified = true;
        break;
      }
    }
  }
  if (!candidate) {
    return Refuse(
        std::move(verdict), TokenProblem::kUnknownKey,
        absl::StrCat("no ", alg_name, " key",
                     verdict.kid.empty()
                         ? std::string()
                         : absl::StrCat(" with kid \"", verdict.kid, "\""),
                     " is known for issuer ", verdict.issuer));
  }
  if (!verified) {
    return Refuse(std::move(verdict), TokenProblem::kSignature,
                  "the token's signature does not verify");
  }
  TokenVerdict checked = CheckAccessTokenClaims(claims, rules, now);
  checked.kid = std::move(verdict.kid);
  return checked;
}

TokenVerdict CheckAccessTokenClaims(const Json& claims,
                                    const TokenRules& rules, absl::Time now) {
  TokenVerdict verdict;
  verdict.issuer = StringClaim(claims, "iss");
  if (!AudienceAccepted(claims, rules)) {
    return Refuse(std::move(verdict), TokenProblem::kAudience,
                  absl::StrCat("the token is not for ",
                               rules.audiences.empty()
                                   ? rules.resource
                                   : absl::StrJoin(rules.audiences, " or "),
                               " (its aud does not name it)"));
  }
  absl::Time exp;
  if (!TimeClaim(claims, "exp", &exp)) {
    return Refuse(std::move(verdict), TokenProblem::kExpired,
                  "the token has no exp");
  }
  if (now >= exp + rules.skew) {
    return Refuse(std::move(verdict), TokenProblem::kExpired,
                  "the token has expired");
  }
  absl::Time not_before;
  if (TimeClaim(claims, "nbf", &not_before) && now + rules.skew < not_before) {
    return Refuse(std::move(verdict), TokenProblem::kNotYetValid,
                  "the token is not valid yet (nbf)");
  }
  absl::Time issued;
  if (TimeClaim(claims, "iat", &issued) && now + rules.skew < issued) {
    return Refuse(std::move(verdict), TokenProblem::kNotYetValid,
                  "the token was issued in the future (iat)");
  }
  TokenCaller& caller = verdict.caller;
  caller.subject = StringClaim(claims, "sub");
  if (caller.subject.empty()) {
    return Refuse(std::move(verdict), TokenProblem::kSubject,
                  "the token names no subject (sub)");
  }
  caller.issuer = verdict.issuer;
  caller.client_id = StringClaim(claims, "client_id");
  if (caller.client_id.empty()) caller.client_id = StringClaim(claims, "azp");
  caller.scopes = Scopes(claims);
  caller.expires_at = exp;
  for (const auto& [name, value] : claims.items()) {
    if (value.is_string()) {
      caller.claims[name].push_back(value.get<std::string>());
    } else if (value.is_array()) {
      std::vector<std::string> items;
      for (const Json& item : value) {
        if (item.is_string()) items.push_back(item.get<std::string>());
      }
      if (!items.empty()) caller.claims[name] = std::move(items);
    }
  }
  return verdict;
}

}  // namespace inspector::auth
