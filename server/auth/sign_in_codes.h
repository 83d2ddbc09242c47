// One-time codes that sign a browser into the web UI.
//
// inspectord logs a sign-in URL at start and `inspectorctl ui` asks for a
// fresh one; the gateway trades the code in that URL for the session token
// (kept in an HttpOnly cookie) so the token never appears in a URL. A code
// is 256 random bits, accepted once, and only until it expires. At most
// kMaxLive codes are kept: minting another forgets the oldest. Thread-safe.
#ifndef INSPECTOR_SERVER_AUTH_SIGN_IN_CODES_H_
#define INSPECTOR_SERVER_AUTH_SIGN_IN_CODES_H_

#include <deque>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace inspector::auth {

class SignInCodes {
 public:
  static constexpr size_t kMaxLive = 64;

  struct Code {
    std::string code;
    absl::Time expires_at;
  };

  // `clock` (which must outlive this) tells the time; `lifetime`: how
  // long a code stays valid.
  explicit SignInCodes(Clock* clock,
                       absl::Duration lifetime = absl::Minutes(15));

  // A new code. Fails only if the system's random source does.
  absl::StatusOr<Code> Mint();

  // True once for a live code minted here, then never again for it.
  // Compares in constant time per stored code.
  bool Redeem(std::string_view code);

 private:
  Clock* const clock_;
  const absl::Duration lifetime_;
  absl::Mutex mu_;
  std::deque<Code> live_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_SIGN_IN_CODES_H_
