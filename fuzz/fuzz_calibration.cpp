// libFuzzer: calibration files (`--calibration FILE` of --precision int8).
#include <cstdint>
#include <string>

#include "vinfer/calibration.hpp"
#include "vinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const vinfer::Calibration c = vinfer::Calibration::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz.calib");
    (void)vinfer::Calibration::parse(c.to_json(), "again");  // what it accepts it writes back readably
  } catch (const vinfer::Error&) {
  }
  return 0;
}
