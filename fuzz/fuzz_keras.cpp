// libFuzzer: the Keras weight reader (Keras 2 .h5 and Keras 3 .weights.h5,
// through libhdf5's in-memory driver).
#include <cstdint>

#include "vinfer/error.hpp"
#include "zoo/keras_h5.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    vinfer::zoo::read_keras_h5_memory(data, size, "fuzz.h5");
  } catch (const vinfer::Error&) {
  }
  return 0;
}
