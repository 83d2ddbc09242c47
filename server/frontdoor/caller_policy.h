// The decision of a server's front-door policy (config::FrontDoorPolicySpec,
// server/config/frontdoor_policy.h) on one caller's request: whether the
// caller may use the server, call a tool, or has run out of its rate
// limit; and which tools of a tools/list answer it may see. No I/O: the
// endpoint (mcp_endpoint.cc, Screen) applies what this decides.
//
// Rate limits are a token bucket per caller (issuer and subject) on the
// injected clock. Replacing the rules (a configuration reload) keeps the
// buckets, so that a reload neither resets nor ends anyone's allowance.
//
// Thread-safe: any thread may call any method. The clock must outlive the
// object.
#ifndef INSPECTOR_SERVER_FRONTDOOR_CALLER_POLICY_H_
#define INSPECTOR_SERVER_FRONTDOOR_CALLER_POLICY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/config/frontdoor_policy.h"
#include "server/frontdoor/caller_gate.h"

namespace inspector::frontdoor {

// The JSON-RPC error code of a denial (a server error of the
// implementation-defined range); data.reason says which.
inline constexpr int kPolicyErrorCode = -32003;

// The stable data.reason of each denial.
inline constexpr std::string_view kReasonCallerNotAllowed =
    "POLICY_CALLER_NOT_ALLOWED";
inline constexpr std::string_view kReasonToolDenied = "POLICY_TOOL_DENIED";
inline constexpr std::string_view kReasonScopeRequired =
    "POLICY_SCOPE_REQUIRED";
inline constexpr std::string_view kReasonRateLimited = "RATE_LIMITED";

struct PolicyVerdict {
  // Whether the request goes on (in audit mode always true).
  bool allowed = true;
  // Empty: nothing to object to. Otherwise a kReason*: denied, or with
  // `audit` only noted.
  std::string reason;
  std::string message;  // a sentence for the caller, naming what and why
  bool audit = false;   // the policy is in audit mode
  // kReasonRateLimited: when the caller's next request would be taken.
  absl::Duration retry_after = absl::ZeroDuration();

  bool objected() const { return !reason.empty(); }
};

class CallerPolicy {
 public:
  // No rules: every caller may do everything until Replace().
  explicit CallerPolicy(Clock* clock);

  // The rules from now on; nullopt: none (everything allowed).
  void Replace(std::optional<config::FrontDoorPolicySpec> spec)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool has_rules() const ABSL_LOCKS_EXCLUDED(mu_);

  // Decides on one request of `caller`: `method`, and for tools/call the
  // tool `tool`. Every request takes a token of the caller's bucket, also
  // one denied for another reason.
  PolicyVerdict Check(const Caller& caller, std::string_view method,
                      std::string_view tool) ABSL_LOCKS_EXCLUDED(mu_);

  // The tools/list answer `answer` (a JSON-RPC response, JSON text) with
  // the tools `caller` may not call left out; `answer` itself when
  // nothing is left out, when it is not a result with a tools array, or
  // in audit mode.
  std::string FilterToolsList(const Caller& caller, std::string answer) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time updated;
  };
  using Spec = config::FrontDoorPolicySpec;

  // Empty reason: the caller may use the server.
  static PolicyVerdict CheckCaller(const Spec& spec, const Caller& caller);
  static PolicyVerdict CheckTool(const Spec& spec, const Caller& caller,
                                 std::string_view tool);
  PolicyVerdict TakeToken(const Spec& spec, const Caller& caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const Spec> spec_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_CALLER_POLICY_H_
