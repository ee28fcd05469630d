// vinfer command-line tool: a thin layer over libvinfer. Errors become one
// line on stderr and an exit code; nothing here computes anything itself.
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "commands.hpp"
#include "vinfer/error.hpp"
#include "vinfer/stats.hpp"

int main(int argc, char** argv) {
  using namespace vinfer::cli;
  CLI::App app{"vinfer: image to classification, fast, with honest stage-by-stage timing"};
  app.require_subcommand(1);
  app.set_version_flag("--version", vinfer::version());
  std::map<CLI::App*, Handler> handlers;
  auto add = [&](const char* name, const char* help, void (*reg)(CLI::App&, Handler&)) {
    CLI::App* sub = app.add_subcommand(name, help);
    reg(*sub, handlers[sub]);
  };
  add("classify", "Classify images with a network (top-k ImageNet labels)", add_classify);
  add("bench", "Time a network's forward pass", add_bench);
  add("info", "What loading a network did (passes, memory), optionally per-layer times", add_info);
  add("profile", "Per-layer time, GFLOP/s and share of the machine's FP32 peak (info --profile)", add_profile);
  add("devices", "The backends this build has and the devices they find", add_devices);
  add("resize", "Resize an image with a framework's exact rule", add_resize);
  add("preprocess", "Write the tensor a framework's preprocessing produces", add_preprocess);
  add("bench-resize", "Seed 002's resize loop, timed per iteration", add_bench_resize);
  add("bench-preprocess", "A preset's file -> tensor time, stage by stage", add_bench_preprocess);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "vinfer: error: %s\n", e.what());
    return kExitBadInput;
  }
  try {
    for (CLI::App* sub : app.get_subcommands()) return handlers[sub]();
    return kExitInternal;
  } catch (const vinfer::Error& e) {
    std::fprintf(stderr, "vinfer: error: %s\n", e.what());
    return e.kind() == vinfer::ErrorKind::Internal ? kExitInternal : kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "vinfer: error: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vinfer: internal error: %s\n", e.what());
    return kExitInternal;
  }
}
