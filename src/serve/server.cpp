#include "serve/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "serve/protocol.hpp"
#include "util/cpu_grant.hpp"
#include "vinfer/error.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/postprocess.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/version.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer::serve {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Prometheus histogram in milliseconds.
class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds{0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
  void observe(double ms) {
    std::size_t i = 0;
    while (i < kBounds.size() && ms > kBounds[i]) ++i;
    ++counts_[i], sum_ += ms, ++count_;
  }
  void render(std::string& out, const std::string& name, const std::string& labels) const {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= kBounds.size(); ++i) {
      cumulative += counts_[i];
      char le[32];
      if (i < kBounds.size()) std::snprintf(le, sizeof le, "%g", kBounds[i]);
      else std::snprintf(le, sizeof le, "+Inf");
      out += name + "_bucket{" + labels + (labels.empty() ? "" : ",") + "le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
    }
    char sum[64];
    std::snprintf(sum, sizeof sum, "%.6f", sum_);
    out += name + "_sum{" + labels + "} " + sum + "\n";
    out += name + "_count{" + labels + "} " + std::to_string(count_) + "\n";
  }

 private:
  std::array<std::uint64_t, kBounds.size() + 1> counts_{};
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

class Metrics {
 public:
  void request(const std::string& model, int status) {
    std::lock_guard<std::mutex> lock(m_);
    ++requests_[{model, status}];
  }
  void stage(const std::string& model, const char* stage, double ms) {
    std::lock_guard<std::mutex> lock(m_);
    stages_[{model, stage}].observe(ms);
  }
  void batch(const std::string& model, std::size_t images) {
    std::lock_guard<std::mutex> lock(m_);
    auto& b = batches_[model];
    ++b.first, b.second += images;
  }
  std::string render() const {
    std::lock_guard<std::mutex> lock(m_);
    std::string out =
        "# HELP vinfer_requests_total Inference requests by model and HTTP status.\n# TYPE vinfer_requests_total counter\n";
    for (const auto& [key, n] : requests_)
      out += "vinfer_requests_total{model=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
    out += "# HELP vinfer_stage_ms Time per request and stage: queue (waiting for an instance), preprocess (decode + "
           "preprocess), inference, request (all of it).\n# TYPE vinfer_stage_ms histogram\n";
    for (const auto& [key, h] : stages_) h.render(out, "vinfer_stage_ms", "model=\"" + key.first + "\",stage=\"" + key.second + "\"");
    if (!batches_.empty()) {
      out += "# HELP vinfer_batches_total Forward passes of the dynamic batcher.\n# TYPE vinfer_batches_total counter\n";
      for (const auto& [model, b] : batches_) out += "vinfer_batches_total{model=\"" + model + "\"} " + std::to_string(b.first) + "\n";
      out += "# HELP vinfer_batched_images_total Images in those passes.\n# TYPE vinfer_batched_images_total counter\n";
      for (const auto& [model, b] : batches_)
        out += "vinfer_batched_images_total{model=\"" + model + "\"} " + std::to_string(b.second) + "\n";
    }
    return out;
  }

 private:
  mutable std::mutex m_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::map<std::pair<std::string, std::string>, Histogram> stages_;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> batches_;  // passes, images
};

// A request's images in the dynamic batcher's queue.
struct Job {
  const float* x = nullptr;  // n inputs
  float* y = nullptr;        // n outputs
  std::int64_t n = 0, taken = 0, done = 0;
  std::exception_ptr error;
  Clock::time_point queued;
  double queue_ms = -1;  // until its first image ran
};

// One model: its instances, each used by one request at a time, or by a
// batcher thread that takes images from every queued request.
struct Served {
  ModelSpec spec;
  Preset preset;
  Shape input_shape;  // one image's
  int classes = 0;
  bool probabilities = false;
  std::vector<std::unique_ptr<Model>> models;
  std::vector<Model*> idle;
  int waiting = 0;
  std::mutex m;
  std::condition_variable cv;
  // Dynamic batching.
  std::deque<Job*> queue;
  std::condition_variable queued, finished;
  std::vector<std::thread> batchers;
  bool stopping = false;
};

// Holds an instance for the scope; the next waiting request gets it after.
class Lease {
 public:
  Lease(Served& s, const ServeOptions& o) : s_(s) {
    std::unique_lock<std::mutex> lock(s.m);
    if (s.idle.empty() && s.waiting >= o.max_queue)
      throw RequestError(503, "busy: " + std::to_string(s.waiting) + " requests are waiting for " + s.spec.name);
    ++s.waiting;
    const bool got = s.cv.wait_for(lock, std::chrono::milliseconds(o.request_timeout_ms), [&] { return !s.idle.empty(); });
    --s.waiting;
    if (!got) throw RequestError(503, "timed out after " + std::to_string(o.request_timeout_ms) + " ms waiting for " + s.spec.name);
    model_ = s.idle.back();
    s.idle.pop_back();
  }
  ~Lease() {
    {
      std::lock_guard<std::mutex> lock(s_.m);
      s_.idle.push_back(model_);
    }
    s_.cv.notify_one();
  }
  Model& model() { return *model_; }

 private:
  Served& s_;
  Model* model_ = nullptr;
};

int status_of(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::LimitExceeded: return 413;
    case ErrorKind::Internal: case ErrorKind::Io: return 500;
    default: return 400;
  }
}

json model_metadata(const Served& s) {
  json in_shape = json::array({-1});
  for (std::size_t i = 1; i < s.input_shape.size(); ++i) in_shape.push_back(s.input_shape[i]);
  const std::int64_t c = s.classes;
  return {{"name", s.spec.name},
          {"versions", {"1"}},
          {"platform", "vinfer"},
          {"inputs",
           {{{"name", "image"}, {"datatype", "BYTES"}, {"shape", {-1}}},
            {{"name", "input"}, {"datatype", "FP32"}, {"shape", in_shape}}}},
          {"outputs",
           {{{"name", "logits"}, {"datatype", "FP32"}, {"shape", {-1, c}}},
            {{"name", "probabilities"}, {"datatype", "FP32"}, {"shape", {-1, c}}},
            {{"name", "topk_indices"}, {"datatype", "INT64"}, {"shape", {-1, -1}}},
            {{"name", "topk_labels"}, {"datatype", "BYTES"}, {"shape", {-1, -1}}},
            {{"name", "topk_probabilities"}, {"datatype", "FP32"}, {"shape", {-1, -1}}}}},
          {"parameters", {{"preset", s.preset.name}}}};
}

const char* const kOutputs[] = {"logits", "probabilities", "topk_indices", "topk_labels", "topk_probabilities"};

class Server {
 public:
  Server(const std::vector<ModelSpec>& specs, const ServeOptions& o) : o_(o) {
    for (const ModelSpec& spec : specs) {
      if (served_.count(spec.name)) throw Error(ErrorKind::InvalidArgument, "--model " + spec.name + " is given twice");
      auto s = std::make_unique<Served>();
      s->spec = spec;
      EngineOptions eo = o.engine;
      if (eo.threads <= 0) eo.threads = std::max(1, detail::cpu_grant().cpus / std::max(1, o.instances));
      eo.batch = std::max(1, o.max_batch);
      for (int i = 0; i < std::max(1, o.instances); ++i) {
        ZooInfo zoo;
        s->models.push_back(std::make_unique<Model>(load_model(spec.model, spec.weights, eo, &zoo)));
        if (i == 0) s->preset = model_preset(*s->models[0], spec.preset.empty() ? zoo.preset : spec.preset);
      }
      const Model& m = *s->models[0];
      s->input_shape = m.input_shape();
      s->input_shape[0] = 1;
      s->classes = static_cast<int>(m.output_size() / static_cast<std::size_t>(m.batch()));
      s->probabilities = m.outputs_probabilities();
      for (auto& p : s->models) s->idle.push_back(p.get());
      if (o.batch_delay_ms > 0 && o.max_batch > 1)
        for (auto& p : s->models) s->batchers.emplace_back([this, sp = s.get(), mp = p.get()] { batch_loop(*sp, *mp); });
      served_[spec.name] = std::move(s);
    }
    routes();
  }
  ~Server() {
    for (auto& [name, s] : served_) {
      {
        std::lock_guard<std::mutex> lock(s->m);
        s->stopping = true;
      }
      s->queued.notify_all();
      for (std::thread& t : s->batchers) t.join();
    }
  }

  int run() {
    // Debian's cpp-httplib 0.11 listens with a backlog of 5: a burst of
    // connections then waits for SYN retransmits (seconds). Listening again
    // on the same socket raises it (Linux).
    int fd = -1;
    svr_.set_socket_options([&fd](socket_t sock) {
      httplib::default_socket_options(sock);
      fd = sock;
    });
    int port = o_.port;
    if (port == 0) port = svr_.bind_to_any_port(o_.host);
    else if (!svr_.bind_to_port(o_.host, port)) port = -1;
    if (port < 0) throw Error(ErrorKind::Io, "cannot listen on " + o_.host + ":" + std::to_string(o_.port));
    if (fd >= 0) ::listen(fd, SOMAXCONN);
    if (o_.on_listening) o_.on_listening(port);
    svr_.listen_after_bind();  // until stop(): then the workers finish what they hold
    return 0;
  }
  void stop() { svr_.stop(); }
  bool running() const { return svr_.is_running(); }

 private:
  void routes() {
    const int threads = o_.http_threads > 0 ? o_.http_threads : 2 * std::max(1, o_.instances) + 14;
    svr_.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
    svr_.set_payload_max_length(o_.max_body_bytes);
    // A response goes out as headers, then body: with Nagle's algorithm the
    // body waits for the client's delayed ACK of the headers (40 ms on Linux).
    svr_.set_tcp_nodelay(true);
    svr_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
      if (!res.body.empty()) return;
      const std::string why = res.status == 413   ? "the body exceeds the server's limit (--max-body-mb)"
                              : res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                                                  : "HTTP " + std::to_string(res.status);
      res.set_content(error_body(why), "application/json");
    });
    svr_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string why = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        why = std::string("internal error: ") + e.what();
      } catch (...) {
      }
      res.status = 500;
      res.set_content(error_body(why), "application/json");
    });
    auto send_json = [](httplib::Response& res, const json& j, int status = 200) {
      res.status = status;
      res.set_content(j.dump(), "application/json");
    };
    svr_.Get("/v2/health/live", [=](const httplib::Request&, httplib::Response& res) { send_json(res, {{"live", true}}); });
    svr_.Get("/v2/health/ready", [=](const httplib::Request&, httplib::Response& res) { send_json(res, {{"ready", true}}); });
    svr_.Get("/v2", [=](const httplib::Request&, httplib::Response& res) {
      send_json(res, {{"name", "vinfer"}, {"version", version()}, {"extensions", {"binary_tensor_data"}}});
    });
    svr_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics_.render(), "text/plain; version=0.0.4");
    });
    static const std::string kModel = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
    svr_.Get(kModel + "/ready", [this, send_json](const httplib::Request& req, httplib::Response& res) {
      if (const Served* s = find(req, res)) send_json(res, {{"name", s->spec.name}, {"ready", true}});
    });
    svr_.Get(kModel, [this, send_json](const httplib::Request& req, httplib::Response& res) {
      if (const Served* s = find(req, res)) send_json(res, model_metadata(*s));
    });
    // The body read here, whatever its declared type: the HTTP library caps
    // a form-urlencoded one (curl --data-binary's default) at 8 KiB.
    svr_.Post(kModel + "/infer", [this](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
      std::string body;
      if (req.is_multipart_form_data()) {
        res.status = 415;
        res.set_content(error_body("a multipart body is not an infer request: send the JSON (and binary data) as the body"),
                        "application/json");
        return;
      }
      if (!read([&body](const char* data, std::size_t n) {
            body.append(data, n);
            return true;
          })) {
        if (res.status < 400) res.status = 400;
        res.set_content(error_body(res.status == 413 ? "the body exceeds the server's limit (--max-body-mb)"
                                                     : "the body could not be read"),
                        "application/json");
        return;
      }
      infer(req, body, res);
    });
  }

  Served* find(const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches[1];
    const std::string ver = req.matches.size() > 2 ? std::string(req.matches[2]) : "";
    auto it = served_.find(name);
    if (it == served_.end() || (!ver.empty() && ver != "1")) {
      res.status = 404;
      res.set_content(error_body(it == served_.end() ? "no model named '" + name + "'" : "model '" + name + "' has version 1 only"),
                      "application/json");
      return nullptr;
    }
    return it->second.get();
  }

  void infer(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    const auto t0 = Clock::now();
    Served* s = find(req, res);
    if (!s) return metrics_.request("", 404);
    try {
      run_infer(*s, req, body, res);
      res.status = 200;
    } catch (const RequestError& e) {
      res.status = e.status();
      res.set_content(error_body(e.what()), "application/json");
    } catch (const Error& e) {
      res.status = status_of(e);
      res.set_content(error_body(e.what()), "application/json");
    }
    metrics_.request(s->spec.name, res.status);
    metrics_.stage(s->spec.name, "request", ms_since(t0));
  }

  void run_infer(Served& s, const httplib::Request& req, const std::string& body, httplib::Response& res) {  // throws RequestError, Error
    std::optional<std::size_t> header_length;
    if (req.has_header("Inference-Header-Content-Length")) {
      const std::string v = req.get_header_value("Inference-Header-Content-Length");
      std::size_t n = 0;
      const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || p != v.data() + v.size()) fail(400, "Inference-Header-Content-Length is not a size");
      header_length = n;
    }
    InferRequest r = parse_infer_request(body, header_length);
    if (r.inputs.size() != 1) fail(400, "give one input: 'image' (BYTES) or 'input' (FP32)");
    for (const RequestedOutput& o : r.outputs)
      if (std::find(std::begin(kOutputs), std::end(kOutputs), o.name) == std::end(kOutputs))
        fail(400, "no output named '" + o.name + "'");
    Tensor& in = r.inputs[0];
    const std::size_t per = static_cast<std::size_t>(numel(s.input_shape));
    std::vector<float> x;
    std::int64_t n = 0;
    const auto t_pre = Clock::now();
    if (in.datatype == "BYTES") {
      if (in.shape.empty() || in.shape.size() > 2 || (in.shape.size() == 2 && in.shape[1] != 1))
        fail(400, "input '" + in.name + "': BYTES shape must be [N] or [N, 1] (N encoded images)");
      n = in.shape[0];
      if (n < 1) fail(400, "input '" + in.name + "' holds no image");
      Preprocessor pre(s.preset);
      if (o_.max_pixels > 0) pre.decode_options().max_pixels = o_.max_pixels;
      x.resize(per * static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const std::string& bytes = in.bytes[static_cast<std::size_t>(i)];
        try {
          pre.run_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "image " + std::to_string(i),
                         x.data() + per * static_cast<std::size_t>(i));
        } catch (const Error& e) {
          fail(status_of(e), e.what());
        }
      }
    } else {
      Shape want = s.input_shape;
      bool fits = in.shape.size() == want.size() && in.shape[0] >= 1;
      for (std::size_t d = 1; fits && d < want.size(); ++d) fits = in.shape[d] == want[d];
      want[0] = -1;
      if (!fits) fail(400, "input '" + in.name + "': FP32 shape " + shape_str(in.shape) + ", the model takes " + shape_str(want));
      n = in.shape[0];
      x = std::move(in.fp32);
    }
    metrics_.stage(s.spec.name, "preprocess", ms_since(t_pre));
    const std::size_t c = static_cast<std::size_t>(s.classes);
    std::vector<float> logits(c * static_cast<std::size_t>(n));
    if (!s.batchers.empty()) {
      batched(s, x.data(), n, logits.data());
    } else {
      const auto t_queue = Clock::now();
      Lease lease(s, o_);
      metrics_.stage(s.spec.name, "queue", ms_since(t_queue));
      const auto t_run = Clock::now();
      lease.model().run_items(x.data(), n, logits.data());
      metrics_.stage(s.spec.name, "inference", ms_since(t_run));
    }
    const int k = std::min(r.top_k, s.classes);
    std::vector<Tensor> out(5);
    out[0] = {"logits", "FP32", {n, static_cast<std::int64_t>(c)}, {}, logits, {}};
    out[1] = {"probabilities", "FP32", {n, static_cast<std::int64_t>(c)}, {}, {}, {}};
    out[2] = {"topk_indices", "INT64", {n, k}, {}, {}, {}};
    out[3] = {"topk_labels", "BYTES", {n, k}, {}, {}, {}};
    out[4] = {"topk_probabilities", "FP32", {n, k}, {}, {}, {}};
    for (std::int64_t i = 0; i < n; ++i) {
      const float* l = logits.data() + c * static_cast<std::size_t>(i);
      const std::vector<float> p = s.probabilities ? std::vector<float>(l, l + c) : softmax(l, s.classes);
      out[1].fp32.insert(out[1].fp32.end(), p.begin(), p.end());
      for (const int j : topk_indices(p.data(), s.classes, k)) {
        out[2].int64.push_back(j);
        out[3].bytes.push_back(imagenet_label(j));
        out[4].fp32.push_back(p[static_cast<std::size_t>(j)]);
      }
    }
    const Response reply = make_infer_response(s.spec.name, "1", r, out);
    if (reply.json_length) {
      res.set_header("Inference-Header-Content-Length", std::to_string(*reply.json_length));
      res.set_content(reply.body, "application/octet-stream");
    } else {
      res.set_content(reply.body, "application/json");
    }
  }

  [[noreturn]] static void fail(int status, const std::string& why) { throw RequestError(status, why); }

  // Queues a request's images for the batchers and waits until all ran.
  void batched(Served& s, const float* x, std::int64_t n, float* y) {
    Job job;
    job.x = x, job.y = y, job.n = n, job.queued = Clock::now();
    std::unique_lock<std::mutex> lock(s.m);
    if (static_cast<int>(s.queue.size()) >= o_.max_queue)
      throw RequestError(503, "busy: " + std::to_string(s.queue.size()) + " requests are waiting for " + s.spec.name);
    s.queue.push_back(&job);
    s.queued.notify_one();
    auto finished = [&] { return job.done == job.n || (job.error && job.done + (job.n - job.taken) == job.n); };
    // The time limit counts until a batcher takes the first image; the images
    // taken are then finished (they are written into this request's memory).
    if (!s.finished.wait_for(lock, std::chrono::milliseconds(o_.request_timeout_ms), [&] { return finished() || job.taken > 0; })) {
      s.queue.erase(std::find(s.queue.begin(), s.queue.end(), &job));
      throw RequestError(503, "timed out after " + std::to_string(o_.request_timeout_ms) + " ms waiting for " + s.spec.name);
    }
    s.finished.wait(lock, finished);
    if (job.taken < job.n) s.queue.erase(std::find(s.queue.begin(), s.queue.end(), &job));  // (after an error)
    lock.unlock();
    metrics_.stage(s.spec.name, "queue", job.queue_ms);
    if (job.error) std::rethrow_exception(job.error);
  }

  // One instance's batcher: waits for queued images, up to batch_delay_ms
  // from the oldest for a full batch, runs what it took, hands the outputs back.
  void batch_loop(Served& s, Model& model) {
    const auto per = static_cast<std::size_t>(numel(s.input_shape)), c = static_cast<std::size_t>(s.classes);
    const auto max_batch = static_cast<std::size_t>(model.batch());
    std::vector<float> in(model.input_size()), out(model.output_size());
    struct Part {
      Job* job;
      std::int64_t first, count;
    };
    std::vector<Part> parts;
    for (;;) {
      std::unique_lock<std::mutex> lock(s.m);
      s.queued.wait(lock, [&] { return s.stopping || !s.queue.empty(); });
      if (s.stopping && s.queue.empty()) return;
      const auto deadline = s.queue.front()->queued + std::chrono::milliseconds(o_.batch_delay_ms);
      auto pending = [&] {
        std::size_t k = 0;
        for (const Job* j : s.queue) k += static_cast<std::size_t>(j->n - j->taken);
        return k;
      };
      s.queued.wait_until(lock, deadline, [&] { return s.stopping || pending() >= max_batch; });
      parts.clear();
      std::size_t rows = 0;
      while (rows < max_batch && !s.queue.empty()) {
        Job* j = s.queue.front();
        const std::int64_t k = std::min<std::int64_t>(j->n - j->taken, static_cast<std::int64_t>(max_batch - rows));
        parts.push_back({j, j->taken, k});
        if (j->queue_ms < 0) j->queue_ms = ms_since(j->queued);
        j->taken += k, rows += static_cast<std::size_t>(k);
        if (j->taken == j->n) s.queue.pop_front();
      }
      if (!s.queue.empty()) s.queued.notify_one();  // more for another batcher
      lock.unlock();
      s.finished.notify_all();  // the requests whose images were taken: no longer within the time limit
      if (rows == 0) continue;
      std::size_t row = 0;
      for (const Part& p : parts)
        for (std::int64_t i = 0; i < p.count; ++i, ++row)
          std::copy_n(p.job->x + static_cast<std::size_t>(p.first + i) * per, per, in.data() + row * per);
      const auto t_run = Clock::now();
      std::exception_ptr error;
      try {
        model.run_items(in.data(), static_cast<std::int64_t>(rows), out.data());
      } catch (...) {
        error = std::current_exception();
      }
      metrics_.stage(s.spec.name, "inference", ms_since(t_run));
      metrics_.batch(s.spec.name, rows);
      lock.lock();
      row = 0;
      for (const Part& p : parts) {
        if (error) p.job->error = error;
        else std::copy_n(out.data() + row * c, static_cast<std::size_t>(p.count) * c, p.job->y + static_cast<std::size_t>(p.first) * c);
        row += static_cast<std::size_t>(p.count);
        p.job->done += p.count;
      }
      lock.unlock();
      s.finished.notify_all();
    }
  }

  ServeOptions o_;
  std::map<std::string, std::unique_ptr<Served>> served_;
  httplib::Server svr_;
  Metrics metrics_;
};

}  // namespace

ModelSpec parse_model_spec(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(ErrorKind::InvalidArgument, "--model '" + text + "': expected NAME=MODEL[:weights=W][:preset=P]");
  ModelSpec s;
  s.name = text.substr(0, eq);
  if (s.name.find('/') != std::string::npos) throw Error(ErrorKind::InvalidArgument, "--model '" + text + "': a name has no '/'");
  std::string rest = text.substr(eq + 1);
  // Options follow the last ':' that starts "weights=" or "preset=" (a path may hold ':').
  for (;;) {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string::npos) break;
    const std::string opt = rest.substr(colon + 1);
    if (opt.rfind("weights=", 0) == 0) s.weights = opt.substr(8);
    else if (opt.rfind("preset=", 0) == 0) s.preset = opt.substr(7);
    else break;
    rest.resize(colon);
  }
  s.model = rest;
  if (s.model.empty()) throw Error(ErrorKind::InvalidArgument, "--model '" + text + "': no model");
  return s;
}

int serve(const std::vector<ModelSpec>& models, const ServeOptions& options) {
  if (models.empty()) throw Error(ErrorKind::InvalidArgument, "give at least one --model NAME=MODEL");
  // SIGTERM and SIGINT are taken by one thread (blocked in every other,
  // which inherit the mask): it stops the server, which finishes in-flight
  // requests before run() returns.
  sigset_t stop_signals, old_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);
  struct Restore {
    sigset_t mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old_mask};
  Server server(models, options);
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    const timespec tick{0, 100 * 1000 * 1000};
    while (!done) {
      if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) {
        while (!server.running() && !done) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        server.stop();
        return;
      }
    }
  });
  int rc = 0;
  try {
    rc = server.run();
  } catch (...) {
    done = true;
    watcher.join();
    throw;
  }
  done = true;
  watcher.join();
  return rc;
}

}  // namespace vinfer::serve
