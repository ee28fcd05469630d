#include <charconv>
#include <cstdlib>

#include "commands.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cli {

std::string default_tune_cache() {
  if (const char* p = std::getenv("VINFER_TUNE_CACHE")) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/vinfer/tune.txt";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/vinfer/tune.txt";
  return "";
}

std::pair<int, int> parse_size(const std::string& s) {
  const auto x = s.find_first_of("xX");
  auto num = [&](std::string_view v) {
    int n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty())
      throw Error(ErrorKind::InvalidArgument, "--size '" + s + "' is not WxH (e.g. 224x224)");
    return n;
  };
  if (x == std::string::npos) throw Error(ErrorKind::InvalidArgument, "--size '" + s + "' is not WxH (e.g. 224x224)");
  const int w = num(std::string_view(s).substr(0, x)), h = num(std::string_view(s).substr(x + 1));
  if (w <= 0 || h <= 0 || w > 65535 || h > 65535)
    throw Error(ErrorKind::InvalidArgument, "--size '" + s + "': each side must be 1..65535");
  return {w, h};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

}  // namespace vinfer::cli

namespace vinfer::cli {

void ResizeArgs::add_to(CLI::App& app, const std::string& default_compat) {
  compat = default_compat;
  app.add_option("--compat", compat, "Framework whose rule to reproduce: torch, tf, pil, opencv")->capture_default_str();
  app.add_option("--filter", filter,
                 "nearest, nearest-exact, bilinear, bicubic, area, box, hamming, lanczos (default: the framework's default)");
  app.add_flag("--antialias", antialias, "torch/tf: antialiased bilinear or bicubic");
  app.add_flag("--align-corners", align_corners, "torch: align_corners=True");
  app.add_option("--threads", threads, "Worker threads (0 = all cores)")->capture_default_str()->check(CLI::Range(0, 256));
}

ResizeSpec ResizeArgs::spec() const {
  ResizeSpec s;
  s.compat = parse_compat(compat);
  s.filter = filter.empty() ? default_filter(s.compat) : parse_filter(filter);
  s.antialias = antialias;
  s.align_corners = align_corners;
  s.threads = threads;
  validate(s);
  return s;
}

}  // namespace vinfer::cli
