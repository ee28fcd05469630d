// libFuzzer: the Open Inference Protocol's request decoding (vinfer serve's
// POST /v2/models/{m}/infer) and, for what it accepts, the response encoding.
// Input: two bytes of Inference-Header-Content-Length (little-endian; 0xffff:
// no header, the body all JSON), then the body.
#include <cstdint>
#include <string_view>

#include "serve/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const unsigned h = data[0] | (data[1] << 8);
  const std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);
  try {
    const vinfer::serve::InferRequest r =
        vinfer::serve::parse_infer_request(body, h == 0xffff ? std::nullopt : std::optional<std::size_t>(h));
    vinfer::serve::make_infer_response("m", "1", r, r.inputs);
  } catch (const vinfer::serve::RequestError&) {
  }
  return 0;
}
