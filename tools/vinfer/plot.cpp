// Benchmark plots through gnuplot (Debian's gnuplot-nox): the latency
// distribution and the stage breakdown, side by side, as PNG or SVG.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cli {

void plot_benchmark(const std::string& out, const std::string& title, const std::vector<double>& latency_ms,
                    const std::vector<std::pair<std::string, double>>& stage_p50) {
  namespace fs = std::filesystem;
  const bool svg = ends_with(out, ".svg");
  if (!svg && !ends_with(out, ".png")) throw Error(ErrorKind::InvalidArgument, "--plot '" + out + "': write .png or .svg");
  char dir_tmpl[] = "/tmp/vinfer_plot_XXXXXX";
  if (!mkdtemp(dir_tmpl)) throw Error(ErrorKind::Io, "cannot create a temporary folder for the plot");
  const fs::path dir(dir_tmpl);
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  {
    std::ofstream lat(dir / "latency.dat");
    for (double v : latency_ms) lat << v << "\n";
    std::ofstream st(dir / "stages.dat");
    for (const auto& [name, v] : stage_p50) st << '"' << name << "\" " << v << "\n";
  }
  const std::string tmp_out = out + ".tmp" + std::to_string(::getpid()) + (svg ? ".svg" : ".png");
  std::ofstream gp(dir / "plot.gp");
  gp << (svg ? "set terminal svg size 1100,440 dynamic font 'sans,11'\n" : "set terminal pngcairo size 1100,440 font 'sans,10'\n");
  gp << "set output '" << tmp_out << "'\n";
  gp << "set multiplot layout 1,2 title \"" << title << "\"\n";
  gp << "stats '" << (dir / "latency.dat").string() << "' using 1 nooutput\n"
     << "bw = (STATS_max - STATS_min) / 30.0\nif (bw <= 0) bw = 0.01\n"
     << "bin(x) = bw * floor(x / bw) + bw / 2\n"
     << "set title 'latency per iteration'\nset xlabel 'ms'\nset ylabel 'iterations'\nset style fill solid 0.6\nset boxwidth bw\n"
     << "plot '" << (dir / "latency.dat").string() << "' using (bin($1)):(1.0) smooth freq with boxes notitle lc rgb '#3366aa'\n";
  gp << "set title 'stages, p50'\nset xlabel ''\nset ylabel 'ms'\nset style data histograms\nset boxwidth 0.7 relative\n"
     << "set xtics rotate by -30\nset yrange [0:*]\n"
     << "plot '" << (dir / "stages.dat").string() << "' using 2:xtic(1) notitle lc rgb '#cc6633'\n";
  gp << "unset multiplot\n";
  gp.close();
  const std::string cmd = "gnuplot '" + (dir / "plot.gp").string() + "' 2>" + (dir / "err.txt").string();
  const int rc = std::system(cmd.c_str());
  if (rc != 0 || !fs::exists(tmp_out)) {
    std::error_code ec;
    fs::remove(tmp_out, ec);
    std::ifstream err(dir / "err.txt");
    std::string first;
    std::getline(err, first);
    if (rc == 127 || first.find("not found") != std::string::npos)
      throw Error(ErrorKind::Unsupported, "--plot needs gnuplot (Debian: gnuplot-nox)");
    throw Error(ErrorKind::Io, "gnuplot failed: " + first);
  }
  fs::rename(tmp_out, out);
}

}  // namespace vinfer::cli
