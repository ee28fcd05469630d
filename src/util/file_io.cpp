#include "util/file_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vinfer/error.hpp"

namespace vinfer::detail {

void read_file(const std::string& path, std::vector<std::uint8_t>& out, std::uint64_t max_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(ErrorKind::Io, path + ": cannot open: " + std::strerror(errno));
  struct Closer { std::FILE* f; ~Closer() { std::fclose(f); } } closer{f};
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error(ErrorKind::Io, path + ": is a directory");
  if (std::fseek(f, 0, SEEK_END) != 0) throw Error(ErrorKind::Io, path + ": cannot seek");
  const long size = std::ftell(f);
  if (size < 0) throw Error(ErrorKind::Io, path + ": cannot tell size");
  if (static_cast<std::uint64_t>(size) > max_bytes) throw Error(ErrorKind::LimitExceeded, path + ": file too large");
  std::rewind(f);
  out.resize(static_cast<std::size_t>(size));
  if (size > 0 && std::fread(out.data(), 1, out.size(), f) != out.size())
    throw Error(ErrorKind::Io, path + ": read failed");
}

InputFile::InputFile(const std::string& path, std::uint64_t max_bytes) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(ErrorKind::Io, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd_);
    throw Error(ErrorKind::Io, path + ": cannot tell size: " + why);
  }
  const char* problem = S_ISDIR(st.st_mode) ? "is a directory"
                        : static_cast<std::uint64_t>(st.st_size) > max_bytes ? "file too large" : nullptr;
  if (problem) {
    ::close(fd_);
    throw Error(S_ISDIR(st.st_mode) ? ErrorKind::Io : ErrorKind::LimitExceeded, path + ": " + problem);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

void InputFile::read_at(std::uint64_t offset, void* dst, std::size_t bytes) const {
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd_, p, std::min<std::size_t>(bytes, std::size_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorKind::Io, path_ + ": read failed: " + std::strerror(errno));
    if (n == 0) throw Error(ErrorKind::Io, path_ + ": ends before the data it declares (the file changed while it was read?)");
    p += n, bytes -= static_cast<std::size_t>(n), offset += static_cast<std::uint64_t>(n);
  }
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void write_file_atomic(const std::string& path, const std::function<void(std::FILE*)>& write) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(ErrorKind::Io, path + ": cannot create: " + std::strerror(errno));
  try {
    write(f);
    if (std::fflush(f) != 0 || std::ferror(f)) throw Error(ErrorKind::Io, path + ": write failed: " + std::strerror(errno));
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw Error(ErrorKind::Io, path + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw Error(ErrorKind::Io, path + ": cannot rename into place: " + why);
  }
}

}  // namespace vinfer::detail
