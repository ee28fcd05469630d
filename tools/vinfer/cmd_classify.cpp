// `vinfer classify`: files, directories or a list of paths -> top-k classes,
// printed, or streamed to a JSONL/CSV file that an interrupted run resumes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "image_list.hpp"
#include "model_args.hpp"
#include "vinfer/devices.hpp"
#include "vinfer/io.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/pipeline.hpp"
#include "vinfer/postprocess.hpp"

namespace vinfer::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// RFC 4180: quoted where it holds a comma, quote or line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// The records already in an output file (their first field: the image), and
// where the last whole record ends (a killed run can leave part of one).
struct Existing {
  std::unordered_set<std::string> images;
  std::uint64_t whole_bytes = 0;
};

Existing read_existing(const std::string& path, bool csv) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::BadInput, path + ": cannot read the output to resume");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Existing e;
  std::size_t line = 0;
  auto bad = [&](const std::string& why) {
    return Error(ErrorKind::BadInput, path + ": record " + std::to_string(line) + ": " + why +
                                          " (not an output of vinfer classify; --resume only continues one)");
  };
  if (csv) {
    // Records end at a line break outside quotes; the first one is the header.
    std::string field;
    bool quoted = false, first_done = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (quoted) {
        if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') ++i, field += first_done ? "" : "\"";
        else if (c == '"') quoted = false;
        else if (!first_done) field += c;
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',' && !first_done) {
        first_done = true;
      } else if (c == '\n') {
        if (line++ > 0) e.images.insert(field);
        else if (field != "image") throw bad("the header does not start with 'image'");
        field.clear(), first_done = false;
        e.whole_bytes = i + 1;
      } else if (!first_done && c != '\r') {
        field += c;
      }
    }
    return e;
  }
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;  // the part of a record a killed run left
    ++line;
    const nlohmann::json j = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(at),
                                                   text.begin() + static_cast<std::ptrdiff_t>(nl), nullptr, false);
    if (!j.is_object() || !j.contains("image") || !j["image"].is_string()) throw bad("not a JSON object with an \"image\"");
    e.images.insert(j["image"].get<std::string>());
    at = nl + 1;
    e.whole_bytes = at;
  }
  return e;
}

struct ClassifyCmd {
  ModelArgs m;
  std::vector<std::string> inputs;
  std::string preset_name, logits_path, files_from, output, format;
  int topk = 5, workers = 1, streams = 1;
  bool json = false, recursive = false, resume = false, no_progress = false;

  std::vector<Item> collect() {
    std::vector<Item> items;
    std::size_t skipped = 0;
    auto add = [&](const std::string& p) {
      std::error_code ec;
      if (fs::is_directory(p, ec)) list_directory(p, recursive, items, skipped);
      else items.push_back({p, {}});  // a file, or what its loader will say is wrong
    };
    for (const std::string& p : inputs) add(p);
    if (!files_from.empty()) {
      std::ifstream list;
      if (files_from != "-") {
        list.open(files_from);
        if (!list) throw Error(ErrorKind::BadInput, files_from + ": cannot open the list of files");
      }
      std::istream& in = files_from == "-" ? std::cin : list;
      for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) add(line);
      }
    }
    if (skipped)
      std::fprintf(stderr, "vinfer: note: skipped %zu file(s) in the directories that are not .jpg, .jpeg or .png\n", skipped);
    return items;
  }

  int run() {
    const bool csv = format == "csv" || (format.empty() && fs::path(output).extension() == ".csv");
    if (!format.empty() && format != "csv" && format != "jsonl")
      throw Error(ErrorKind::InvalidArgument, "--format " + format + ": expected jsonl or csv");
    if (resume && output.empty()) throw Error(ErrorKind::InvalidArgument, "--resume continues an --output file");
    if (!format.empty() && output.empty()) throw Error(ErrorKind::InvalidArgument, "--format is the --output file's");
    if (inputs.empty() && files_from.empty()) throw Error(ErrorKind::InvalidArgument, "no images: give files, directories or --files-from");
    std::vector<Item> items = collect();
    // Refused before loading the network: nothing of the user's is overwritten.
    std::error_code ec;
    const bool exists = !output.empty() && fs::exists(output, ec);
    if (exists && !resume)
      throw Error(ErrorKind::InvalidArgument, output + " exists (--resume continues it; remove it to start over)");
    Existing done;
    if (exists) done = read_existing(output, csv);
    if (!done.images.empty()) {
      const std::size_t before = items.size();
      items.erase(std::remove_if(items.begin(), items.end(), [&](const Item& i) { return done.images.count(i.path) != 0; }),
                  items.end());
      std::fprintf(stderr, "vinfer: resuming %s: %zu of %zu image(s) already there\n", output.c_str(), before - items.size(), before);
    }

    if (streams > 1 && m.device != "cpu") throw Error(ErrorKind::InvalidArgument, "--streams runs copies on the CPU");
    if (streams > 1 && m.threads == 0) m.threads = std::max(1, default_threads() / streams);
    std::vector<Model> copies;
    for (int k = 0; k < streams; ++k) copies.push_back(m.load());
    Model& model = copies.front();
    if (preset_name.empty()) preset_name = m.zoo.preset;  // the model's own (torchvision for ONNX files)
    const Preset preset = model_preset(model, preset_name);

    std::FILE* out = stdout;
    if (!output.empty()) {
      // Whole records are appended; a partial one a killed run left is cut first.
      const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(done.whole_bytes)) != 0 || ::lseek(fd, 0, SEEK_END) < 0) {
        if (fd >= 0) ::close(fd);
        throw Error(ErrorKind::BadInput, output + ": cannot write");
      }
      out = ::fdopen(fd, "a");
      if (!out) {
        ::close(fd);
        throw Error(ErrorKind::BadInput, output + ": cannot write");
      }
      if (csv && done.whole_bytes == 0) {
        std::string h = "image";
        for (int k = 1; k <= topk; ++k)
          for (const char* c : {"index", "label", "prob"}) h += ",top" + std::to_string(k) + "_" + c;
        std::fprintf(out, "%s,error\n", h.c_str());
      }
    }
    const bool records = !output.empty() || json;

    // A progress bar on a terminal, when the records do not go there.
    const bool progress = !no_progress && ::isatty(STDERR_FILENO) && (!output.empty() || !::isatty(STDOUT_FILENO));
    const auto start = Clock::now();
    auto last_draw = start;
    std::size_t n_done = 0, failed = 0;
    auto draw = [&](bool final) {
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      const double rate = s > 0 ? static_cast<double>(n_done) / s : 0;
      const int w = 30, fill = items.empty() ? w : static_cast<int>(w * static_cast<double>(n_done) / static_cast<double>(items.size()));
      std::fprintf(stderr, "\r[%s%s] %zu/%zu  %.1f images/s  %zu failed%s", std::string(static_cast<std::size_t>(fill), '#').c_str(),
                   std::string(static_cast<std::size_t>(w - fill), ' ').c_str(), n_done, items.size(), rate, failed, final ? "\n" : "");
    };

    const int n_out = static_cast<int>(model.output_size() / static_cast<std::size_t>(model.batch()));
    std::vector<float> all_logits;
    auto sink = [&](ItemResult&& r) {
      const std::string& path = items[r.index].path;
      ++n_done;
      if (!r.error.empty()) {
        ++failed;
        std::fprintf(stderr, "%svinfer: error: %s\n", progress ? "\r" : "", r.error.c_str());
      }
      if (!logits_path.empty()) {
        if (r.logits.empty()) all_logits.insert(all_logits.end(), static_cast<std::size_t>(n_out), std::nanf(""));
        else all_logits.insert(all_logits.end(), r.logits.begin(), r.logits.end());
      }
      std::string line;
      if (csv) {
        line = csv_field(path);
        for (std::size_t k = 0; k < static_cast<std::size_t>(topk); ++k) {
          if (k < r.top.size()) {
            char p[32];
            std::snprintf(p, sizeof p, "%.6g", r.prob[k]);
            line += "," + std::to_string(r.top[k]) + "," + csv_field(imagenet_label(r.top[k])) + "," + p;
          } else {
            line += ",,,";
          }
        }
        line += "," + csv_field(r.error) + "\n";
      } else if (records) {
        nlohmann::json j{{"image", path}};
        if (!r.error.empty()) {
          j["error"] = r.error;
        } else {
          j["model"] = m.model, j["preset"] = preset_name;
          for (std::size_t k = 0; k < r.top.size(); ++k)
            j["topk"].push_back({{"index", r.top[k]}, {"label", imagenet_label(r.top[k])}, {"prob", r.prob[k]}});
        }
        line = j.dump() + "\n";
      } else if (r.error.empty()) {
        line = path + "\n";
        for (std::size_t k = 0; k < r.top.size(); ++k) {
          char l[256];
          std::snprintf(l, sizeof l, "  %6.2f%%  %4d  %s\n", 100.0 * r.prob[k], r.top[k], imagenet_label(r.top[k]).c_str());
          line += l;
        }
      }
      // One write and a flush per record: a kill leaves whole records (and at most part of the last).
      if (!line.empty() && (std::fwrite(line.data(), 1, line.size(), out) != line.size() || std::fflush(out) != 0))
        throw Error(ErrorKind::BadInput, (output.empty() ? std::string("stdout") : output) + ": write failed");
      if (progress && std::chrono::duration<double>(Clock::now() - last_draw).count() > 0.2) last_draw = Clock::now(), draw(false);
    };

    PipelineOptions po;
    po.workers = workers;
    po.topk = topk;
    po.keep_logits = !logits_path.empty();
    m.limit(po.decode);
    if (m.device_preprocess()) {
      // Resize + normalize on the GPU (Model::run_image), one image at a time.
      if (model.batch() != 1) throw Error(ErrorKind::InvalidArgument, "--batch with --device cuda needs --host-preprocess");
      Preprocessor pre(preset);
      pre.decode_options() = po.decode;
      ImageU8 image;
      std::vector<float> logits(model.output_size());
      const bool probs = model.outputs_probabilities();
      for (std::size_t i = 0; i < items.size(); ++i) {
        ItemResult r;
        r.index = i;
        try {
          if (!items[i].error.empty()) throw Error(ErrorKind::BadInput, items[i].error);
          pre.decode_file(items[i].path, image);
          model.run_image(image.view(), pre.preset(), logits.data());
          const std::vector<float> p = probs ? logits : softmax(logits.data(), n_out);
          r.top = topk_indices(p.data(), n_out, topk);
          for (int c : r.top) r.prob.push_back(p[static_cast<std::size_t>(c)]);
          if (po.keep_logits) r.logits = logits;
        } catch (const Error& e) {
          r.error = e.what();
        }
        sink(std::move(r));
      }
    } else {
      std::vector<Model*> models;
      for (Model& c : copies) models.push_back(&c);
      classify_items(
          models, preset, items.size(),
          [&](std::size_t i, Preprocessor& pre, float* x) {
            if (!items[i].error.empty()) throw Error(ErrorKind::BadInput, items[i].error);
            pre.run_file(items[i].path, x);
          },
          sink, po);
    }
    if (out != stdout && (std::fflush(out) != 0 || ::fsync(::fileno(out)) != 0 || std::fclose(out) != 0))
      throw Error(ErrorKind::BadInput, output + ": write failed");
    if (progress) draw(true);
    if (!output.empty() || progress) {
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      std::fprintf(stderr, "vinfer: %zu image(s) in %.2f s (%.1f images/s), %zu failed%s%s\n", n_done, s,
                   s > 0 ? static_cast<double>(n_done) / s : 0.0, failed, output.empty() ? "" : ", records in ", output.c_str());
    }
    if (!logits_path.empty()) write_npy(logits_path, all_logits.data(), {items.size(), static_cast<std::size_t>(n_out)});
    return failed ? kExitBadInput : kExitOk;
  }
};

}  // namespace

void add_classify(CLI::App& app, Handler& run) {
  auto c = std::make_shared<ClassifyCmd>();
  c->m.compact_weights = true;  // a process loaded to classify: its peak memory counts more than a few % of a pass
  c->m.add_to(app);
  c->m.add_host_preprocess(app);
  app.add_option("images", c->inputs, "Image files (JPEG, PNG) or directories (their .jpg, .jpeg and .png files)");
  app.add_option("--files-from", c->files_from, "Also classify the paths in this file, one per line (- for stdin)");
  app.add_flag("-r,--recursive", c->recursive, "Descend into the directories' subdirectories");
  app.add_option("--preset", c->preset_name, "Preprocessing preset (default: the model's; torchvision for ONNX) (" + [] {
    std::string s;
    for (const auto& n : preset_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }() + ")");
  app.add_option("--topk", c->topk, "How many classes to print")->check(CLI::Range(1, 1000));
  app.add_flag("--json", c->json, "One JSON object per image per line");
  app.add_option("-o,--output", c->output,
                 "Stream the records to this file as they finish (JSON lines, or CSV for a .csv name) instead of stdout");
  app.add_option("--format", c->format, "--output's format: jsonl or csv (default: by its extension)");
  app.add_flag("--resume", c->resume, "Continue an interrupted run's --output: skip the images it has, append the rest");
  app.add_option("--workers", c->workers, "Threads that read, decode and preprocess ahead of the network (default 1)")
      ->check(CLI::Range(1, 256));
  app.add_option("--streams", c->streams,
                 "Copies of the network run side by side, each on its own batches with --threads / copies threads "
                 "(default 1; on few cores 2 keeps them busier)")
      ->check(CLI::Range(1, 64));
  app.add_flag("--no-progress", c->no_progress, "No progress bar (shown on a terminal when the records go elsewhere)");
  app.add_option("--save-logits", c->logits_path, "Write the logits (N x classes, float32) to a .npy file");
  run = [c] { return c->run(); };
}

}  // namespace vinfer::cli
