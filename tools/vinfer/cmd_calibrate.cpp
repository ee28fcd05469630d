// `vinfer calibrate`: runs a network in float32 on representative images and
// writes the ranges that --precision int8 quantizes with.
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "image_list.hpp"
#include "model_args.hpp"
#include "vinfer/calibration.hpp"

namespace vinfer::cli {
namespace {

struct CalibrateCmd {
  ModelArgs m;
  std::vector<std::string> inputs;
  std::string preset_name, out;

  int run() {
    if (m.precision != "f32") throw Error(ErrorKind::InvalidArgument, "calibrate measures float32 (drop --precision)");
    if (m.batch != 1) throw Error(ErrorKind::InvalidArgument, "calibrate runs one image at a time (drop --batch)");
    const std::vector<Item> items = expand_images(inputs);
    m.record_ranges = true;
    Model model = m.load();
    if (preset_name.empty()) preset_name = m.zoo.preset;
    Preprocessor pre(model_preset(model, preset_name));
    m.limit(pre);
    std::vector<float> x(model.input_size()), y(model.output_size());
    std::size_t done = 0, failed = 0;
    for (const Item& item : items) {
      try {
        if (!item.error.empty()) throw Error(ErrorKind::BadInput, item.error);
        pre.run_file(item.path, x.data());
      } catch (const Error& e) {
        std::fprintf(stderr, "vinfer: %s\n", e.what());
        ++failed;
        continue;
      }
      model.run(x.data(), y.data());
      ++done;
    }
    if (done == 0) throw Error(ErrorKind::BadInput, "none of the images could be read");
    const Calibration c = model.calibration();
    c.save(out);
    std::printf("%s: %zu activation ranges and %zu weight scale sets (convolutions, fully connected layers) of %s%s, from %zu "
                "image(s), preset %s\n",
                out.c_str(), c.activations.size(), c.weight_scales.size(), m.model.c_str(),
                m.zoo.random_weights ? " (seeded random weights)" : "", done, preset_name.c_str());
    if (failed) std::printf("  %zu image(s) could not be read (above)\n", failed);
    return failed ? kExitBadInput : kExitOk;
  }
};

}  // namespace

void add_calibrate(CLI::App& app, Handler& run) {
  auto c = std::make_shared<CalibrateCmd>();
  c->m.add_to(app);
  app.add_option("images", c->inputs, "Image files or directories (their .jpg/.jpeg/.png): representative inputs")->required();
  app.add_option("--preset", c->preset_name, "Preprocessing preset (default: the model's)");
  app.add_option("-o,--output", c->out, "The calibration file to write (JSON; written whole or not at all)")->required();
  run = [c] { return c->run(); };
}

}  // namespace vinfer::cli
