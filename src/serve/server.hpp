// `vinfer serve`: classifiers behind the Open Inference Protocol's REST API
// (KServe v2), with encoded images in (decoded and preprocessed here, with
// the model's exact preset) or preprocessed FP32 tensors.
//
//   GET  /v2/health/live, /v2/health/ready, /v2, /metrics (Prometheus text)
//   GET  /v2/models/{m}[/versions/{v}], .../ready
//   POST /v2/models/{m}[/versions/{v}]/infer
//
// Each model has `instances` copies of its network, each running one
// request at a time (its images in batches of `max_batch`); a request waits
// for a free one at most `request_timeout_ms`, and at most `max_queue`
// requests wait (503 beyond). With `batch_delay_ms`, the copies instead take
// batches of images from all waiting requests (dynamic batching).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vinfer/engine.hpp"

namespace vinfer::serve {

struct ModelSpec {
  std::string name;     // as clients address it
  std::string model;    // ONNX file or built-in name
  std::string weights;  // for a built-in name
  std::string preset;   // preprocessing for BYTES inputs; empty: the model's own
};

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (reported through on_listening)
  int instances = 1;
  EngineOptions engine;                         // per instance (threads: 0 = cores / instances)
  int max_batch = 1;                            // images per forward pass (networks with a dynamic batch)
  int batch_delay_ms = 0;                       // > 0 with max_batch > 1: images of concurrent requests are
                                                // grouped, a batch waiting at most this long to fill
  std::int64_t max_pixels = 0;                  // per decoded image; 0: the decoder's default
  std::size_t max_body_bytes = std::size_t{64} << 20;  // larger bodies get 413
  int max_queue = 64;                           // requests waiting for an instance
  int request_timeout_ms = 30000;               // waiting for an instance
  int http_threads = 0;                         // connections served at once; 0: 2 x instances + 4
  std::function<void(int port)> on_listening;   // once the socket is bound
};

// Loads the models, serves until SIGTERM or SIGINT (then stops accepting,
// finishes what is in flight and returns 0). Throws vinfer::Error for a
// model that does not load or an address that cannot be bound.
int serve(const std::vector<ModelSpec>& models, const ServeOptions& options);

// "NAME=MODEL[:weights=W][:preset=P]" (the CLI's --model). Throws InvalidArgument.
ModelSpec parse_model_spec(const std::string& text);

}  // namespace vinfer::serve
