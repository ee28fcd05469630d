// classify_items: loader threads -> a bounded ring of input tensors -> the
// model in batches on the calling thread -> results in item order.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "vinfer/error.hpp"
#include "vinfer/pipeline.hpp"
#include "vinfer/postprocess.hpp"

namespace vinfer {
namespace {

struct Slot {
  std::vector<float> tensor;
  std::string error;
  bool ready = false;
};

// Where an item of the batch being gathered went: a row of the batch, or its error.
struct Member {
  std::size_t index;
  std::string error;
  std::size_t row;
};

}  // namespace

std::size_t classify_items(Model& model, const Preset& preset, std::size_t count, const ItemLoader& load,
                           const ItemSink& sink, const PipelineOptions& options) {
  if (options.workers < 1) throw Error(ErrorKind::InvalidArgument, "pipeline: workers must be at least 1");
  if (options.queue < 0) throw Error(ErrorKind::InvalidArgument, "pipeline: queue must not be negative");
  const auto batch = static_cast<std::size_t>(model.batch());
  const std::size_t in_item = model.input_size() / batch, out_item = model.output_size() / batch;
  if (Preprocessor(preset).tensor_size() != in_item)
    throw Error(ErrorKind::InvalidArgument, "preset '" + preset.name + "' does not make the model's input " + shape_str(model.input_shape()));
  const auto workers = static_cast<std::size_t>(options.workers);
  const std::size_t ring = options.queue > 0 ? static_cast<std::size_t>(options.queue) : 2 * batch + workers;
  const int n_out = static_cast<int>(out_item);
  const int k = std::min(options.topk, n_out);
  const bool probs = model.outputs_probabilities();

  std::vector<Slot> slots(ring);
  for (Slot& s : slots) s.tensor.resize(in_item);
  std::mutex mu;
  std::condition_variable filled, freed;
  std::size_t next = 0;      // the next item a worker takes
  std::size_t released = 0;  // items the model's side has taken out of the ring
  bool stop = false;
  std::exception_ptr worker_failure;

  auto work = [&] {
    Preprocessor pre(preset, 1);
    pre.decode_options() = options.decode;
    for (;;) {
      std::size_t i;
      {
        std::unique_lock<std::mutex> lk(mu);
        if (stop || next >= count) return;
        i = next++;
        freed.wait(lk, [&] { return stop || i < released + ring; });
        if (stop) return;
      }
      Slot& s = slots[i % ring];
      s.error.clear();
      try {
        load(i, pre, s.tensor.data());
      } catch (const Error& e) {
        s.error = e.what();
        if (s.error.empty()) s.error = "failed";
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!worker_failure) worker_failure = std::current_exception();
        stop = true;
        filled.notify_all();
        freed.notify_all();
        return;
      }
      {
        std::lock_guard<std::mutex> lk(mu);
        s.ready = true;
      }
      filled.notify_all();
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < std::min(workers, std::max<std::size_t>(count, 1)); ++w) threads.emplace_back(work);
  auto finish = [&] {
    {
      std::lock_guard<std::mutex> lk(mu);
      stop = true;
    }
    freed.notify_all();
    filled.notify_all();
    for (std::thread& t : threads) t.join();
  };

  std::size_t failed = 0;
  try {
    std::vector<float> in(model.input_size()), out(model.output_size());
    std::vector<Member> members;
    for (std::size_t i = 0; i < count;) {
      members.clear();
      std::size_t rows = 0;
      while (i < count && rows < batch) {
        Slot& s = slots[i % ring];
        {
          std::unique_lock<std::mutex> lk(mu);
          filled.wait(lk, [&] { return s.ready || worker_failure; });
          if (worker_failure) std::rethrow_exception(worker_failure);
        }
        if (s.error.empty()) {
          std::copy(s.tensor.begin(), s.tensor.end(), in.begin() + static_cast<std::ptrdiff_t>(rows * in_item));
          members.push_back({i, {}, rows++});
        } else {
          members.push_back({i, std::move(s.error), 0});
        }
        {
          std::lock_guard<std::mutex> lk(mu);
          s.ready = false;
          released = ++i;
        }
        freed.notify_all();
      }
      if (rows > 0) model.run_items(in.data(), static_cast<std::int64_t>(rows), out.data());
      for (Member& m : members) {
        ItemResult r;
        r.index = m.index;
        if (!m.error.empty()) {
          r.error = std::move(m.error);
          ++failed;
        } else {
          const float* y = out.data() + m.row * out_item;
          const std::vector<float> p = probs ? std::vector<float>(y, y + out_item) : softmax(y, n_out);
          r.top = topk_indices(p.data(), n_out, k);
          for (int c : r.top) r.prob.push_back(p[static_cast<std::size_t>(c)]);
          if (options.keep_logits) r.logits.assign(y, y + out_item);
        }
        sink(std::move(r));
      }
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return failed;
}

}  // namespace vinfer
