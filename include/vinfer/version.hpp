// vinfer/version.hpp: the library's version ("0.1.0").
#pragma once
#include <string>

namespace vinfer {

std::string version();

}  // namespace vinfer
