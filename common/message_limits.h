// Size limits shared by inspectord and its clients, so that whatever one
// side may send the other accepts. Constants only; thread-safe.
#ifndef INSPECTOR_COMMON_MESSAGE_LIMITS_H_
#define INSPECTOR_COMMON_MESSAGE_LIMITS_H_

#include <cstddef>

namespace inspector {

// The largest MCP message forwarded in either direction, and the largest
// request body the REST gateway accepts.
inline constexpr size_t kMaxForwardedMessageBytes = 64 << 20;

// The largest gRPC message inspectord receives or sends, and so the least a
// client's channel must accept: a forwarded message with room for the
// fields around it (an HttpBody's content type, ids, ...).
inline constexpr int kMaxGrpcMessageBytes =
    static_cast<int>(kMaxForwardedMessageBytes) + (1 << 20);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_MESSAGE_LIMITS_H_
