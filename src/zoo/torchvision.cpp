// torchvision's ImageNet classifiers, layer for layer as torchvision.models
// defines them (v0.14 - 0.29), with its state_dict key names and its
// initialisation. Input 1x3x224x224 (the graph has fixed shapes).
#include <map>

#include "vinfer/error.hpp"
#include "zoo/builder.hpp"

namespace vinfer::zoo {
namespace {

struct DenseCfg {
  std::int64_t growth, init;
  std::vector<int> blocks;
};

const std::map<std::string, DenseCfg>& densenets() {
  static const std::map<std::string, DenseCfg> m = {
      {"densenet121", {32, 64, {6, 12, 24, 16}}},
      {"densenet161", {48, 96, {6, 12, 36, 24}}},
      {"densenet169", {32, 64, {6, 12, 32, 32}}},
      {"densenet201", {32, 64, {6, 12, 48, 32}}},
  };
  return m;
}

// 0 marks a max-pool ('M' in torchvision's cfgs).
const std::map<std::string, std::vector<int>>& vggs() {
  static const std::map<std::string, std::vector<int>> m = {
      {"vgg11", {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
      {"vgg13", {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
      {"vgg16", {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}},
      {"vgg19", {64, 64, 0, 128, 128, 0, 256, 256, 256, 256, 0, 512, 512, 512, 512, 0, 512, 512, 512, 512, 0}},
  };
  return m;
}

struct ResCfg {
  bool bottleneck;
  std::vector<int> blocks;
};

const std::map<std::string, ResCfg>& resnets() {
  static const std::map<std::string, ResCfg> m = {
      {"resnet18", {false, {2, 2, 2, 2}}},  {"resnet34", {false, {3, 4, 6, 3}}},  {"resnet50", {true, {3, 4, 6, 3}}},
      {"resnet101", {true, {3, 4, 23, 3}}}, {"resnet152", {true, {3, 8, 36, 3}}},
  };
  return m;
}

void densenet(NetBuilder& b, const DenseCfg& cfg) {
  const Init conv_init = Init::KaimingNormalFanIn;
  int x = b.input("input", {-1, 3, 224, 224});
  x = b.conv(x, "features.conv0", 3, cfg.init, 7, 2, 3, false, conv_init);
  x = b.relu(b.batchnorm(x, "features.norm0", cfg.init));
  x = b.maxpool(x, 3, 2, 1);
  std::int64_t c = cfg.init;
  for (std::size_t blk = 0; blk < cfg.blocks.size(); ++blk) {
    const std::string block = "features.denseblock" + std::to_string(blk + 1);
    std::vector<int> feats{x};
    for (int l = 0; l < cfg.blocks[blk]; ++l) {
      const std::string layer = block + ".denselayer" + std::to_string(l + 1);
      const std::int64_t in = c + cfg.growth * l;
      int y = feats.size() == 1 ? feats[0] : b.concat(feats);
      y = b.relu(b.batchnorm(y, layer + ".norm1", in));
      y = b.conv(y, layer + ".conv1", in, 4 * cfg.growth, 1, 1, 0, false, conv_init);
      y = b.relu(b.batchnorm(y, layer + ".norm2", 4 * cfg.growth));
      feats.push_back(b.conv(y, layer + ".conv2", 4 * cfg.growth, cfg.growth, 3, 1, 1, false, conv_init));
    }
    x = b.concat(feats);
    c += cfg.growth * cfg.blocks[blk];
    if (blk + 1 < cfg.blocks.size()) {
      const std::string t = "features.transition" + std::to_string(blk + 1);
      x = b.relu(b.batchnorm(x, t + ".norm", c));
      x = b.conv(x, t + ".conv", c, c / 2, 1, 1, 0, false, conv_init);
      x = b.avgpool(x, 2, 2);
      c /= 2;
    }
  }
  x = b.relu(b.batchnorm(x, "features.norm5", c));
  x = b.flatten(b.global_avgpool(x));
  b.graph().mark_output(b.linear(x, "classifier", c, 1000, Init::KaimingUniformA5, Init::Zeros));
}

void vgg(NetBuilder& b, const std::vector<int>& cfg, bool bn) {
  int x = b.input("input", {-1, 3, 224, 224});
  std::int64_t c = 3;
  int idx = 0;
  for (int v : cfg) {
    if (v == 0) {
      x = b.maxpool(x, 2, 2, 0);
      ++idx;
      continue;
    }
    x = b.conv(x, "features." + std::to_string(idx), c, v, 3, 1, 1, true, Init::KaimingNormalFanOut);
    if (bn) x = b.batchnorm(x, "features." + std::to_string(++idx), v);
    x = b.relu(x);
    idx += 2;
    c = v;
  }
  // AdaptiveAvgPool2d((7, 7)) is the identity on the 7x7 map of a 224x224 input.
  x = b.flatten(x);
  x = b.relu(b.linear(x, "classifier.0", 512 * 7 * 7, 4096, Init::Normal001, Init::Zeros));
  x = b.relu(b.linear(x, "classifier.3", 4096, 4096, Init::Normal001, Init::Zeros));
  b.graph().mark_output(b.linear(x, "classifier.6", 4096, 1000, Init::Normal001, Init::Zeros));
}

void resnet(NetBuilder& b, const ResCfg& cfg) {
  const Init ci = Init::KaimingNormalFanOut;
  int x = b.input("input", {-1, 3, 224, 224});
  x = b.relu(b.batchnorm(b.conv(x, "conv1", 3, 64, 7, 2, 3, false, ci), "bn1", 64));
  x = b.maxpool(x, 3, 2, 1);
  const std::int64_t expansion = cfg.bottleneck ? 4 : 1;
  std::int64_t in = 64;
  for (std::size_t s = 0; s < cfg.blocks.size(); ++s) {
    const std::int64_t width = 64LL << s;
    for (int i = 0; i < cfg.blocks[s]; ++i) {
      const std::string p = "layer" + std::to_string(s + 1) + "." + std::to_string(i);
      const std::int64_t stride = (s > 0 && i == 0) ? 2 : 1;
      const std::int64_t out = width * expansion;
      int y;
      if (cfg.bottleneck) {
        y = b.relu(b.batchnorm(b.conv(x, p + ".conv1", in, width, 1, 1, 0, false, ci), p + ".bn1", width));
        y = b.relu(b.batchnorm(b.conv(y, p + ".conv2", width, width, 3, stride, 1, false, ci), p + ".bn2", width));
        y = b.batchnorm(b.conv(y, p + ".conv3", width, out, 1, 1, 0, false, ci), p + ".bn3", out);
      } else {
        y = b.relu(b.batchnorm(b.conv(x, p + ".conv1", in, width, 3, stride, 1, false, ci), p + ".bn1", width));
        y = b.batchnorm(b.conv(y, p + ".conv2", width, width, 3, 1, 1, false, ci), p + ".bn2", width);
      }
      int identity = x;
      if (stride != 1 || in != out)
        identity = b.batchnorm(b.conv(x, p + ".downsample.0", in, out, 1, stride, 0, false, ci), p + ".downsample.1", out);
      x = b.relu(b.add(y, identity));
      in = out;
    }
  }
  x = b.flatten(b.global_avgpool(x));
  b.graph().mark_output(b.linear(x, "fc", in, 1000, Init::KaimingUniformA5, Init::KaimingUniformA5));
}

}  // namespace

std::vector<std::string> torchvision_names() {
  std::vector<std::string> n;
  for (const auto& [k, v] : densenets()) n.push_back(k);
  for (const auto& [k, v] : vggs()) {
    n.push_back(k);
    n.push_back(k + "_bn");
  }
  for (const auto& [k, v] : resnets()) n.push_back(k);
  return n;
}

ZooNet build_torchvision(const std::string& name) {
  ZooNet net;
  net.graph.name = name;
  net.preset = "torchvision";
  NetBuilder b(net);
  if (auto d = densenets().find(name); d != densenets().end()) {
    densenet(b, d->second);
  } else if (auto r = resnets().find(name); r != resnets().end()) {
    resnet(b, r->second);
  } else {
    const bool bn = name.size() > 3 && name.compare(name.size() - 3, 3, "_bn") == 0;
    auto v = vggs().find(bn ? name.substr(0, name.size() - 3) : name);
    if (v == vggs().end()) throw Error(ErrorKind::InvalidArgument, "unknown model '" + name + "'");
    vgg(b, v->second, bn);
  }
  return net;
}

}  // namespace vinfer::zoo
