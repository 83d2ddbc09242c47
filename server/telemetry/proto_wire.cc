#include "server/telemetry/proto_wire.h"

#include <cstring>

namespace inspector::telemetry {
namespace {

// `value` as a varint into `buffer` (room for ten bytes); its length.
size_t EncodeVarint(uint64_t value, char* buffer) {
  size_t n = 0;
  while (value >= 0x80) {
    buffer[n++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  buffer[n++] = static_cast<char>(value);
  return n;
}

}  // namespace

void ProtoWireWriter::RawVarint(uint64_t value) {
  char buffer[10];
  out_.append(buffer, EncodeVarint(value, buffer));
}

void ProtoWireWriter::RawLittleEndian(uint64_t value, int bytes) {
  char buffer[8];
  for (int i = 0; i < bytes; ++i) {
    buffer[i] = static_cast<char>(value >> (8 * i));
  }
  out_.append(buffer, bytes);
}

void ProtoWireWriter::Varint(uint32_t field, uint64_t value) {
  Tag(field, kVarint);
  RawVarint(value);
}

void ProtoWireWriter::Fixed32(uint32_t field, uint32_t value) {
  Tag(field, kFixed32);
  RawLittleEndian(value, 4);
}

void ProtoWireWriter::Fixed64(uint32_t field, uint64_t value) {
  Tag(field, kFixed64);
  RawLittleEndian(value, 8);
}

void ProtoWireWriter::Double(uint32_t field, double value) {
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  Fixed64(field, bits);
}

void ProtoWireWriter::Bytes(uint32_t field, std::string_view value) {
  Tag(field, kLength);
  RawVarint(value.size());
  out_.append(value.data(), value.size());
}

ProtoWireWriter::Nested ProtoWireWriter::Begin(uint32_t field) {
  Tag(field, kLength);
  out_.push_back('\0');  // the length, widened by End() if need be
  return Nested{out_.size() - 1};
}

void ProtoWireWriter::End(Nested nested) {
  const size_t length = out_.size() - nested.length_at - 1;
  char buffer[10];
  const size_t n = EncodeVarint(length, buffer);
  if (n > 1) out_.insert(nested.length_at + 1, n - 1, '\0');
  std::memcpy(&out_[nested.length_at], buffer, n);
}

}  // namespace inspector::telemetry
