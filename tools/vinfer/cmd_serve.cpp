// `vinfer serve`: hands over to vinfer-serve, the executable beside this one
// (src/serve/server.hpp), which links the HTTP library.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cli {

void add_serve(CLI::App& app, Handler& run) {
  app.description("Serve models over the Open Inference Protocol (KServe v2 REST; `vinfer serve --help`)");
  app.prefix_command();  // every argument goes to vinfer-serve, --help included
  app.set_help_flag();
  run = [] { return exec_serve({}); };
}

int exec_serve(const std::vector<std::string>& args) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw Error(ErrorKind::Internal, "cannot find this executable's directory");
  self[n] = '\0';
  std::string path(self);
  path = path.substr(0, path.rfind('/') + 1) + "vinfer-serve";
  std::vector<char*> argv{path.data()};
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(path.c_str(), argv.data());
  throw Error(ErrorKind::Internal, "vinfer serve runs " + path + ", which cannot be started: " + std::strerror(errno));
}

}  // namespace vinfer::cli
