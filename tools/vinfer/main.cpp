// vinfer command-line tool: a thin layer over libvinfer. Errors become one
// line on stderr and an exit code; nothing here computes anything itself.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <malloc.h>

#include "commands.hpp"
#include "vinfer/error.hpp"
#include "vinfer/suggest.hpp"
#include "vinfer/version.hpp"

namespace {

// Each command on one line: what `vinfer` alone prints.
std::vector<const CLI::App*> commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

void print_usage(const CLI::App& app) {
  std::printf("usage: vinfer COMMAND [ARGS...]   (vinfer COMMAND --help for its options)\n\ncommands:\n");
  for (const CLI::App* sub : commands(app))
    std::printf("  %-17s %s\n", sub->get_name().c_str(), sub->get_description().c_str());
}

// After CLI11 refused the command line: the first option the command does not
// have, said as such (CLI11 would report a missing argument first), with the
// nearest one it has. Empty when every option is known.
std::string unknown_option(const CLI::App& sub, int argc, char** argv, int first) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options())
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9') || a[1] == '.') continue;  // not an option (or a negative number)
    a = a.substr(0, a.find('='));
    if (sub.get_option_no_throw(a)) continue;
    const std::string near = vinfer::closest_match(a, names);
    return "unknown option '" + a + "' for '" + sub.get_name() + "'" + (near.empty() ? "" : " (did you mean " + near + "?)");
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace vinfer::cli;
  // glibc raises its mmap threshold each time a large block is freed, so
  // that later weights of a few MiB land in the heap, where freeing them
  // (each as soon as its packed copy exists) returns nothing to the system.
  // A fixed threshold keeps every large block its own mapping (VGG19: 16 MiB
  // less at its peak).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
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
  add("check", "How far a reduced precision (--precision bf16|int8) moves a network's logits on your images, against f32",
      add_check);
  add("calibrate", "Measure a network's activation ranges on your images: the file --precision int8 needs", add_calibrate);
  add("devices", "The backends this build has and the devices they find", add_devices);
  add("serve", "Serve models over the Open Inference Protocol (KServe v2 REST)", add_serve);
  add("resize", "Resize an image with a framework's exact rule", add_resize);
  add("preprocess", "Write the tensor a framework's preprocessing produces", add_preprocess);
  add("bench-resize", "Resize one image over and over, timed per iteration", add_bench_resize);
  add("bench-preprocess", "A preset's file -> tensor time, stage by stage", add_bench_preprocess);
  if (argc < 2) {
    print_usage(app);
    return kExitBadInput;
  }
  if (std::string(argv[1]) == "serve") {  // everything after it is vinfer-serve's
    try {
      return exec_serve(std::vector<std::string>(argv + 2, argv + argc));
    } catch (const vinfer::Error& e) {
      std::fprintf(stderr, "vinfer: error: %s\n", e.what());
      return kExitInternal;
    }
  }
  const CLI::App* chosen = nullptr;
  if (argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : commands(app)) {
      names.push_back(sub->get_name());
      if (sub->get_name() == argv[1]) chosen = sub;
    }
    if (!chosen) {
      const std::string near = vinfer::closest_match(argv[1], names);
      std::fprintf(stderr, "vinfer: error: unknown command '%s'%s; `vinfer` lists the commands\n", argv[1],
                   near.empty() ? "" : (" (did you mean " + near + "?)").c_str());
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = chosen ? unknown_option(*chosen, argc, argv, 2) : "";
    std::fprintf(stderr, "vinfer: error: %s\n", unknown.empty() ? e.what() : unknown.c_str());
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
