#include "zoo/builder.hpp"

namespace vinfer::zoo {

int NetBuilder::param(const std::string& key, Shape shape, Init init, std::int64_t fan_in, std::int64_t fan_out, bool transposed) {
  TensorData t;
  t.dtype = DType::F32;
  t.shape = transposed ? Shape{shape.at(1), shape.at(0)} : shape;  // data comes later (zoo.cpp)
  const int id = g_.add_constant(key, std::move(t));
  net_.params.push_back({key, std::move(shape), init, fan_in, fan_out, id, false, transposed});
  return id;
}

int NetBuilder::op(const std::string& type, std::vector<int> inputs, std::map<std::string, AttrValue> attrs, const std::string& name) {
  return g_.add_node(type, std::move(inputs), std::move(attrs), 1, name)[0];
}

int NetBuilder::conv(int x, const std::string& key, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride, std::int64_t pad,
                     bool bias, Init w_init, Init b_init, std::int64_t groups) {
  const std::int64_t fan_in = in / groups * k * k, fan_out = out / groups * k * k;
  std::vector<int> ins{x, param(key + ".weight", {out, in / groups, k, k}, w_init, fan_in, fan_out)};
  if (bias) ins.push_back(param(key + ".bias", {out}, b_init, fan_in, fan_out));
  return op("Conv", ins,
            {{"kernel_shape", std::vector<std::int64_t>{k, k}},
             {"strides", std::vector<std::int64_t>{stride, stride}},
             {"pads", std::vector<std::int64_t>{pad, pad, pad, pad}},
             {"group", groups}},
            key);
}

int NetBuilder::batchnorm(int x, const std::string& key, std::int64_t c, float eps) {
  const int w = param(key + ".weight", {c}, Init::Ones), b = param(key + ".bias", {c}, Init::Zeros);
  const int m = param(key + ".running_mean", {c}, Init::Zeros), v = param(key + ".running_var", {c}, Init::Ones);
  net_.ignored_keys.push_back(key + ".num_batches_tracked");
  return op("BatchNormalization", {x, w, b, m, v}, {{"epsilon", eps}}, key);
}

int NetBuilder::linear(int x, const std::string& key, std::int64_t in, std::int64_t out, Init w_init, Init b_init) {
  const int w = param(key + ".weight", {out, in}, w_init, in, out, true);
  const int b = param(key + ".bias", {out}, b_init, in, out);
  return op("Gemm", {x, w, b}, {}, key);
}

int NetBuilder::maxpool(int x, std::int64_t k, std::int64_t stride, std::int64_t pad, bool ceil) {
  return op("MaxPool", {x},
            {{"kernel_shape", std::vector<std::int64_t>{k, k}},
             {"strides", std::vector<std::int64_t>{stride, stride}},
             {"pads", std::vector<std::int64_t>{pad, pad, pad, pad}},
             {"ceil_mode", std::int64_t{ceil}}});
}

int NetBuilder::avgpool(int x, std::int64_t k, std::int64_t stride) {
  return op("AveragePool", {x}, {{"kernel_shape", std::vector<std::int64_t>{k, k}}, {"strides", std::vector<std::int64_t>{stride, stride}}});
}

}  // namespace vinfer::zoo
