// libFuzzer: torch.save (zip and legacy pickle) and safetensors readers.
#include <cstdint>

#include "vinfer/error.hpp"
#include "zoo/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    vinfer::zoo::read_checkpoint_memory(data, size, "fuzz.pth");
  } catch (const vinfer::Error&) {
  }
  return 0;
}
