// vinfer/error.hpp: the one exception type the library throws.
//
// Every failure that a caller can cause (a bad file, an unsupported option, a
// limit exceeded) is reported as vinfer::Error with a kind and a one-line
// message that names the input. The CLI maps kinds to exit codes.
#pragma once
#include <stdexcept>
#include <string>

namespace vinfer {

enum class ErrorKind {
  InvalidArgument,  // a parameter the caller chose is out of range or inconsistent
  BadInput,         // a file's content is corrupt, truncated or not what it claims
  Unsupported,      // valid input that vinfer does not handle (format, feature)
  LimitExceeded,    // input exceeds a configured safety limit (pixels, bytes)
  Io,               // the file system refused (missing file, permission, disk full)
  Internal,         // a bug in vinfer
};

const char* to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace vinfer
