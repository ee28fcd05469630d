// The Open Inference Protocol's REST messages (KServe v2; the REST API of
// Triton and OpenVINO Model Server): an infer request, JSON optionally
// followed by binary tensor data, to tensors; results to a response. No HTTP
// here (server.hpp), so that decoding is tested and fuzzed on its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vinfer::serve {

// A request the server refuses: the HTTP status (4xx) and a one-line reason.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct Tensor {
  std::string name;
  std::string datatype;  // "BYTES", "FP32", "INT64"
  std::vector<std::int64_t> shape;
  std::vector<std::string> bytes;  // BYTES: one string per element
  std::vector<float> fp32;
  std::vector<std::int64_t> int64;
  std::int64_t elements() const;
};

struct RequestedOutput {
  std::string name;
  bool binary = false;  // parameters.binary_data
};

struct InferRequest {
  std::string id;
  std::vector<Tensor> inputs;            // BYTES or FP32
  std::vector<RequestedOutput> outputs;  // empty: every output
  bool binary_outputs = false;           // parameters.binary_data_output
  int top_k = 5;                         // parameters.top_k
};

// What a request may hold: elements per input and in all (an element of
// BYTES is one encoded image).
struct RequestLimits {
  std::int64_t max_elements = std::int64_t{64} << 20;
  std::int64_t max_bytes_elements = 256;
  int max_top_k = 1000;
};

// `body` is the whole request body; `header_length` the value of the
// Inference-Header-Content-Length header (the JSON's length, binary tensor
// data after it), absent when the body is all JSON. Throws RequestError (400).
InferRequest parse_infer_request(std::string_view body, std::optional<std::size_t> header_length,
                                 const RequestLimits& limits = {});

// An infer response: the JSON, then the binary data of outputs asked for in
// binary (each output's parameters.binary_data_size says how much). `json_length`
// is for the Inference-Header-Content-Length header when binary data follows.
struct Response {
  std::string body;
  std::optional<std::size_t> json_length;
};
Response make_infer_response(const std::string& model, const std::string& version, const InferRequest& request,
                             const std::vector<Tensor>& outputs);

// {"error": "..."}
std::string error_body(const std::string& message);

// Decodes standard base64 (with or without padding); nullopt if it is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vinfer::serve
