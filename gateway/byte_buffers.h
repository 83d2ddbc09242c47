// Conversions between gRPC byte buffers and strings, for the gateway's
// calls through grpc::GenericStub (serialized messages in, out). Pure
// functions; any thread.
#ifndef INSPECTOR_GATEWAY_BYTE_BUFFERS_H_
#define INSPECTOR_GATEWAY_BYTE_BUFFERS_H_

#include <grpcpp/support/byte_buffer.h>

#include <string>

namespace inspector::gateway {

// The bytes of `buffer` ("" if it cannot be read).
std::string ToString(const grpc::ByteBuffer& buffer);
grpc::ByteBuffer ToByteBuffer(const std::string& bytes);

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_BYTE_BUFFERS_H_
