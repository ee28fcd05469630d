// Internal: whole-file reads and atomic writes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vinfer::detail {

// Reads a whole file into `out` (reusing its capacity). Throws Error(Io) naming the path.
void read_file(const std::string& path, std::vector<std::uint8_t>& out, std::uint64_t max_bytes = 1ULL << 32);

// Writes through `write` into a temporary file beside `path`, then renames it
// over `path`: an interrupted or failed write never leaves a partial file.
void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write);

}  // namespace vinfer::detail
