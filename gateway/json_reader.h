// JSON -> protobuf for the gateway's transcoder: reads a request body (a
// JSON object for the whole message, or any JSON value for one field) into
// a DynamicMessage by reflection, following the proto3 JSON mapping. Every
// refusal is INVALID_REQUEST naming the field ("rn[1].n") in its message
// and "field" detail. See transcoder.h for the rules. Thread-safe for
// distinct messages.
#ifndef INSPECTOR_GATEWAY_JSON_READER_H_
#define INSPECTOR_GATEWAY_JSON_READER_H_

#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>

#include <string_view>

#include "absl/status/status.h"

namespace inspector::gateway::transcoding {

// Parses `body` as JSON into `message` (field == nullptr) or into its
// `field`. A blank body, or a JSON null for the whole message, leaves it
// as it is. `pool` and `factory` resolve google.protobuf.Any payloads.
absl::Status ReadJsonBody(const google::protobuf::DescriptorPool* pool,
                          google::protobuf::DynamicMessageFactory* factory,
                          std::string_view body,
                          google::protobuf::Message* message,
                          const google::protobuf::FieldDescriptor* field);

}  // namespace inspector::gateway::transcoding

#endif  // INSPECTOR_GATEWAY_JSON_READER_H_
