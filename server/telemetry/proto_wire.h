// A protobuf wire-format writer: appends tagged varint, fixed32, fixed64,
// double and length-delimited fields to a byte string, and nested messages
// whose length is known only once they are written (Begin()/End(): one
// byte is reserved for the length and widened in place when the message
// is 128 bytes or longer). The output is the canonical encoding a
// generated message would give for the same fields in the same order.
// Field numbers are the caller's (see otlp_encoder.cc for OTLP's).
//
// Not thread-safe: one writer per thread; it owns its buffer.
#ifndef INSPECTOR_SERVER_TELEMETRY_PROTO_WIRE_H_
#define INSPECTOR_SERVER_TELEMETRY_PROTO_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace inspector::telemetry {

class ProtoWireWriter {
 public:
  // A nested message opened by Begin(), closed by End().
  struct Nested {
    size_t length_at;
  };

  void Varint(uint32_t field, uint64_t value);
  // Negative values take ten bytes, as protobuf's int64 does.
  void Int64(uint32_t field, int64_t value) {
    Varint(field, static_cast<uint64_t>(value));
  }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  void Fixed32(uint32_t field, uint32_t value);
  void Fixed64(uint32_t field, uint64_t value);
  void Double(uint32_t field, double value);
  // A string, bytes, or an already encoded message.
  void Bytes(uint32_t field, std::string_view value);

  // Bytes another writer encoded (whole fields), as they are.
  void Raw(std::string_view encoded) {
    out_.append(encoded.data(), encoded.size());
  }

  Nested Begin(uint32_t field);
  void End(Nested nested);

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Reserve(size_t n) { out_.reserve(n); }

 private:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };
  void Tag(uint32_t field, WireType type) {
    RawVarint((static_cast<uint64_t>(field) << 3) | type);
  }
  void RawVarint(uint64_t value);
  void RawLittleEndian(uint64_t value, int bytes);

  std::string out_;
};

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_PROTO_WIRE_H_
