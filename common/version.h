// The product version, shared by inspectord and its clients.
#ifndef INSPECTOR_COMMON_VERSION_H_
#define INSPECTOR_COMMON_VERSION_H_

namespace inspector {

// For example "0.1.0"; set from the CMake project version.
const char* Version();

}  // namespace inspector

#endif  // INSPECTOR_COMMON_VERSION_H_
