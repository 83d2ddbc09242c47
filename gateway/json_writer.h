// protobuf -> JSON for the gateway's transcoder: writes a message, or the
// value of one of its fields, as compact proto3 JSON straight from
// reflection (lowerCamelCase names, enums by name, int64 as strings, bytes
// as base64, map keys sorted, fields without presence always written; see
// transcoder.h). Failures (a non-finite number in a google.protobuf.Value,
// a Timestamp out of range, an Any of an unknown type) are INTERNAL_ERROR.
// Thread-safe for distinct outputs.
#ifndef INSPECTOR_GATEWAY_JSON_WRITER_H_
#define INSPECTOR_GATEWAY_JSON_WRITER_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <string>

#include "absl/status/status.h"

namespace inspector::gateway::transcoding {

// Appends `message` as JSON to `out`. `pool` and `factory` resolve
// google.protobuf.Any payloads.
absl::Status WriteMessageJson(const google::protobuf::DescriptorPool* pool,
                              google::protobuf::DynamicMessageFactory* factory,
                              const google::protobuf::Message& message,
                              std::string* out);

// Appends the value of `field` of `message` (an array, an object for a
// map, or a single value) as JSON to `out`.
absl::Status WriteFieldJson(const google::protobuf::DescriptorPool* pool,
                            google::protobuf::DynamicMessageFactory* factory,
                            const google::protobuf::Message& message,
                            const google::protobuf::FieldDescriptor* field,
                            std::string* out);

}  // namespace inspector::gateway::transcoding

#endif  // INSPECTOR_GATEWAY_JSON_WRITER_H_
