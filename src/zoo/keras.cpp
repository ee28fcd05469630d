// keras.applications networks (Keras 3 / tf.keras 2.x), layer for layer:
// DenseNet121/169/201, VGG16/19, ResNet50. Input 1x224x224x3 (NHWC, as Keras
// takes it), made NCHW once by a Transpose; Keras's "valid" convolutions after
// ZeroPadding2D become Pad nodes that the passes fold into the next layer.
// Parameters are keyed "<layer>/<var>" with Keras 3 layer names.
#include <map>

#include "vinfer/error.hpp"
#include "zoo/builder.hpp"

namespace vinfer::zoo {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr float kEps = 1.001e-5f;  // Keras DenseNet and ResNet BatchNormalization

class KerasBuilder {
 public:
  explicit KerasBuilder(ZooNet& net) : net_(net), b_(net) {}
  NetBuilder& b() { return b_; }

  int input() {
    const int x = b_.input("input_layer", {-1, 224, 224, 3});
    return b_.op("Transpose", {x}, {{"perm", Ints{0, 3, 1, 2}}});
  }
  int pad(int x, std::int64_t p) {
    const int amounts = b_.graph().add_constant("pad" + std::to_string(++pads_), TensorData::i64({8}, {0, 0, p, p, 0, 0, p, p}));
    return b_.op("Pad", {x, amounts});
  }
  // Conv2D; kernel [k, k, in, out] in the file. `same` for stride 1 only (all these networks need).
  int conv(int x, const std::string& name, std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t stride, bool same, bool bias) {
    const std::int64_t fan_in = in * k * k, fan_out = out * k * k;
    const int w = b_.param(name + "/kernel", {k, k, in, out}, Init::GlorotUniform, fan_in, fan_out);
    net_.params.back().hwio = true;
    b_.graph().value(w).shape = {out, in, k, k};
    std::vector<int> ins{x, w};
    if (bias) ins.push_back(b_.param(name + "/bias", {out}, Init::Zeros));
    const std::int64_t p = same ? (k - 1) / 2 : 0;
    return b_.op("Conv", ins, {{"kernel_shape", Ints{k, k}}, {"strides", Ints{stride, stride}}, {"pads", Ints{p, p, p, p}}}, name);
  }
  int bn(int x, const std::string& name, std::int64_t c, float eps = kEps) {
    const int g = b_.param(name + "/gamma", {c}, Init::Ones), be = b_.param(name + "/beta", {c}, Init::Zeros);
    const int m = b_.param(name + "/moving_mean", {c}, Init::Zeros), v = b_.param(name + "/moving_variance", {c}, Init::Ones);
    return b_.op("BatchNormalization", {x, g, be, m, v}, {{"epsilon", eps}}, name);
  }
  int dense(int x, const std::string& name, std::int64_t in, std::int64_t out) {
    const int w = b_.param(name + "/kernel", {in, out}, Init::GlorotUniform, in, out);
    const int bias = b_.param(name + "/bias", {out}, Init::Zeros);
    return b_.op("Gemm", {x, w, bias}, {}, name);
  }
  int softmax(int x) { return b_.op("Softmax", {x}, {{"axis", std::int64_t{-1}}}); }

 private:
  ZooNet& net_;
  NetBuilder b_;
  int pads_ = 0;
};

const std::map<std::string, std::vector<int>>& densenets() {
  static const std::map<std::string, std::vector<int>> m = {
      {"densenet121", {6, 12, 24, 16}}, {"densenet169", {6, 12, 32, 32}}, {"densenet201", {6, 12, 48, 32}}};
  return m;
}

void densenet(KerasBuilder& k, const std::vector<int>& blocks) {
  NetBuilder& b = k.b();
  int x = k.pad(k.input(), 3);
  x = b.relu(k.bn(k.conv(x, "conv1_conv", 3, 64, 7, 2, false, false), "conv1_bn", 64));
  x = b.maxpool(k.pad(x, 1), 3, 2, 0);
  std::int64_t c = 64;
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    const std::string stage = "conv" + std::to_string(s + 2);
    for (int i = 1; i <= blocks[s]; ++i) {
      const std::string n = stage + "_block" + std::to_string(i);
      int y = b.relu(k.bn(x, n + "_0_bn", c));
      y = b.relu(k.bn(k.conv(y, n + "_1_conv", c, 128, 1, 1, false, false), n + "_1_bn", 128));
      y = k.conv(y, n + "_2_conv", 128, 32, 3, 1, true, false);
      x = b.concat({x, y});
      c += 32;
    }
    if (s + 1 < blocks.size()) {
      const std::string n = "pool" + std::to_string(s + 2);
      x = b.relu(k.bn(x, n + "_bn", c));
      x = k.conv(x, n + "_conv", c, c / 2, 1, 1, false, false);
      x = b.avgpool(x, 2, 2);
      c /= 2;
    }
  }
  x = b.global_avgpool(b.relu(k.bn(x, "bn", c)));
  b.graph().mark_output(k.softmax(k.dense(b.flatten(x), "predictions", c, 1000)));
}

void vgg(KerasBuilder& k, const std::vector<int>& convs) {
  NetBuilder& b = k.b();
  int x = k.input();
  std::int64_t c = 3;
  const std::int64_t widths[] = {64, 128, 256, 512, 512};
  for (std::size_t blk = 0; blk < convs.size(); ++blk) {
    for (int i = 1; i <= convs[blk]; ++i) {
      x = b.relu(k.conv(x, "block" + std::to_string(blk + 1) + "_conv" + std::to_string(i), c, widths[blk], 3, 1, true, true));
      c = widths[blk];
    }
    x = b.maxpool(x, 2, 2, 0);
  }
  // Keras flattens NHWC: channels last.
  x = b.flatten(b.op("Transpose", {x}, {{"perm", Ints{0, 2, 3, 1}}}));
  x = b.relu(k.dense(x, "fc1", 7 * 7 * 512, 4096));
  x = b.relu(k.dense(x, "fc2", 4096, 4096));
  b.graph().mark_output(k.softmax(k.dense(x, "predictions", 4096, 1000)));
}

void resnet50(KerasBuilder& k) {
  NetBuilder& b = k.b();
  int x = k.pad(k.input(), 3);
  x = b.relu(k.bn(k.conv(x, "conv1_conv", 3, 64, 7, 2, false, true), "conv1_bn", 64));
  x = b.maxpool(k.pad(x, 1), 3, 2, 0);
  std::int64_t in = 64;
  const int blocks[] = {3, 4, 6, 3};
  for (int s = 0; s < 4; ++s) {
    const std::int64_t f = 64LL << s;
    for (int i = 1; i <= blocks[s]; ++i) {
      const std::string n = "conv" + std::to_string(s + 2) + "_block" + std::to_string(i);
      const std::int64_t stride = (i == 1 && s > 0) ? 2 : 1;
      int shortcut = x;
      if (i == 1) shortcut = k.bn(k.conv(x, n + "_0_conv", in, 4 * f, 1, stride, false, true), n + "_0_bn", 4 * f);
      int y = b.relu(k.bn(k.conv(x, n + "_1_conv", in, f, 1, stride, false, true), n + "_1_bn", f));
      y = b.relu(k.bn(k.conv(y, n + "_2_conv", f, f, 3, 1, true, true), n + "_2_bn", f));
      y = k.bn(k.conv(y, n + "_3_conv", f, 4 * f, 1, 1, false, true), n + "_3_bn", 4 * f);
      x = b.relu(b.add(shortcut, y));
      in = 4 * f;
    }
  }
  x = b.flatten(b.global_avgpool(x));
  b.graph().mark_output(k.softmax(k.dense(x, "predictions", 2048, 1000)));
}

}  // namespace

std::vector<std::string> keras_names() { return {"densenet121", "densenet169", "densenet201", "vgg16", "vgg19", "resnet50"}; }

ZooNet build_keras(const std::string& name) {
  ZooNet net;
  net.graph.name = "keras:" + name;
  KerasBuilder k(net);
  if (auto d = densenets().find(name); d != densenets().end()) {
    net.preset = "keras-torch";  // keras.applications.densenet.preprocess_input: mode="torch"
    densenet(k, d->second);
  } else if (name == "vgg16" || name == "vgg19") {
    net.preset = "keras-caffe";
    vgg(k, name == "vgg16" ? std::vector<int>{2, 2, 3, 3, 3} : std::vector<int>{2, 2, 4, 4, 4});
  } else if (name == "resnet50") {
    net.preset = "keras-caffe";
    resnet50(k);
  } else {
    throw Error(ErrorKind::InvalidArgument, "unknown model 'keras:" + name + "'");
  }
  return net;
}

}  // namespace vinfer::zoo
