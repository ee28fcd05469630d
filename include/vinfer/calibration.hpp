// vinfer/calibration.hpp: what Precision::INT8 needs to know about a network,
// measured once on a few representative images (post-training static
// quantization).
//
//   vinfer::EngineOptions f32;
//   f32.record_ranges = true;                       // watch every convolution's input
//   vinfer::Model m = vinfer::Model::load_onnx("resnet50.onnx", f32);
//   for (const auto& x : images) m.run(x.data(), logits.data());
//   m.calibration().save("resnet50.calib");        // `vinfer calibrate` does this
//
//   vinfer::EngineOptions int8;
//   int8.precision = vinfer::Precision::INT8;
//   int8.calibration = std::make_shared<vinfer::Calibration>(vinfer::Calibration::load("resnet50.calib"));
//
// The file is JSON:
//   {"format": "vinfer-calibration", "version": 1,
//    "model": "resnet50", "fingerprint": "9f0c...", "images": 32,
//    "activations": {"<value>": {"min": 0.0, "max": 6.2}, ...},
//    "weight_scales": {"<Conv node>": [0.0031, ...], ...}}
// activations: the range of each convolution's input, and of each residual
// operand a convolution adds, over the images (by the name of the value in
// the optimized graph; a file without the operands' ranges keeps those
// additions out of int8); weight_scales: per output
// channel, max|w| / 127 (symmetric). The fingerprint identifies the network
// (its convolutions' names, shapes and a sample of their weights), so that a
// file made for another one is refused.
#pragma once
#include <map>
#include <string>
#include <vector>

namespace vinfer {

class Graph;

struct ActivationRange {
  float min = 0, max = 0;
};

struct Calibration {
  std::string model;        // the network's name (informative)
  std::string fingerprint;  // calibration_fingerprint() of the optimized graph
  int images = 0;           // how many images the ranges were measured on
  std::map<std::string, ActivationRange> activations;
  std::map<std::string, std::vector<float>> weight_scales;

  // Reads and validates a file; throws vinfer::Error (InvalidArgument) with
  // one line naming the file and what is wrong: not JSON, truncated, another
  // format or version, a range or scale that is not finite, min > max, a
  // scale <= 0.
  static Calibration load(const std::string& path);
  static Calibration parse(const std::string& json, const std::string& what);
  std::string to_json() const;
  // Writes the file whole or not at all (a temporary file renamed over it).
  void save(const std::string& path) const;
};

// The identity of an optimized graph's convolutions (names, weight shapes, a
// sample of their values), as 16 hex digits; independent of the batch.
std::string calibration_fingerprint(const Graph& g);

}  // namespace vinfer
