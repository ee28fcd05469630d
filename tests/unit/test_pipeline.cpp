// classify_items: results in item order whatever the workers' timing, a bad
// item's error in its place, the last partial batch padded, with one model or
// several (streams), failures of the sink or of a loader's non-vinfer
// exception stopping it cleanly; a single item loaded without a loader thread.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "vinfer/error.hpp"
#include "vinfer/pipeline.hpp"

using namespace vinfer;

namespace {

// [N,3,8,8] -> the three channel means, [N,3]: each item's result is known.
Model channel_means(int batch) {
  Graph g;
  const int x = g.add_input("x", {-1, 3, 8, 8});
  const int p = g.add_node("GlobalAveragePool", {x})[0];
  g.mark_output(g.add_node("Flatten", {p})[0]);
  EngineOptions opt;
  opt.threads = 1;
  opt.batch = batch;
  return Model::from_graph(std::move(g), "means", opt);
}

}  // namespace

TEST(Pipeline, ResultsInOrderWithErrorsInPlace) {
  for (int batch : {1, 4})
    for (int workers : {1, 3})
    for (std::size_t streams : {1, 2, 3}) {
      std::vector<Model> copies;
      for (std::size_t k = 0; k < streams; ++k) copies.push_back(channel_means(batch));
      std::vector<Model*> models;
      for (Model& c : copies) models.push_back(&c);
      PipelineOptions po;
      po.workers = workers;
      po.topk = 1;
      po.keep_logits = true;
      std::vector<ItemResult> got;
      const std::size_t failed = classify_items(
          models, model_preset(copies[0], "torchvision"), 11,
          [](std::size_t i, Preprocessor&, float* x) {
            // Later items finish first now and then.
            if (i % 3 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            if (i == 5 || i == 10) throw Error(ErrorKind::BadInput, "item " + std::to_string(i) + ": bad");
            for (int c = 0; c < 3; ++c)
              for (int k = 0; k < 64; ++k) x[c * 64 + k] = static_cast<float>(i) + (c == static_cast<int>(i % 3) ? 1.f : 0.f);
          },
          [&](ItemResult&& r) { got.push_back(std::move(r)); }, po);
      EXPECT_EQ(failed, 2u);
      ASSERT_EQ(got.size(), 11u);
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].index, i);
        if (i == 5 || i == 10) {
          EXPECT_EQ(got[i].error, "item " + std::to_string(i) + ": bad");
          EXPECT_TRUE(got[i].top.empty());
          continue;
        }
        EXPECT_TRUE(got[i].error.empty()) << got[i].error;
        ASSERT_EQ(got[i].top.size(), 1u);
        EXPECT_EQ(got[i].top[0], static_cast<int>(i % 3))
            << "batch " << batch << ", workers " << workers << ", streams " << streams << ", item " << i;
        ASSERT_EQ(got[i].logits.size(), 3u);
        EXPECT_FLOAT_EQ(got[i].logits[static_cast<std::size_t>(i % 3)], static_cast<float>(i) + 1.f);
      }
    }
}

// Several loaders on a small ring: a loader that claimed an item must get
// that item's slot before a loader that claimed a later item for the same
// slot (else the streams wait for the earlier item and the later loader for
// the streams: a deadlock). Loaders of items that are 1 mod 3 are slow, so
// that the others run ahead by a whole ring.
TEST(Pipeline, LoadersTakeSlotsInItemOrder) {
  for (int queue : {1, 2, 3})
    for (int workers : {2, 4}) {
      Model m = channel_means(1);
      PipelineOptions po;
      po.workers = workers;
      po.queue = queue;
      po.topk = 1;
      std::size_t seen = 0;
      const std::size_t count = 60;
      const std::size_t failed = classify_items(
          m, model_preset(m, "torchvision"), count,
          [](std::size_t i, Preprocessor&, float* x) {
            if (i % 3 == 1) std::this_thread::sleep_for(std::chrono::microseconds(300));
            std::fill(x, x + 3 * 64, static_cast<float>(i));
          },
          [&](ItemResult&& r) { EXPECT_EQ(r.index, seen++); }, po);
      EXPECT_EQ(failed, 0u);
      EXPECT_EQ(seen, count) << "queue " << queue << " workers " << workers;
    }
}

TEST(Pipeline, SinkAndLoaderFailuresStopIt) {
  Model m = channel_means(2);
  const Preset p = model_preset(m, "torchvision");
  auto fill = [](std::size_t, Preprocessor&, float* x) { std::fill(x, x + 192, 0.5f); };
  std::size_t seen = 0;
  EXPECT_THROW(classify_items(m, p, 1000, fill,
                              [&](ItemResult&&) {
                                if (++seen == 3) throw std::runtime_error("disk full");
                              }),
               std::runtime_error);
  EXPECT_EQ(seen, 3u);
  // (many times: the loader may stop the pipeline while the stream is
  // between items, which once ended the run as if it had finished)
  for (int round = 0; round < 200; ++round)
    EXPECT_THROW(classify_items(
                     m, p, 1000, [](std::size_t i, Preprocessor&, float*) { if (i == 7) throw std::logic_error("bug"); },
                     [](ItemResult&&) {}),
                 std::logic_error)
        << "round " << round;
  EXPECT_EQ(classify_items(m, p, 0, fill, [](ItemResult&&) { FAIL(); }), 0u);
  // With streams: the same from their threads.
  Model m2 = channel_means(2);
  const std::vector<Model*> both{&m, &m2};
  seen = 0;
  EXPECT_THROW(classify_items(both, p, 1000, fill,
                              [&](ItemResult&&) {
                                if (++seen == 5) throw std::runtime_error("disk full");
                              }),
               std::runtime_error);
  EXPECT_THROW(classify_items(
                   both, p, 1000, [](std::size_t i, Preprocessor&, float*) { if (i == 9) throw std::logic_error("bug"); },
                   [](ItemResult&&) {}),
               std::logic_error);
  EXPECT_THROW(classify_items(std::vector<Model*>{}, p, 1, fill, [](ItemResult&&) {}), Error);
  PipelineOptions bad;
  bad.workers = 0;
  EXPECT_THROW(classify_items(m, p, 1, fill, [](ItemResult&&) {}, bad), Error);
}

TEST(Pipeline, OneItemLoadsOnTheCallingThread) {
  for (int batch : {1, 4}) {
    Model m = channel_means(batch);
    const Preset p = model_preset(m, "torchvision");
    PipelineOptions po;
    po.keep_logits = true;
    const std::thread::id caller = std::this_thread::get_id();
    std::thread::id loader;
    std::vector<ItemResult> got;
    EXPECT_EQ(classify_items(
                  m, p, 1,
                  [&](std::size_t i, Preprocessor&, float* x) {
                    loader = std::this_thread::get_id();
                    EXPECT_EQ(i, 0u);
                    for (int k = 0; k < 192; ++k) x[k] = k < 64 ? 0.f : k < 128 ? 2.f : 1.f;
                  },
                  [&](ItemResult&& r) { got.push_back(std::move(r)); }, po),
              0u);
    EXPECT_EQ(loader, caller);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].error.empty());
    ASSERT_EQ(got[0].top.size(), 3u);  // (topk 5 of 3 outputs)
    EXPECT_EQ(got[0].top, (std::vector<int>{1, 2, 0}));
    EXPECT_EQ(got[0].logits, (std::vector<float>{0.f, 2.f, 1.f}));
    got.clear();
    EXPECT_EQ(classify_items(
                  m, p, 1, [](std::size_t, Preprocessor&, float*) { throw Error(ErrorKind::BadInput, "x.jpg: truncated"); },
                  [&](ItemResult&& r) { got.push_back(std::move(r)); }),
              1u);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].error, "x.jpg: truncated");
    EXPECT_TRUE(got[0].top.empty());
    EXPECT_THROW(classify_items(m, p, 1, [](std::size_t, Preprocessor&, float*) { throw std::logic_error("bug"); },
                                [](ItemResult&&) {}),
                 std::logic_error);
    // The caller's preprocessor, where given (and one that does not make the input refused).
    Preprocessor mine(p, 1);
    PipelineOptions with;
    with.preprocessor = &mine;
    with.decode.max_pixels = 1234;
    const Preprocessor* used = nullptr;
    classify_items(m, p, 1, [&](std::size_t, Preprocessor& pre, float* x) { used = &pre; std::fill(x, x + 192, 0.f); },
                   [](ItemResult&&) {}, with);
    EXPECT_EQ(used, &mine);
    EXPECT_EQ(mine.decode_options().max_pixels, 1234u);
    Preprocessor other(preset("torchvision", 16), 1);
    with.preprocessor = &other;
    EXPECT_THROW(classify_items(m, p, 1, [](std::size_t, Preprocessor&, float*) {}, [](ItemResult&&) {}, with), Error);
  }
}
