#include "util/thread_pool.hpp"

#include "util/cpu_grant.hpp"
#include "util/cpu_relax.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace vinfer::detail {
namespace {

// Waking a sleeping thread through a futex costs tens of microseconds on
// these VMs, as much as a whole 470x470 resize; so both sides spin this long
// on an atomic before they sleep. Back-to-back regions (a resize loop, rows
// then columns) never sleep; a thread idle for longer gives its core back.
constexpr auto kSpin = std::chrono::microseconds(200);

// Set while this thread runs a chunk: a parallel_for from inside one runs its
// chunks in order on this thread (the pool runs one region at a time, so
// waiting for it there would never end).
thread_local bool tls_in_chunk = false;

struct InChunk {
  bool saved = tls_in_chunk;
  InChunk() { tls_in_chunk = true; }
  ~InChunk() { tls_in_chunk = saved; }
};

template <typename Done>
bool spin_until(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    cpu_relax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return false;
  }
}

class Pool {
 public:
  static Pool& instance() {
    static Pool pool;
    return pool;
  }

  void run(int n, int chunks, const std::function<void(int, int)>& fn) {
    std::unique_lock run_lock(run_mutex_);  // one parallel region at a time
    ensure_workers(chunks - 1);
    {
      std::lock_guard lock(mutex_);
      fn_ = &fn;
      n_ = n;
      chunks_ = chunks;
      next_ = 1;
      pending_.store(chunks - 1);
      error_ = nullptr;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    std::exception_ptr local;
    try {
      auto [b, e] = range(0);
      InChunk in;
      fn(b, e);
    } catch (...) {
      local = std::current_exception();
    }
    spin_until([&] { return pending_.load() == 0; });
    std::unique_lock lock(mutex_);
    done_cv_.wait(lock, [&] { return pending_.load() == 0; });
    fn_ = nullptr;
    if (local) std::rethrow_exception(local);
    if (error_) std::rethrow_exception(error_);
  }

  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      stop_flag_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  std::pair<int, int> range(int chunk) const {
    const long long b = static_cast<long long>(n_) * chunk / chunks_;
    const long long e = static_cast<long long>(n_) * (chunk + 1) / chunks_;
    return {static_cast<int>(b), static_cast<int>(e)};
  }

  void ensure_workers(int count) {
    while (static_cast<int>(workers_.size()) < count) workers_.emplace_back([this] { loop(); });
  }

  void loop() {
    unsigned long seen = 0;
    for (;;) {
      spin_until([&] { return generation_.load() != seen || stop_flag_.load(); });
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stop_ || (generation_.load() != seen && next_ < chunks_); });
      if (stop_) return;
      seen = generation_.load();
      const int chunk = next_++;
      const auto [b, e] = range(chunk);
      const auto* fn = fn_;
      lock.unlock();
      std::exception_ptr err;
      try {
        InChunk in;
        (*fn)(b, e);
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      if (err && !error_) error_ = err;
      if (pending_.fetch_sub(1) == 1) done_cv_.notify_one();
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* fn_ = nullptr;
  int n_ = 0, chunks_ = 0, next_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<unsigned long> generation_{0};
  bool stop_ = false;
  std::atomic<bool> stop_flag_{false};
  std::exception_ptr error_;
};

}  // namespace

int hardware_threads() { return cpu_grant().cpus; }

void parallel_for(int n, int threads, const std::function<void(int, int)>& fn) {
  if (n <= 0) return;
  const int chunks = std::min(n, std::max(1, threads));
  if (chunks == 1) {
    fn(0, n);
    return;
  }
  if (tls_in_chunk) {  // nested: the same chunks, one after another
    for (int c = 0; c < chunks; ++c)
      fn(static_cast<int>(static_cast<long long>(n) * c / chunks), static_cast<int>(static_cast<long long>(n) * (c + 1) / chunks));
    return;
  }
  Pool::instance().run(n, chunks, fn);
}

}  // namespace vinfer::detail
