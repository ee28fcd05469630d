#include "vinfer/version.hpp"

namespace vinfer {

std::string version() { return VINFER_VERSION; }

}  // namespace vinfer
