#include "util/load_stats.hpp"

#include <cstdio>
#include <cstring>

namespace vinfer::detail {
namespace {

std::int64_t status_kib(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long long kib = 0;
  const std::size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, n) == 0 && line[n] == ':') {
      std::sscanf(line + n + 1, "%lld", &kib);
      break;
    }
  std::fclose(f);
  return static_cast<std::int64_t>(kib) * 1024;
}

}  // namespace

std::int64_t peak_rss_bytes() { return status_kib("VmHWM"); }
std::int64_t current_rss_bytes() { return status_kib("VmRSS"); }

}  // namespace vinfer::detail
