#include "util/debug_env.hpp"

#include <cstdlib>
#include <cstring>

namespace vinfer::detail {
namespace {

constexpr const char* kNames[] = {
    "VINFER_ISA",         "VINFER_HUGE_PAGES",       "VINFER_WINOGRAD",         "VINFER_WINOGRAD_F23",
    "VINFER_WINOGRAD_SPLIT", "VINFER_WINOGRAD_STRIDE2", "VINFER_CONV1X1",       "VINFER_FC",
    "VINFER_PREFETCH_WEIGHTS", "VINFER_PREFETCH_OWN",  "VINFER_PROFILE_HOT_WEIGHTS", "VINFER_TUNE_LOG",
    "VINFER_CUDA_GRAPH", "VINFER_BF16", "VINFER_AMX",   "VINFER_PNG", "VINFER_GROUP_CONV", "VINFER_WINOGRAD_INT8",
    "VINFER_SQUEEZE_EXCITE", "VINFER_GELU", "VINFER_CONV_CHAIN", "VINFER_TEAM",
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(DebugVar::Team) + 1);

}  // namespace

const char* debug_env(DebugVar v) { return std::getenv(kNames[static_cast<int>(v)]); }

bool debug_env_is(DebugVar v, const char* value) {
  const char* s = debug_env(v);
  return s && std::strcmp(s, value) == 0;
}

std::vector<std::string> debug_env_in_effect() {
  std::vector<std::string> out;
  for (const char* name : kNames)
    if (const char* v = std::getenv(name)) out.push_back(std::string(name) + "=" + v);
  return out;
}

}  // namespace vinfer::detail
