// vinfer/zoo.hpp: networks built in, by the names their frameworks use.
//
//   vinfer::ZooInfo info;
//   vinfer::Model m = vinfer::load_model("densenet121", "densenet121-a639ec97.pth", {}, &info);
//   vinfer::Model r = vinfer::load_model("model.onnx", "", {}, &info);   // an ONNX file works too
//
// torchvision: densenet121/161/169/201, vgg11/13/16/19 (and _bn), resnet18/34/50/101/152.
// Weights: a torchvision state_dict saved by torch.save (zip or legacy format)
// or a .safetensors file. Without a weights file the network gets seeded
// random weights, initialised as torchvision initialises them: its timings are
// real, its labels meaningless (info.random_weights says so).
#pragma once
#include <string>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/graph.hpp"

namespace vinfer {

struct ZooInfo {
  std::string preset;          // the preprocessing preset the network expects
  bool random_weights = false; // true when no weights file was given
};

std::vector<std::string> zoo_models();
bool is_zoo_model(const std::string& name);

// The built-in network as a graph with its weights filled. Weights that do not
// fit (missing or unexpected keys, wrong shapes) give one Error(BadInput) listing them.
Graph zoo_graph(const std::string& name, const std::string& weights_path, ZooInfo* info = nullptr, std::uint64_t seed = 0);

// A built-in name or an ONNX file (`weights` only applies to built-in names).
Model load_model(const std::string& model, const std::string& weights, const EngineOptions& options, ZooInfo* info = nullptr);

}  // namespace vinfer
