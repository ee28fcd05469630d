// Uses the installed public API only: decode and preprocess a photo, run a
// built-in network on it, print the top class. Argument: the photo.
#include <cstdio>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/postprocess.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/version.hpp"
#include "vinfer/zoo.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  vinfer::EngineOptions opt;
  opt.threads = 1;
  vinfer::ZooInfo info;
  vinfer::Model model = vinfer::load_model("resnet18", "", opt, &info);
  vinfer::Preprocessor pre(vinfer::preset(info.preset));
  std::vector<float> x(pre.tensor_size()), y(model.output_size());
  pre.run_file(argv[1], x.data());
  model.run(x.data(), y.data());
  const int top = vinfer::topk_indices(y.data(), static_cast<int>(y.size()), 1)[0];
  std::printf("vinfer %s: resnet18 (random weights) says %d (%s)\n", vinfer::version().c_str(), top,
              vinfer::imagenet_label(top).c_str());
  return top >= 0 && top < 1000 ? 0 : 1;
}
