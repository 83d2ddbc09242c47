// Identifiers: random UUIDs (version 4) for server configurations and
// sessions. Thread-safe.
#ifndef INSPECTOR_COMMON_IDS_H_
#define INSPECTOR_COMMON_IDS_H_

#include <string>
#include <string_view>

namespace inspector {

// A new random UUID in canonical lower-case form, e.g.
// "3f2b8c1e-9d4a-4c6b-8e2f-1a2b3c4d5e6f".
std::string NewUuid();

// True if `s` has the canonical 8-4-4-4-12 hex form.
bool IsUuid(std::string_view s);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_IDS_H_
