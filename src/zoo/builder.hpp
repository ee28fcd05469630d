// Internal: writing networks in C++ as the frameworks define them. A
// NetBuilder adds nodes to a Graph and records each parameter under the key
// its framework's checkpoint uses ("features.conv0.weight"), with how the
// framework initialises it; weights are filled in afterwards (zoo/weights.cpp).
#pragma once
#include <string>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::zoo {

enum class Init {
  KaimingNormalFanIn,   // N(0, 2 / fan_in)        torch kaiming_normal_ (default mode)
  KaimingNormalFanOut,  // N(0, 2 / fan_out)       torch kaiming_normal_(mode="fan_out")
  KaimingUniformA5,     // U(+-1/sqrt(fan_in))     torch's default Linear/Conv init (kaiming_uniform_, a=sqrt(5))
  Normal001,            // N(0, 0.01)
  Zeros,
  Ones,
  GlorotUniform,        // U(+-sqrt(6 / (fan_in + fan_out)))  Keras's default
};

struct Param {
  std::string key;
  Shape shape;  // as the checkpoint stores it
  Init init;
  std::int64_t fan_in = 1, fan_out = 1;  // for the initialisers
  int value = -1;                         // the graph constant to fill
  bool hwio = false;                      // stored [kh, kw, in, out] (Keras); the graph wants [out, in, kh, kw]
  bool transposed = false;                // stored [out, in] (torch Linear); the graph wants [in, out]
};

struct ZooNet {
  Graph graph;
  std::vector<Param> params;
  std::vector<std::string> ignored_keys;  // checkpoint keys that carry no weights (num_batches_tracked)
  std::string preset;                     // the preprocessing this network expects
};

class NetBuilder {
 public:
  explicit NetBuilder(ZooNet& net) : net_(net), g_(net.graph) {}
  Graph& graph() { return g_; }

  int input(const std::string& name, Shape shape) { return g_.add_input(name, std::move(shape)); }
  // A parameter constant whose data is filled later (`transposed`: a 2-D
  // one that the graph holds transposed, see Param).
  int param(const std::string& key, Shape shape, Init init, std::int64_t fan_in = 1, std::int64_t fan_out = 1,
            bool transposed = false);

  // Conv2d; weight [out, in/groups, k, k] at key.weight, optional bias at key.bias.
  int conv(int x, const std::string& key, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride, std::int64_t pad,
           bool bias, Init w_init, Init b_init = Init::Zeros, std::int64_t groups = 1);
  // BatchNorm2d at key.{weight,bias,running_mean,running_var} (+ num_batches_tracked ignored).
  int batchnorm(int x, const std::string& key, std::int64_t c, float eps = 1e-5f);
  // Linear with W [out, in] at key.weight, bias at key.bias: Gemm(x, W^T),
  // the graph holding W^T ([in, out], which the one-row kernel reads as it
  // is; the checkpoint reader writes it so).
  int linear(int x, const std::string& key, std::int64_t in, std::int64_t out, Init w_init, Init b_init);
  int relu(int x) { return op("Relu", {x}); }
  int maxpool(int x, std::int64_t k, std::int64_t stride, std::int64_t pad, bool ceil = false);
  int avgpool(int x, std::int64_t k, std::int64_t stride);
  int global_avgpool(int x) { return op("GlobalAveragePool", {x}); }
  int flatten(int x) { return op("Flatten", {x}, {{"axis", std::int64_t{1}}}); }
  int concat(const std::vector<int>& xs) { return op("Concat", xs, {{"axis", std::int64_t{1}}}); }
  int add(int a, int b) { return op("Add", {a, b}); }
  int op(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {}, const std::string& name = {});

 private:
  ZooNet& net_;
  Graph& g_;
};

// Builders for each architecture (zoo/torchvision.cpp); `name` as torchvision names it.
ZooNet build_torchvision(const std::string& name);
std::vector<std::string> torchvision_names();
// keras.applications networks (zoo/keras.cpp); `name` without the "keras:" prefix.
ZooNet build_keras(const std::string& name);
std::vector<std::string> keras_names();

}  // namespace vinfer::zoo
