// The seed scenario: file -> top-k, one image at a time, timed per stage.
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "vinfer/bench.hpp"
#include "vinfer/error.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/postprocess.hpp"

namespace vinfer {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

enum { kRead, kDecode, kResize, kNormalize, kInfer, kTopk };

// What preprocessing hands to inference: the tensor, or with
// device_preprocess the decoded image (Model::run_image resizes it).
struct Input {
  std::vector<float> tensor;
  ImageU8 image;
};

void preprocess_stages(Preprocessor& pre, const std::string& path, Input& in, bool device_prep, IterationTimes& it) {
  if (device_prep) pre.decode_file(path, in.image);
  else pre.run_file(path, in.tensor.data());
  const Preprocessor::Timings& t = pre.last_timings();
  it.stage_ms[kRead] = t.read_ms;
  it.stage_ms[kDecode] = t.decode_ms;
  it.stage_ms[kResize] = t.resize_ms;
  it.stage_ms[kNormalize] = t.normalize_ms;
}

void infer_stages(Model& model, const Preprocessor& pre, const Input& in, bool device_prep, std::vector<float>& logits,
                  int topk, std::vector<int>& top, IterationTimes& it) {
  auto t = Clock::now();
  if (device_prep) model.run_image(in.image.view(), pre.preset(), logits.data());
  else model.run(in.tensor.data(), logits.data());
  it.stage_ms[kInfer] = ms_since(t);
  it.device_ms = model.last_run_stages();
  t = Clock::now();
  // Top-k of the logits: softmax is monotonic, so the classes are the same; the
  // probabilities of those k are what a caller prints.
  top = topk_indices(logits.data(), static_cast<int>(logits.size()), topk);
  it.stage_ms[kTopk] = ms_since(t);
}

bool keep_going(const ScenarioOptions& opt, int done, Clock::time_point start) {
  if (done < opt.loops) return true;
  return opt.min_time_s > 0 && std::chrono::duration<double>(Clock::now() - start).count() < opt.min_time_s;
}

ScenarioResult single_stream(Model& model, Preprocessor& pre, const std::vector<std::string>& images, const ScenarioOptions& opt) {
  ScenarioResult r;
  Input in;
  in.tensor.resize(model.input_size());
  std::vector<float> logits(model.output_size());
  const bool dev = opt.device_preprocess;
  IterationTimes it;
  for (int i = 0; i < opt.warmup; ++i) {
    preprocess_stages(pre, images[static_cast<std::size_t>(i) % images.size()], in, dev, it);
    infer_stages(model, pre, in, dev, logits, opt.topk, r.last_topk, it);
  }
  r.iterations.reserve(static_cast<std::size_t>(opt.loops));
  const auto start = Clock::now();
  for (int i = 0; keep_going(opt, i, start); ++i) {
    it.image = static_cast<int>(static_cast<std::size_t>(i) % images.size());
    const auto t0 = Clock::now();
    preprocess_stages(pre, images[static_cast<std::size_t>(it.image)], in, dev, it);
    infer_stages(model, pre, in, dev, logits, opt.topk, r.last_topk, it);
    it.total_ms = ms_since(t0);
    r.iterations.push_back(it);
    if (opt.progress) opt.progress(i + 1, opt.loops);
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

// Two inputs: a helper thread preprocesses image i+1 while this one infers image i.
ScenarioResult pipelined(Model& model, Preprocessor& pre, const std::vector<std::string>& images, const ScenarioOptions& opt) {
  ScenarioResult r;
  Input buf[2];
  for (Input& b : buf) b.tensor.resize(model.input_size());
  std::vector<float> logits(model.output_size());
  const bool dev = opt.device_preprocess;
  struct Slot {
    bool full = false;
    IterationTimes it;
    Clock::time_point started;
    std::exception_ptr error;
  } slot[2];
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  const int total_warm = opt.warmup;
  std::thread producer([&] {
    for (int i = 0;; ++i) {
      Slot& s = slot[i % 2];
      {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [&] { return !s.full || stop; });
        if (stop) return;
      }
      IterationTimes it;
      it.image = static_cast<int>(static_cast<std::size_t>(i) % images.size());
      const auto t0 = Clock::now();
      std::exception_ptr err;
      try {
        preprocess_stages(pre, images[static_cast<std::size_t>(it.image)], buf[i % 2], dev, it);
      } catch (...) {
        err = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        s.it = it;
        s.started = t0;
        s.error = err;
        s.full = true;
      }
      cv.notify_all();
      if (err) return;
    }
  });
  Clock::time_point start = Clock::now();
  std::exception_ptr failure;
  for (int i = 0;; ++i) {
    Slot& s = slot[i % 2];
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return s.full; });
    }
    if (s.error) {
      failure = s.error;
      break;
    }
    IterationTimes it = s.it;
    infer_stages(model, pre, buf[i % 2], dev, logits, opt.topk, r.last_topk, it);
    it.total_ms = ms_since(s.started);
    {
      std::lock_guard<std::mutex> lk(mu);
      s.full = false;
    }
    cv.notify_all();
    if (i + 1 == total_warm) {
      start = Clock::now();
      r.iterations.clear();
      continue;
    }
    if (i >= total_warm) {
      r.iterations.push_back(it);
      const int done = i + 1 - total_warm;
      if (opt.progress) opt.progress(done, opt.loops);
      if (!keep_going(opt, done, start)) break;
    }
  }
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  {
    std::lock_guard<std::mutex> lk(mu);
    stop = true;
  }
  cv.notify_all();
  producer.join();
  if (failure) std::rethrow_exception(failure);
  return r;
}

}  // namespace

const std::array<const char*, kStages>& stage_names() {
  static const std::array<const char*, kStages> n = {"read", "decode", "resize", "normalize", "infer", "topk"};
  return n;
}

ScenarioResult run_scenario(Model& model, Preprocessor& pre, const std::vector<std::string>& images, const ScenarioOptions& opt) {
  if (images.empty()) throw Error(ErrorKind::InvalidArgument, "no images to run");
  if (opt.loops < 1) throw Error(ErrorKind::InvalidArgument, "loops must be at least 1");
  if (pre.tensor_size() != model.input_size())
    throw Error(ErrorKind::InvalidArgument, "preset '" + pre.preset().name + "' makes " + std::to_string(pre.tensor_size()) +
                                                " values but the model takes " + shape_str(model.input_shape()));
  ScenarioResult r = opt.pipeline ? pipelined(model, pre, images, opt) : single_stream(model, pre, images, opt);
  r.throughput_fps = r.wall_s > 0 ? static_cast<double>(r.iterations.size()) / r.wall_s : 0;
  return r;
}

}  // namespace vinfer
