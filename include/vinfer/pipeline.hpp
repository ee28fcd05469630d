// vinfer/pipeline.hpp: many images through one model, as fast as the cores allow.
//
//   vinfer::EngineOptions eo;
//   eo.batch = 8;
//   vinfer::Model m = vinfer::load_model("densenet121", "weights.pth", eo);
//   vinfer::PipelineOptions po;
//   vinfer::classify_items(m, vinfer::model_preset(m, "torchvision"), paths.size(),
//       [&](std::size_t i, vinfer::Preprocessor& pre, float* x) { pre.run_file(paths[i], x); },
//       [&](vinfer::ItemResult&& r) { /* r.index, r.error or r.top / r.prob */ }, po);
//
// Worker threads read, decode and preprocess items into a bounded ring while
// the model runs on whole batches (Model::batch() items; the last one
// padded), so memory stays flat however many items there are.
// Results reach `sink` on the calling thread in item order. An item whose
// loader throws vinfer::Error gets an error result; the others go on.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer {

struct PipelineOptions {
  int workers = 1;          // threads that load items (each with its own Preprocessor)
  int queue = 0;            // items loaded ahead of the model; 0: two batches plus one per worker
  int topk = 5;             // classes per result (at most the model's outputs)
  bool keep_logits = false; // ItemResult::logits filled
  DecodeOptions decode;     // the loaders' decoding (max_pixels, ...; threads 1: a decode
                            // right after a run on two cores finds the model's threads still spinning)
  // A single item through one model is loaded on the calling thread, by this
  // preprocessor if given (a caller classifying one image at a time keeps
  // one between calls; its decode options become `decode`), else by a new
  // one with the model's threads (for the resize). It must make the model's input.
  Preprocessor* preprocessor = nullptr;
};

struct ItemResult {
  std::size_t index = 0;    // the item's position, 0 .. count - 1
  std::string error;        // non-empty: the loader's one-line error; no classes then
  std::vector<int> top;     // class indices, most probable first
  std::vector<float> prob;  // their probabilities (softmax of the logits, unless the model outputs probabilities)
  std::vector<float> logits;  // with keep_logits: the model's output for the item
};

// Fills item i's input (input_size() / batch() floats) with pre; throws
// vinfer::Error for an item that cannot be loaded. Called on worker threads
// (a single item through one model: on the calling thread).
using ItemLoader = std::function<void(std::size_t i, Preprocessor& pre, float* input)>;
// Receives each result, in item order, on the calling thread. An exception
// it throws stops the pipeline and reaches classify_items' caller.
using ItemSink = std::function<void(ItemResult&& result)>;

// Runs items 0 .. count - 1 through the model (on the calling thread); returns how many failed.
std::size_t classify_items(Model& model, const Preset& preset, std::size_t count, const ItemLoader& load,
                           const ItemSink& sink, const PipelineOptions& options = {});
// The same with several copies of one network (streams), each run by a
// thread of its own on the batches it takes; the calling thread hands the
// results to `sink`, still in item order. Throughput on few cores: two
// copies of one thread each keep both cores busy where one copy of two
// threads waits in its parallel kernels for the loaders.
std::size_t classify_items(const std::vector<Model*>& models, const Preset& preset, std::size_t count, const ItemLoader& load,
                           const ItemSink& sink, const PipelineOptions& options = {});

}  // namespace vinfer
