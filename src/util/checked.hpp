// Internal: arithmetic and parsing for numbers read from files, where an
// overflow or a malformed digit string is the file's fault and must become a
// vinfer::Error, never undefined behaviour or a std:: exception.
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vinfer::detail {

// The product of non-negative sizes, or nullopt when one is negative or the
// product exceeds `limit`.
template <class Range>
std::optional<std::int64_t> checked_product(const Range& sizes, std::int64_t limit = INT64_MAX) {
  std::int64_t n = 1;
  for (const auto s : sizes) {
    const auto v = static_cast<std::int64_t>(s);
    if (v < 0 || (v > 0 && static_cast<std::uint64_t>(s) > static_cast<std::uint64_t>(INT64_MAX))) return std::nullopt;
    if (__builtin_mul_overflow(n, v, &n) || n > limit) return std::nullopt;
  }
  return n;
}

// A whole string of decimal digits (an optional leading '-') as int64;
// nullopt for anything else, including out-of-range values.
inline std::optional<std::int64_t> parse_int64(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace vinfer::detail
