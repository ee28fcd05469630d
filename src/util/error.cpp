#include "vinfer/error.hpp"

namespace vinfer {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::InvalidArgument: return "invalid argument";
    case ErrorKind::BadInput: return "bad input";
    case ErrorKind::Unsupported: return "unsupported";
    case ErrorKind::LimitExceeded: return "limit exceeded";
    case ErrorKind::Io: return "i/o error";
    case ErrorKind::Internal: return "internal error";
  }
  return "error";
}

}  // namespace vinfer
