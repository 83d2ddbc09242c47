// The descriptor set of the inspector.v1 contract, compiled into the binary
// so that the gateway needs no file at run time. INSPECTOR_DESCRIPTOR_SET is
// the path of the file protoc wrote; the assembler copies it in verbatim.
#include <string_view>

#include "gateway/gateway.h"

#ifndef INSPECTOR_DESCRIPTOR_SET
#error "INSPECTOR_DESCRIPTOR_SET must name the descriptor set file"
#endif

__asm__(
    ".section .rodata\n"
    ".balign 16\n"
    "inspector_descriptor_set_begin:\n"
    ".incbin \"" INSPECTOR_DESCRIPTOR_SET "\"\n"
    "inspector_descriptor_set_end:\n"
    ".previous\n");

extern "C" const char inspector_descriptor_set_begin[];
extern "C" const char inspector_descriptor_set_end[];

namespace inspector::gateway {

std::string_view EmbeddedDescriptorSet() {
  return std::string_view(
      inspector_descriptor_set_begin,
      static_cast<size_t>(inspector_descriptor_set_end -
                          inspector_descriptor_set_begin));
}

}  // namespace inspector::gateway
