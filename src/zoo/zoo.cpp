// Built-in networks: architecture (zoo/torchvision.cpp) + weights (a
// checkpoint, or seeded initialisation as the framework does it).
#include <chrono>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "vinfer/error.hpp"
#include "vinfer/suggest.hpp"
#include "vinfer/zoo.hpp"
#include "zoo/builder.hpp"
#include "zoo/checkpoint.hpp"
#include "zoo/keras_h5.hpp"

namespace vinfer {
namespace {

// Deterministic on every platform (std::normal_distribution is not).
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

std::uint64_t hash(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::vector<float> initialise(const zoo::Param& p, std::uint64_t seed) {
  Rng rng{seed ^ hash(p.key)};
  std::vector<float> v(static_cast<std::size_t>(numel(p.shape)));
  auto normal = [&](double sd) {
    for (float& x : v) x = static_cast<float>(sd * rng.normal());
  };
  auto uniform = [&](double bound) {
    for (float& x : v) x = static_cast<float>(bound * (2.0 * rng.uniform() - 1.0));
  };
  switch (p.init) {
    case zoo::Init::KaimingNormalFanIn: normal(std::sqrt(2.0 / static_cast<double>(p.fan_in))); break;
    case zoo::Init::KaimingNormalFanOut: normal(std::sqrt(2.0 / static_cast<double>(p.fan_out))); break;
    case zoo::Init::KaimingUniformA5: uniform(1.0 / std::sqrt(static_cast<double>(p.fan_in))); break;
    case zoo::Init::Normal001: normal(0.01); break;
    case zoo::Init::Zeros: break;
    case zoo::Init::Ones: std::fill(v.begin(), v.end(), 1.f); break;
    case zoo::Init::GlorotUniform: uniform(std::sqrt(6.0 / static_cast<double>(p.fan_in + p.fan_out))); break;
  }
  return v;
}

// torchvision's legacy DenseNet checkpoints name "norm.1" what the model calls "norm1":
// "...denselayerN.{norm,relu,conv}.{1,2}.{weight,bias,running_mean,running_var}"
// becomes "...denselayerN.{norm,relu,conv}{1,2}.PARAM"; any other key stays.
std::string legacy_densenet_key(const std::string& k) {
  const std::size_t last = k.rfind('.');  // before PARAM
  if (last == std::string::npos || last < 2 || k[last - 2] != '.' || (k[last - 1] != '1' && k[last - 1] != '2')) return k;
  const std::string param = k.substr(last + 1);
  if (param != "weight" && param != "bias" && param != "running_mean" && param != "running_var") return k;
  const std::string head = k.substr(0, last - 2);  // "...denselayerN.norm"
  const std::size_t dot = head.rfind('.');
  if (dot == std::string::npos) return k;
  const std::string kind = head.substr(dot + 1);
  if (kind != "norm" && kind != "relu" && kind != "conv") return k;
  std::size_t digits = dot;
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(head[digits - 1]))) --digits;
  static const std::string layer = "denselayer";
  if (digits == dot || digits < layer.size() || head.compare(digits - layer.size(), layer.size(), layer) != 0) return k;
  return head + k.substr(last - 1);  // "...norm" + "1.weight"
}

std::string list(const std::vector<std::string>& xs) {
  std::string s;
  for (std::size_t i = 0; i < xs.size() && i < 8; ++i) s += (i ? ", " : "") + xs[i];
  if (xs.size() > 8) s += ", ... (" + std::to_string(xs.size()) + " in all)";
  return s;
}

// The graph's tensor for a parameter: Keras kernels [kh, kw, in, out] become
// [out, in, kh, kw]; a transposed one becomes [in, out] (unless the
// checkpoint reader has done that: `read_transposed`).
std::shared_ptr<const TensorData> to_graph(const zoo::Param& p, TensorData t, bool read_transposed = false) {
  if (p.transposed && !read_transposed) {
    const std::int64_t rows = p.shape[0], cols = p.shape[1];
    std::vector<float> o(t.f.size());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) o[static_cast<std::size_t>(c * rows + r)] = t.f[static_cast<std::size_t>(r * cols + c)];
    return std::make_shared<const TensorData>(TensorData::f32({cols, rows}, std::move(o)));
  }
  if (!p.hwio) return std::make_shared<const TensorData>(std::move(t));
  const std::int64_t kh = p.shape[0], kw = p.shape[1], ci = p.shape[2], co = p.shape[3];
  std::vector<float> o(t.f.size());
  for (std::int64_t h = 0; h < kh; ++h)
    for (std::int64_t w = 0; w < kw; ++w)
      for (std::int64_t i = 0; i < ci; ++i)
        for (std::int64_t c = 0; c < co; ++c)
          o[static_cast<std::size_t>(((c * ci + i) * kh + h) * kw + w)] = t.f[static_cast<std::size_t>(((h * kw + w) * ci + i) * co + c)];
  return std::make_shared<const TensorData>(TensorData::f32({co, ci, kh, kw}, std::move(o)));
}

void fill(zoo::ZooNet& net, zoo::StateDict* sd, const std::string& source, std::uint64_t seed) {
  if (!sd) {
    for (const zoo::Param& p : net.params) net.graph.value(p.value).constant = to_graph(p, TensorData::f32(p.shape, initialise(p, seed)));
    return;
  }
  if (net.graph.name.rfind("densenet", 0) == 0) {  // torchvision only (Keras names have the prefix)
    zoo::StateDict renamed;
    for (auto& [k, v] : *sd) renamed[legacy_densenet_key(k)] = std::move(v);
    *sd = std::move(renamed);
  }
  std::vector<std::string> missing, mismatched, unexpected;
  for (const zoo::Param& p : net.params) {
    auto it = sd->find(p.key);
    if (it == sd->end()) {
      missing.push_back(p.key);
    } else {
      Shape stored = it->second.shape;  // (a transposed one was read as [in, out])
      if (p.transposed && stored.size() == 2) std::swap(stored[0], stored[1]);
      if (stored != p.shape || it->second.dtype != DType::F32)
        mismatched.push_back(p.key + " " + shape_str(stored) + " (model: " + shape_str(p.shape) + ")");
    }
  }
  std::vector<std::string> known;
  for (const zoo::Param& p : net.params) known.push_back(p.key);
  known.insert(known.end(), net.ignored_keys.begin(), net.ignored_keys.end());
  std::sort(known.begin(), known.end());
  for (const auto& [k, v] : *sd)
    if (!std::binary_search(known.begin(), known.end(), k)) unexpected.push_back(k);
  if (!missing.empty() || !mismatched.empty() || !unexpected.empty()) {
    std::string msg = source + ": weights do not fit " + net.graph.name + ":";
    if (!missing.empty()) msg += " missing " + list(missing) + ";";
    if (!mismatched.empty()) msg += " wrong shape " + list(mismatched) + ";";
    if (!unexpected.empty()) msg += " unexpected " + list(unexpected) + ";";
    msg.pop_back();
    throw Error(ErrorKind::BadInput, msg);
  }
  for (const zoo::Param& p : net.params) net.graph.value(p.value).constant = to_graph(p, std::move(sd->at(p.key)), true);
}

// Keras files hold each layer's variables in order; name them as our parameters are named.
zoo::StateDict keras_state_dict(const zoo::ZooNet& net, zoo::KerasWeights kw) {
  std::map<std::string, std::vector<std::string>> keys;  // layer -> its parameter keys, in declaration order
  for (const zoo::Param& p : net.params) keys[p.key.substr(0, p.key.rfind('/'))].push_back(p.key);
  zoo::StateDict sd;
  for (auto& [layer, ws] : kw) {
    const auto it = keys.find(layer);
    for (std::size_t i = 0; i < ws.size(); ++i) {
      const bool known = it != keys.end() && i < it->second.size();
      sd[known ? it->second[i] : layer + "/" + std::to_string(i)] = std::move(ws[i]);
    }
  }
  return sd;
}

}  // namespace

std::vector<std::string> zoo_models() {
  std::vector<std::string> n = zoo::torchvision_names();
  for (const std::string& k : zoo::keras_names()) n.push_back("keras:" + k);
  return n;
}

bool is_zoo_model(const std::string& name) {
  const auto names = zoo_models();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Graph zoo_graph(const std::string& name, const std::string& weights_path, ZooInfo* info, std::uint64_t seed) {
  if (!is_zoo_model(name)) {
    const std::string near = closest_match(name, zoo_models());
    throw Error(ErrorKind::InvalidArgument, "unknown built-in network '" + name + "'" + (near.empty() ? "" : " (did you mean " + near + "?)"));
  }
  const bool keras = name.rfind("keras:", 0) == 0;
  zoo::ZooNet net = keras ? zoo::build_keras(name.substr(6)) : zoo::build_torchvision(name);
  if (weights_path.empty()) {
    fill(net, nullptr, name, seed);
  } else {
    std::set<std::string> transposed;  // read from the file as the graph holds them
    for (const zoo::Param& p : net.params)
      if (p.transposed) transposed.insert(p.key);
    zoo::StateDict sd =
        keras ? keras_state_dict(net, zoo::read_keras_h5(weights_path)) : zoo::read_checkpoint(weights_path, transposed);
    fill(net, &sd, weights_path, seed);
  }
  if (info) {
    info->preset = net.preset;
    info->random_weights = weights_path.empty();
  }
  return std::move(net.graph);
}

Model load_model(const std::string& model, const std::string& weights, const EngineOptions& options, ZooInfo* info) {
  if (is_zoo_model(model)) {
    const auto t0 = std::chrono::steady_clock::now();
    Graph g = zoo_graph(model, weights, info);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return Model::from_graph(std::move(g), model, options, {{"read", ms}});
  }
  std::error_code ec;
  if (model.find_first_of("/.") == std::string::npos && !std::filesystem::exists(model, ec)) {
    // Not a path, not a file, not a built-in: most likely a mistyped built-in name.
    const std::string near = closest_match(model, zoo_models());
    std::string all;
    for (const std::string& n : zoo_models()) all += (all.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::InvalidArgument, "'" + model + "' is neither a file nor a built-in network" +
                                                (near.empty() ? "" : " (did you mean " + near + "?)") + "; built-in: " + all);
  }
  if (!weights.empty())
    throw Error(ErrorKind::InvalidArgument, "separate weights apply to built-in networks only (" + model +
                                                " is not one of them; an ONNX file carries its own)");
  if (info) *info = ZooInfo{"torchvision", false};
  return Model::load_onnx(model, options);
}

}  // namespace vinfer
