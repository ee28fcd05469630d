// Calibration files (vinfer/calibration.hpp): JSON in and out, validated.
#include "vinfer/calibration.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "util/file_io.hpp"
#include "vinfer/error.hpp"
#include "vinfer/graph.hpp"

namespace vinfer {
namespace {

using json = nlohmann::json;
constexpr const char* kFormat = "vinfer-calibration";
constexpr int kVersion = 1;

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw Error(ErrorKind::InvalidArgument, what + ": not a usable calibration file: " + why);
}

float finite_number(const json& j, const std::string& what, const std::string& where) {
  if (!j.is_number()) bad(what, where + " is not a number");
  const double d = j.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 3e38) bad(what, where + " is not a finite float");
  return static_cast<float>(d);
}

// FNV-1a, 64 bits.
struct Hash {
  std::uint64_t h = 1469598103934665603ULL;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ULL;
  }
  void text(const std::string& s) { bytes(s.data(), s.size() + 1); }
};

}  // namespace

std::string calibration_fingerprint(const Graph& g) {
  Hash h;
  for (const Node& n : g.nodes) {
    if (n.op != "Conv" || n.inputs.size() < 2) continue;
    h.text(n.name);
    const Value& w = g.value(n.inputs[1]);
    for (std::int64_t d : w.shape) h.bytes(&d, sizeof d);
    // A sample of the weights (where the graph still holds them): enough to
    // tell two trainings of one architecture apart, cheap on VGG19's 0.5 GB.
    if (w.constant && !w.constant->f.empty()) {
      const std::vector<float>& f = w.constant->f;
      const std::size_t step = f.size() / 64 + 1;
      for (std::size_t i = 0; i < f.size(); i += step) h.bytes(&f[i], sizeof(float));
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h.h));
  return hex;
}

Calibration Calibration::parse(const std::string& text, const std::string& what) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    bad(what, std::string("not JSON (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kFormat)
    bad(what, std::string("no \"format\": \"") + kFormat + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kVersion)
    bad(what, "version " + (j.contains("version") ? j["version"].dump() : std::string("missing")) + " (this vinfer reads 1)");
  Calibration c;
  for (const char* key : {"model", "fingerprint"}) {
    if (!j.contains(key) || !j[key].is_string()) bad(what, std::string("\"") + key + "\" is missing or not a string");
  }
  c.model = j["model"].get<std::string>();
  c.fingerprint = j["fingerprint"].get<std::string>();
  if (j.contains("images")) {
    if (!j["images"].is_number_integer() || j["images"].get<long long>() < 0) bad(what, "\"images\" is not a count");
    c.images = static_cast<int>(std::min<long long>(j["images"].get<long long>(), 1 << 30));
  }
  if (!j.contains("activations") || !j["activations"].is_object() || j["activations"].empty())
    bad(what, "\"activations\" is missing or empty");
  for (const auto& [name, r] : j["activations"].items()) {
    const std::string where = "the range of '" + name + "'";
    if (!r.is_object() || !r.contains("min") || !r.contains("max")) bad(what, where + " has no min and max");
    ActivationRange a{finite_number(r["min"], what, where), finite_number(r["max"], what, where)};
    if (a.min > a.max) bad(what, where + " has min > max");
    c.activations[name] = a;
  }
  if (!j.contains("weight_scales") || !j["weight_scales"].is_object()) bad(what, "\"weight_scales\" is missing");
  for (const auto& [name, s] : j["weight_scales"].items()) {
    const std::string where = "a weight scale of '" + name + "'";
    if (!s.is_array() || s.empty()) bad(what, where + " is not a list of numbers");
    std::vector<float> v;
    v.reserve(s.size());
    for (const json& x : s) {
      v.push_back(finite_number(x, what, where));
      if (!(v.back() > 0)) bad(what, where + " is not positive");
    }
    c.weight_scales[name] = std::move(v);
  }
  return c;
}

Calibration Calibration::load(const std::string& path) {
  std::vector<std::uint8_t> bytes;
  detail::read_file(path, bytes, 256ULL << 20);
  return parse(std::string(bytes.begin(), bytes.end()), path);
}

std::string Calibration::to_json() const {
  json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["model"] = model;
  j["fingerprint"] = fingerprint;
  j["images"] = images;
  json acts = json::object();
  for (const auto& [name, r] : activations) acts[name] = {{"min", r.min}, {"max", r.max}};
  j["activations"] = std::move(acts);
  json ws = json::object();
  for (const auto& [name, s] : weight_scales) ws[name] = s;
  j["weight_scales"] = std::move(ws);
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";  // (names that are not UTF-8: replaced)
}

void Calibration::save(const std::string& path) const {
  const std::string text = to_json();
  detail::write_file_atomic(path, [&](std::FILE* f) { std::fwrite(text.data(), 1, text.size(), f); });
}

}  // namespace vinfer
