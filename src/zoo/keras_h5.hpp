// Internal: Keras weight files through Debian's libhdf5.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::zoo {

// Weights per layer, in the order Keras keeps them (Conv2D: kernel, bias;
// BatchNormalization: gamma, beta, moving_mean, moving_variance; Dense: kernel,
// bias), as float32 in Keras's own layouts (kernels HWIO / [in, out]).
// Layer names are Keras 3's ("conv1_conv"): Keras 2 files ("conv1/conv",
// the *_tf_dim_ordering_tf_kernels.h5 downloads and save_weights .h5) have
// their '/' turned into '_'. Reads both formats:
//   Keras 2: /<layer>/<layer>/<var>:0, order from the group's weight_names
//   Keras 3: /layers/<key>/vars/<i>, the layer's name in the vars group's 'name' attribute
using KerasWeights = std::map<std::string, std::vector<TensorData>>;
KerasWeights read_keras_h5(const std::string& path);
// The same from a file's bytes in memory; `name` is used in error messages.
KerasWeights read_keras_h5_memory(const std::uint8_t* data, std::size_t size, const std::string& name);

}  // namespace vinfer::zoo
