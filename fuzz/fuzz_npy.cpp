// libFuzzer: the .npy reader (`--input X.npy` of bench and profile).
#include <cstdint>
#include <vector>

#include "vinfer/error.hpp"
#include "vinfer/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    std::vector<float> values;
    vinfer::read_npy_memory(data, size, "fuzz.npy", values);
  } catch (const vinfer::Error&) {
  }
  return 0;
}
