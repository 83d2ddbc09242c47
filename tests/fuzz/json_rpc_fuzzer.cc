// Fuzz target for the JSON-RPC inspection the engine runs on every message
// from an MCP server (server/engine/json_rpc.h).
//
// Properties: InspectMessage never crashes on any input, and when a
// message has an id, splicing another id in and the original back gives
// the original bytes, and the spliced message reads back with the new id.
//
// Built two ways by tests/fuzz/CMakeLists.txt: with clang, a libFuzzer
// binary (json_rpc_fuzzer -max_total_time=60 CORPUS_DIR); with any
// compiler, a replay test that runs the seeds in tests/fuzz/corpus/json_rpc
// (fuzz_replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/engine/json_rpc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view raw(reinterpret_cast<const char*>(data), size);
  auto info = inspector::engine::InspectMessage(raw);
  if (!info.ok() || info->id.empty()) return 0;
  if (info->id_offset + info->id_length > raw.size()) std::abort();
  std::string replaced = inspector::engine::ReplaceId(raw, *info, "42");
  auto again = inspector::engine::InspectMessage(replaced);
  if (!again.ok() || again->id != "42" || again->kind != info->kind ||
      again->method != info->method) {
    std::abort();
  }
  if (inspector::engine::ReplaceId(replaced, *again, info->id) != raw) {
    std::abort();
  }
  return 0;
}
