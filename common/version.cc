#include "common/version.h"

namespace inspector {

const char* Version() { return INSPECTOR_VERSION; }

}  // namespace inspector
