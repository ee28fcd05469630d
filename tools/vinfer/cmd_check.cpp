// `vinfer check`: the parity gate. Runs a network at float32 and at a reduced
// precision on the user's images and says how far the logits moved.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "image_list.hpp"
#include "model_args.hpp"
#include "vinfer/io.hpp"
#include "vinfer/postprocess.hpp"

namespace vinfer::cli {
namespace {

// Exit code when a measure misses its threshold (the run itself went well).
constexpr int kExitThresholdMissed = 1;

struct CheckCmd {
  ModelArgs m;
  std::vector<std::string> inputs;
  std::string preset_name, json_path;
  double max_error = -1, min_top1 = -1, min_top5 = -1, min_cosine = -1;

  // Each image's logits at the model arguments' precision; an image that
  // cannot be read is reported and left out (its slot stays empty), as is
  // one whose slot in `only` (the first pass) is empty.
  std::vector<std::vector<float>> logits(const std::vector<Item>& items, const std::vector<std::vector<float>>* only) {
    Model model = m.load();
    if (preset_name.empty()) preset_name = m.zoo.preset;
    Preprocessor pre(model_preset(model, preset_name));
    m.limit(pre);
    std::vector<float> x(model.input_size());
    std::vector<std::vector<float>> out(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (only && (*only)[i].empty()) continue;
      try {
        if (!items[i].error.empty()) throw Error(ErrorKind::BadInput, items[i].error);
        pre.run_file(items[i].path, x.data());
      } catch (const Error& e) {
        std::fprintf(stderr, "vinfer: %s\n", e.what());
        continue;
      }
      out[i].resize(model.output_size());
      model.run(x.data(), out[i].data());
    }
    return out;
  }

  int run() {
    if (m.precision == "f32") throw Error(ErrorKind::InvalidArgument, "--precision: give the reduced one to check (bf16 or int8)");
    if (m.batch != 1) throw Error(ErrorKind::InvalidArgument, "check runs one image at a time (drop --batch)");
    for (double f : {min_top1, min_top5, min_cosine})
      if (f > 1) throw Error(ErrorKind::InvalidArgument, "--min-top1/--min-top5/--min-cosine are fractions (0 to 1)");
    const std::vector<Item> items = expand_images(inputs);

    // One network at a time, float32 first: never both in memory.
    const std::string reduced = m.precision;
    m.precision = "f32";
    const auto ref = logits(items, nullptr);
    m.precision = reduced;
    const auto test = logits(items, &ref);
    const auto failed = static_cast<std::size_t>(std::count_if(ref.begin(), ref.end(), [](const auto& r) { return r.empty(); }));

    std::vector<LogitAgreement> each;
    nlohmann::json per_image = nlohmann::json::array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (ref[i].empty()) continue;
      const LogitAgreement a = compare_logits(ref[i].data(), test[i].data(), static_cast<int>(ref[i].size()));
      each.push_back(a);
      per_image.push_back({{"image", items[i].path}, {"top1_agrees", a.top1}, {"top5_agrees", a.top5},
                           {"max_rel_error", a.max_rel}, {"mean_rel_error", a.mean_rel}, {"cosine", a.cosine}});
    }
    if (each.empty()) throw Error(ErrorKind::BadInput, "none of the images could be read");

    const double n = static_cast<double>(each.size());
    std::size_t top1 = 0, top5 = 0;
    double max_rel = 0, mean_max_rel = 0, mean_rel = 0, cos_min = 1, cos_mean = 0;
    for (const LogitAgreement& a : each) {
      top1 += a.top1, top5 += a.top5;
      max_rel = std::max(max_rel, a.max_rel), mean_max_rel += a.max_rel / n, mean_rel += a.mean_rel / n;
      cos_min = std::min(cos_min, a.cosine), cos_mean += a.cosine / n;
    }
    struct Gate {
      const char* name;
      double value, limit;
      bool upper;  // the value must stay at or below the limit
      bool met() const { return limit < 0 || (upper ? value <= limit : value >= limit); }
    };
    const Gate gates[] = {{"top1", top1 / n, min_top1, false},
                          {"top5", top5 / n, min_top5, false},
                          {"max_rel_error", max_rel, max_error, true},
                          {"cosine", cos_min, min_cosine, false}};
    auto verdict = [](const Gate& g) {
      if (g.limit < 0) return std::string();
      char s[64];
      std::snprintf(s, sizeof s, "  %s %s %g", g.met() ? "ok:" : "MISSED:", g.upper ? "<=" : ">=", g.limit);
      return std::string(s);
    };

    std::printf("%s%s, preset %s: %s against f32 on %zu image(s)\n", m.model.c_str(),
                m.zoo.random_weights ? " (seeded random weights)" : "", preset_name.c_str(), reduced.c_str(), each.size());
    std::printf("  top-1 agreement                 %4zu / %-4zu %6.1f %%%s\n", top1, each.size(), 100.0 * top1 / n,
                verdict(gates[0]).c_str());
    std::printf("  top-5 agreement (same classes)  %4zu / %-4zu %6.1f %%%s\n", top5, each.size(), 100.0 * top5 / n,
                verdict(gates[1]).c_str());
    std::printf("  max |dlogit| / max |logit|      max %.3e  mean %.3e%s\n", max_rel, mean_max_rel, verdict(gates[2]).c_str());
    std::printf("  mean |dlogit| / max |logit|     mean %.3e\n", mean_rel);
    std::printf("  cosine similarity               min %.6f  mean %.6f%s\n", cos_min, cos_mean, verdict(gates[3]).c_str());
    if (failed) std::printf("  %zu image(s) could not be read (above)\n", failed);

    const bool all_met = std::all_of(std::begin(gates), std::end(gates), [](const Gate& g) { return g.met(); });
    if (!json_path.empty()) {
      nlohmann::json thresholds = nlohmann::json::object();
      for (const Gate& g : gates)
        if (g.limit >= 0) thresholds[g.name] = {{"limit", g.limit}, {"value", g.value}, {"met", g.met()}};
      const nlohmann::json j = {
          {"model", m.model}, {"random_weights", m.zoo.random_weights}, {"preset", preset_name},
          {"precision", reduced}, {"reference", "f32"}, {"images", each.size()}, {"unreadable", failed},
          {"top1_agreement", top1 / n}, {"top5_agreement", top5 / n},
          {"max_rel_error", {{"max", max_rel}, {"mean", mean_max_rel}}}, {"mean_rel_error", mean_rel},
          {"cosine", {{"min", cos_min}, {"mean", cos_mean}}}, {"thresholds", thresholds}, {"met", all_met},
          {"per_image", per_image}};
      write_text(json_path, j.dump(2) + "\n");
    }
    if (failed) return kExitBadInput;
    return all_met ? kExitOk : kExitThresholdMissed;
  }
};

}  // namespace

void add_check(CLI::App& app, Handler& run) {
  auto c = std::make_shared<CheckCmd>();
  c->m.add_to(app);
  app.add_option("images", c->inputs, "Image files or directories (their .jpg/.jpeg/.png): the inputs to compare on")->required();
  app.add_option("--preset", c->preset_name, "Preprocessing preset (default: the model's)");
  app.add_option("--max-error", c->max_error, "Fail (exit 1) if any image's max |dlogit| / max |logit| exceeds this")
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--min-top1", c->min_top1, "Fail (exit 1) if the share of images with the same top-1 class is below this (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-top5", c->min_top5, "Fail (exit 1) if the share with the same five top classes is below this (0-1)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-cosine", c->min_cosine, "Fail (exit 1) if any image's logits' cosine similarity is below this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--json", c->json_path, "Also write the measures (and each image's) as JSON");
  run = [c] { return c->run(); };
}

}  // namespace vinfer::cli
