// Internal: whole-file reads and atomic writes.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vinfer::detail {

// Reads a whole file into `out` (reusing its capacity). Throws Error(Io) naming the path.
void read_file(const std::string& path, std::vector<std::uint8_t>& out, std::uint64_t max_bytes = 1ULL << 32);

// A file opened for reading, with read_file's checks (not a directory, at
// most max_bytes); for readers that stream it instead of holding a copy.
class InputFile {
 public:
  InputFile(const std::string& path, std::uint64_t max_bytes);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }
  // Reads `bytes` at `offset` into dst; throws Error(Io) naming the path on
  // a short read (the file shrank since it was opened).
  void read_at(std::uint64_t offset, void* dst, std::size_t bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Writes through `write` into a temporary file beside `path`, then renames it
// over `path`: an interrupted or failed write never leaves a partial file.
void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write);

}  // namespace vinfer::detail
