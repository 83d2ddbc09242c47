// Transcoder's construction and response rendering (raw google.api.HttpBody
// pass-through, or JSON through json_writer.h). Request binding is in
// request_binding.cc; the JSON reader, the JSON writer and the text forms
// of values each have their own file.
#include "gateway/transcoder.h"

#include <google/protobuf/arena.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gateway/json_writer.h"
#include "gateway/value_forms.h"
#include "common/errors.h"
#include "google/api/httpbody.pb.h"

namespace inspector::gateway {
namespace {

using google::protobuf::Arena;
using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using transcoding::kArenaInitialBlock;

}  // namespace

Transcoder::Transcoder(const DescriptorPool* pool)
    : pool_(pool), factory_(pool) {
  http_body_ = pool_->FindMessageTypeByName("google.api.HttpBody");
  if (http_body_ != nullptr) {
    http_body_content_type_ = http_body_->FindFieldByName("content_type");
    http_body_data_ = http_body_->FindFieldByName("data");
    if (http_body_content_type_ == nullptr || http_body_data_ == nullptr) {
      http_body_ = nullptr;
    }
  }
}

const Message* Transcoder::Prototype(const Descriptor* type) const {
  return factory_.GetPrototype(type);
}

absl::StatusOr<HttpBodyOut> Transcoder::RenderResponse(
    const Route& route, std::string_view serialized_response) const {
  if (route.method == nullptr) {
    return Error(ErrorCode::INTERNAL_ERROR, "route without a method");
  }
  const Descriptor* output = route.method->output_type();
  auto malformed = [&] {
    return Error(
        ErrorCode::INTERNAL_ERROR,
        absl::StrCat("the response is not a valid ", output->full_name()));
  };
  if (route.response_body.empty() && output == http_body_ &&
      http_body_ != nullptr) {
    google::api::HttpBody http_body;
    if (!http_body.ParseFromArray(
            serialized_response.data(),
            static_cast<int>(serialized_response.size()))) {
      return malformed();
    }
    HttpBodyOut out;
    out.content_type = http_body.content_type().empty()
                           ? "application/json"
                           : std::move(*http_body.mutable_content_type());
    out.body = std::move(*http_body.mutable_data());
    return out;
  }

  char initial_block[kArenaInitialBlock];
  google::protobuf::ArenaOptions arena_options;
  arena_options.initial_block = initial_block;
  arena_options.initial_block_size = sizeof(initial_block);
  Arena arena(arena_options);
  Message* response = Prototype(output)->New(&arena);
  if (!response->ParseFromArray(serialized_response.data(),
                                static_cast<int>(serialized_response.size()))) {
    return malformed();
  }
  HttpBodyOut out;
  out.content_type = "application/json";
  out.body.reserve(serialized_response.size() * 2 + 16);
  if (route.response_body.empty()) {
    absl::Status status =
        transcoding::WriteMessageJson(pool_, &factory_, *response, &out.body);
    if (!status.ok()) return status;
    return out;
  }
  const FieldDescriptor* field = output->FindFieldByName(route.response_body);
  if (field == nullptr) {
    return Error(ErrorCode::INTERNAL_ERROR,
                 absl::StrCat("route response_body \"", route.response_body,
                              "\" names no field of ", output->full_name()));
  }
  if (http_body_ != nullptr && !field->is_repeated() &&
      field->message_type() == http_body_) {
    const Message& http_body =
        response->GetReflection()->GetMessage(*response, field);
    const Reflection* reflection = http_body.GetReflection();
    out.content_type =
        reflection->GetString(http_body, http_body_content_type_);
    if (out.content_type.empty()) out.content_type = "application/json";
    out.body = reflection->GetString(http_body, http_body_data_);
    return out;
  }
  absl::Status status = transcoding::WriteFieldJson(pool_, &factory_, *response,
                                                    field, &out.body);
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<HttpBodyOut> Transcoder::RenderStreamMessage(
    const Route& route, std::string_view serialized_message) const {
  return RenderResponse(route, serialized_message);
}

absl::StatusOr<std::string> Transcoder::MessageToJson(
    const Message& message) const {
  std::string out;
  absl::Status status =
      transcoding::WriteMessageJson(pool_, &factory_, message, &out);
  if (!status.ok()) return status;
  return out;
}

}  // namespace inspector::gateway
