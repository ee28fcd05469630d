// classify_items: loader threads -> a bounded ring of input tensors -> the
// models (streams), each taking whole batches -> results in item order.
#include <algorithm>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "vinfer/error.hpp"
#include "vinfer/pipeline.hpp"
#include "vinfer/postprocess.hpp"

namespace vinfer {
namespace {

constexpr std::size_t kFree = std::numeric_limits<std::size_t>::max();

// Slot k of a ring of R holds items k, k + R, k + 2R, ... in that order:
// a loader that claimed a later item for it waits for its turn, so the
// stream waiting for the earlier one cannot be left waiting forever.
struct Slot {
  std::vector<float> tensor;
  std::string error;
  std::size_t item = kFree;  // the item it holds (or is being loaded into it)
  std::size_t turn = 0;      // the next item it takes
  bool ready = false;
};

// Where an item of a batch went: a row of the batch, or its error.
struct Member {
  std::size_t index;
  std::string error;
  std::size_t row;
};

// Item i's result: its error, or the top-k of its output y.
ItemResult result(std::size_t i, std::string&& error, const float* y, std::size_t out_item, int k, bool probs,
                  bool keep_logits) {
  ItemResult r;
  r.index = i;
  if (!error.empty()) {
    r.error = std::move(error);
    return r;
  }
  const int n = static_cast<int>(out_item);
  const std::vector<float> p = probs ? std::vector<float>(y, y + out_item) : softmax(y, n);
  r.top = topk_indices(p.data(), n, k);
  for (int c : r.top) r.prob.push_back(p[static_cast<std::size_t>(c)]);
  if (keep_logits) r.logits.assign(y, y + out_item);
  return r;
}

// Loads an item with `load`: its error message, empty when it loaded.
std::string load_item(const ItemLoader& load, std::size_t i, Preprocessor& pre, float* x) {
  try {
    load(i, pre, x);
  } catch (const Error& e) {
    const std::string m = e.what();
    return m.empty() ? "failed" : m;
  }
  return {};
}

class Pipeline {
 public:
  Pipeline(const std::vector<Model*>& models, const Preset& preset, std::size_t count, const ItemLoader& load,
           const PipelineOptions& o)
      : models_(models), preset_(preset), count_(count), load_(load), o_(o) {
    const Model& m = *models.front();
    batch_ = static_cast<std::size_t>(m.batch());
    in_item_ = m.input_size() / batch_;
    out_item_ = m.output_size() / batch_;
    k_ = std::min(o.topk, static_cast<int>(out_item_));
    probs_ = m.outputs_probabilities();
    for (const Model* other : models)
      if (other->input_shape() != m.input_shape() || other->output_shape() != m.output_shape())
        throw Error(ErrorKind::InvalidArgument, "pipeline: the models differ in their shapes");
    if (Preprocessor(preset).tensor_size() != in_item_)
      throw Error(ErrorKind::InvalidArgument, "preset '" + preset.name + "' does not make the model's input " + shape_str(m.input_shape()));
    if (models.size() == 1 && count == 1) return;  // run_here loads it: no loader, no ring
    const auto workers = static_cast<std::size_t>(o.workers);
    // Each stream's batch in flight and the next, plus one per loader.
    const std::size_t ring = o.queue > 0 ? static_cast<std::size_t>(o.queue) : 2 * batch_ * models.size() + workers;
    slots_.resize(std::max(ring, batch_));
    for (std::size_t k = 0; k < slots_.size(); ++k) slots_[k].tensor.resize(in_item_), slots_[k].turn = k;
    for (std::size_t w = 0; w < std::min(workers, std::max<std::size_t>(count, 1)); ++w) loaders_.emplace_back([this] { load_loop(); });
  }

  ~Pipeline() {
    stop();
    for (std::thread& t : loaders_) t.join();
  }

  // One stream, on this thread: results straight to the sink. A single item
  // is loaded here too (a loader thread would only add its start and
  // hand-over).
  std::size_t run_here(const ItemSink& sink) {
    if (count_ == 1) {
      Model& m = *models_.front();
      std::optional<Preprocessor> own;
      Preprocessor& pre = o_.preprocessor ? *o_.preprocessor : own.emplace(preset_, m.threads());
      if (pre.tensor_size() != in_item_) throw Error(ErrorKind::InvalidArgument, "pipeline: the preprocessor does not make the model's input");
      pre.decode_options() = o_.decode;
      std::vector<float> in(m.input_size()), out(m.output_size());
      std::string error = load_item(load_, 0, pre, in.data());
      const std::size_t failed = error.empty() ? 0 : 1;
      if (!failed) m.run_items(in.data(), 1, out.data());
      sink(result(0, std::move(error), out.data()));
      return failed;
    }
    std::size_t failed = 0;
    stream(*models_.front(), [&](ItemResult&& r) {
      failed += r.error.empty() ? 0 : 1;
      sink(std::move(r));
    });
    return failed;
  }

  // A thread per model; this thread hands their results to the sink in order.
  std::size_t run_streams(const ItemSink& sink) {
    std::map<std::size_t, ItemResult> done;
    std::vector<std::thread> streams;
    for (Model* m : models_)
      streams.emplace_back([this, m, &done] {
        try {
          stream(*m, [&](ItemResult&& r) {
            std::lock_guard<std::mutex> lock(mu_);
            const std::size_t i = r.index;
            done.emplace(i, std::move(r));
            results_.notify_all();
          });
        } catch (...) {
          fail(std::current_exception());
        }
      });
    std::size_t failed = 0;
    std::exception_ptr error;
    try {
      for (std::size_t next = 0; next < count_; ++next) {
        ItemResult r;
        {
          std::unique_lock<std::mutex> lock(mu_);
          results_.wait(lock, [&] { return done.count(next) != 0 || failure_; });
          if (failure_) std::rethrow_exception(failure_);
          r = std::move(done.at(next));
          done.erase(next);
        }
        failed += r.error.empty() ? 0 : 1;
        sink(std::move(r));
      }
    } catch (...) {
      error = std::current_exception();
      stop();
    }
    for (std::thread& t : streams) t.join();
    if (error) std::rethrow_exception(error);
    return failed;
  }

 private:
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    filled_.notify_all();
    freed_.notify_all();
    results_.notify_all();
  }
  void fail(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_) failure_ = e;
    }
    stop();
  }

  void load_loop() {
    Preprocessor pre(preset_, 1);
    pre.decode_options() = o_.decode;
    for (;;) {
      std::size_t i;
      Slot* s;
      {
        std::unique_lock<std::mutex> lock(mu_);
        if (stopping_ || next_load_ >= count_) return;
        i = next_load_++;
        s = &slots_[i % slots_.size()];
        freed_.wait(lock, [&] { return stopping_ || (s->item == kFree && s->turn == i); });
        if (stopping_) return;
        s->item = i;
      }
      try {
        s->error = load_item(load_, i, pre, s->tensor.data());
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        s->ready = true;
      }
      filled_.notify_all();
    }
  }

  // Claims the next batch of items, waits for them, runs them, emits their
  // results (in order within the batch); until no item is left.
  template <class Emit>
  void stream(Model& model, Emit&& emit) {
    std::vector<float> in(model.input_size()), out(model.output_size());
    std::vector<Member> members;
    for (;;) {
      std::size_t first, last;
      {
        std::lock_guard<std::mutex> lock(mu_);
        // (a loader's failure is rethrown here too: it may stop the
        // pipeline before this stream waits for the item that failed)
        if (failure_) std::rethrow_exception(failure_);
        if (stopping_ || next_claim_ >= count_) return;
        first = next_claim_;
        last = next_claim_ = std::min(count_, first + batch_);
      }
      members.clear();
      std::size_t rows = 0;
      for (std::size_t i = first; i < last; ++i) {
        Slot& s = slots_[i % slots_.size()];
        {
          std::unique_lock<std::mutex> lock(mu_);
          filled_.wait(lock, [&] { return (s.item == i && s.ready) || failure_ || stopping_; });
          if (failure_) std::rethrow_exception(failure_);
          if (stopping_) return;
        }
        if (s.error.empty()) {
          std::copy(s.tensor.begin(), s.tensor.end(), in.begin() + static_cast<std::ptrdiff_t>(rows * in_item_));
          members.push_back({i, {}, rows++});
        } else {
          members.push_back({i, std::move(s.error), 0});
        }
        {
          std::lock_guard<std::mutex> lock(mu_);
          s.item = kFree, s.ready = false, s.turn = i + slots_.size();
        }
        freed_.notify_all();
      }
      if (rows > 0) model.run_items(in.data(), static_cast<std::int64_t>(rows), out.data());
      for (Member& m : members) emit(result(m.index, std::move(m.error), out.data() + m.row * out_item_));
    }
  }

  const std::vector<Model*>& models_;
  const Preset& preset_;
  const std::size_t count_;
  const ItemLoader& load_;
  const PipelineOptions& o_;
  ItemResult result(std::size_t i, std::string&& error, const float* y) const {
    return vinfer::result(i, std::move(error), y, out_item_, k_, probs_, o_.keep_logits);
  }

  std::size_t batch_ = 1, in_item_ = 0, out_item_ = 0;
  int k_ = 0;
  bool probs_ = false;
  std::vector<Slot> slots_;
  std::mutex mu_;
  std::condition_variable filled_, freed_, results_;
  std::size_t next_load_ = 0, next_claim_ = 0;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::vector<std::thread> loaders_;
};

}  // namespace

std::size_t classify_items(const std::vector<Model*>& models, const Preset& preset, std::size_t count, const ItemLoader& load,
                           const ItemSink& sink, const PipelineOptions& options) {
  if (models.empty() || std::find(models.begin(), models.end(), nullptr) != models.end())
    throw Error(ErrorKind::InvalidArgument, "pipeline: no model");
  if (options.workers < 1) throw Error(ErrorKind::InvalidArgument, "pipeline: workers must be at least 1");
  if (options.queue < 0) throw Error(ErrorKind::InvalidArgument, "pipeline: queue must not be negative");
  Pipeline p(models, preset, count, load, options);
  return models.size() == 1 ? p.run_here(sink) : p.run_streams(sink);
}

std::size_t classify_items(Model& model, const Preset& preset, std::size_t count, const ItemLoader& load, const ItemSink& sink,
                           const PipelineOptions& options) {
  return classify_items(std::vector<Model*>{&model}, preset, count, load, sink, options);
}

}  // namespace vinfer
