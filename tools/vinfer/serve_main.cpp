// vinfer-serve: the program behind `vinfer serve` (a separate executable, so
// that the HTTP and TLS libraries it links do not slow every other command's
// start).
#include <cstdio>
#include <thread>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "serve/server.hpp"
#include "vinfer/error.hpp"
#include "vinfer/version.hpp"

int main(int argc, char** argv) {
  using namespace vinfer;
  CLI::App app{"vinfer serve: classifiers over the Open Inference Protocol (KServe v2 REST), images in, classes out",
               "vinfer serve"};
  app.set_version_flag("--version", version());
  std::vector<std::string> specs;
  serve::ServeOptions o;
  int threads = 0;
  double max_body_mb = 64;
  bool no_tune = false;
  std::string tune_cache = cli::default_tune_cache();
  app.add_option("--model", specs,
                 "NAME=MODEL[:weights=W][:preset=P], once per model (MODEL: an ONNX file or a built-in name; P: the "
                 "preprocessing of BYTES inputs, default the model's)")
      ->required();
  app.add_option("--host", o.host, "Address to listen on (default 127.0.0.1: this machine only)");
  app.add_option("--port", o.port, "Port (0: any free one, printed)")->check(CLI::Range(0, 65535));
  app.add_option("--instances", o.instances, "Copies of each network, each running one request at a time")->check(CLI::Range(1, 256));
  app.add_option("--threads", threads, "Threads per instance (default: cores / instances)")->check(CLI::Range(0, 1024));
  app.add_option("--max-batch", o.max_batch, "Images per forward pass (networks with a dynamic batch; default 1)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--batch-delay-ms", o.batch_delay_ms,
                 "With --max-batch: group the images of concurrent requests, waiting at most this long for a full batch")
      ->check(CLI::Range(0, 60000));
  app.add_option("--max-queue", o.max_queue, "Requests that may wait for an instance (503 beyond)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--timeout-ms", o.request_timeout_ms, "How long a request may wait for an instance (503 after)")
      ->check(CLI::Range(1, 3600 * 1000));
  app.add_option("--max-body-mb", max_body_mb, "Largest request body in MiB (413 beyond)")->check(CLI::Range(0.001, 4096.0));
  app.add_option("--max-pixels", o.max_pixels, "Refuse images with more pixels than this (decompression bombs)")->check(CLI::PositiveNumber);
  app.add_option("--http-threads", o.http_threads, "Connections served at once (default 2 x instances + 14)")->check(CLI::Range(0, 4096));
  std::string precision = "f32";
  app.add_option("--precision", precision, "CPU arithmetic: f32 (default) or bf16 (see vinfer check)")
      ->check(CLI::IsMember({"f32", "bf16"}));
  app.add_flag("--no-tune", no_tune, "CPU: choose 3x3 and depthwise kernels by a fixed rule instead of timing them at load");
  app.add_option("--tune-cache", tune_cache, "CPU: file that keeps the timed kernel choices between runs (\"\" for none)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? cli::kExitOk : cli::kExitBadInput;
  }
  try {
    std::vector<serve::ModelSpec> models;
    for (const std::string& s : specs) models.push_back(serve::parse_model_spec(s));
    o.engine.threads = threads;
    o.engine.tune = !no_tune;
    o.engine.precision = parse_precision(precision);
    o.engine.tune_cache = tune_cache;
    o.engine.keep_constants = false;
    o.max_body_bytes = static_cast<std::size_t>(max_body_mb * (1 << 20));
    if (o.batch_delay_ms > 0 && o.max_batch < 2)
      throw Error(ErrorKind::InvalidArgument, "--batch-delay-ms groups requests into batches: give --max-batch 2 or more");
    o.on_listening = [&](int port) {
      std::printf("vinfer serve: listening on http://%s:%d (%zu model(s), %d instance(s) each, batches of %d%s)\n",
                  o.host.c_str(), port, models.size(), o.instances, o.max_batch,
                  o.batch_delay_ms > 0 ? (", grouped within " + std::to_string(o.batch_delay_ms) + " ms").c_str() : "");
      std::fflush(stdout);
    };
    const int rc = serve::serve(models, o);
    std::printf("vinfer serve: stopped\n");
    return rc;
  } catch (const Error& e) {
    std::fprintf(stderr, "vinfer serve: error: %s\n", e.what());
    return e.kind() == ErrorKind::Internal ? cli::kExitInternal : cli::kExitBadInput;
  }
}
