#include "zoo/hdf5_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <mutex>
#include <string>

#include "vinfer/error.hpp"

#ifndef VINFER_HDF5_SONAME
#error "VINFER_HDF5_SONAME (the HDF5 library's file name to load) is set by the build"
#endif

namespace vinfer::zoo {
namespace {

// An HDF5 library already in the process (loaded with it or by a module
// before), found by its file name: a bundled copy's name has a suffix.
void* loaded_hdf5() {
  std::string path;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) -> int {
        const char* slash = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
        const char* base = slash ? slash + 1 : info->dlpi_name;
        if (!base || std::strncmp(base, "libhdf5", 7) != 0 || std::strncmp(base, "libhdf5_hl", 10) == 0) return 0;
        if (base[7] != '.' && base[7] != '_' && base[7] != '-') return 0;
        *static_cast<std::string*>(data) = info->dlpi_name;
        return 1;
      },
      &path);
  return path.empty() ? nullptr : dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
}

Hdf5Api load() {
  void* lib = loaded_hdf5();
  if (!lib) lib = dlopen(VINFER_HDF5_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    throw Error(ErrorKind::Unsupported, std::string("reading Keras .h5 weights needs the HDF5 library " VINFER_HDF5_SONAME
                                                    ", which cannot be loaded: ") + (why ? why : "not found"));
  }
  auto symbol = [&](const char* name) {
    void* p = dlsym(lib, name);
    if (!p) throw Error(ErrorKind::Unsupported, std::string("the HDF5 library loaded lacks ") + name);
    return p;
  };
  Hdf5Api api;
#define VINFER_HDF5_LOAD(name) api.name = reinterpret_cast<decltype(api.name)>(symbol("H5" #name));
  VINFER_HDF5_FUNCTIONS(VINFER_HDF5_LOAD)
#undef VINFER_HDF5_LOAD
  // The same release series as the headers: its structures and constants.
  unsigned major = 0, minor = 0, release = 0;
  auto get_version = reinterpret_cast<decltype(&H5get_libversion)>(symbol("H5get_libversion"));
  auto open = reinterpret_cast<decltype(&H5open)>(symbol("H5open"));
  if (get_version(&major, &minor, &release) < 0 || major != H5_VERS_MAJOR || minor != H5_VERS_MINOR)
    throw Error(ErrorKind::Unsupported, "the HDF5 library loaded is " + std::to_string(major) + "." + std::to_string(minor) +
                                            ", vinfer was built for " + std::to_string(H5_VERS_MAJOR) + "." +
                                            std::to_string(H5_VERS_MINOR));
  if (open() < 0) throw Error(ErrorKind::Internal, "the HDF5 library did not initialize");
  api.c_s1 = *static_cast<const hid_t*>(symbol("H5T_C_S1_g"));
  api.native_float = *static_cast<const hid_t*>(symbol("H5T_NATIVE_FLOAT_g"));
  api.file_access = *static_cast<const hid_t*>(symbol("H5P_CLS_FILE_ACCESS_ID_g"));
  return api;
}

}  // namespace

const Hdf5Api& hdf5() {
  // Loaded once; a failure is reported again on the next call.
  static std::mutex m;
  static Hdf5Api* api = nullptr;
  std::lock_guard<std::mutex> lock(m);
  if (!api) api = new Hdf5Api(load());  // (never freed: the library stays loaded)
  return *api;
}

}  // namespace vinfer::zoo
