#include "zoo/keras_h5.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include "util/checked.hpp"
#include "zoo/hdf5_api.hpp"
#include "vinfer/error.hpp"

namespace vinfer::zoo {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& msg) { throw Error(ErrorKind::BadInput, path + ": " + msg); }

// Closes an HDF5 handle on scope exit.
struct H {
  hid_t id;
  herr_t (*close)(hid_t);
  ~H() {
    if (id >= 0) close(id);
  }
};

std::string attr_string(hid_t obj, const char* name) {
  const Hdf5Api& h5 = hdf5();
  if (h5.Aexists(obj, name) <= 0) return {};
  H a{h5.Aopen(obj, name, H5P_DEFAULT), h5.Aclose};
  H t{h5.Aget_type(a.id), h5.Tclose};
  if (h5.Tget_class(t.id) != H5T_STRING) return {};
  if (h5.Tis_variable_str(t.id) > 0) {
    H mt{h5.Tcopy(h5.c_s1), h5.Tclose};
    h5.Tset_size(mt.id, H5T_VARIABLE);
    h5.Tset_cset(mt.id, h5.Tget_cset(t.id));  // h5py writes UTF-8; HDF5 will not convert between character sets
    char* s = nullptr;
    if (h5.Aread(a.id, mt.id, &s) < 0 || !s) return {};
    std::string r(s);
    h5.free_memory(s);
    return r;
  }
  const std::size_t n = h5.Tget_size(t.id);
  std::string r(n, '\0');
  if (h5.Aread(a.id, t.id, r.data()) < 0) return {};
  r.resize(std::strlen(r.c_str()));
  return r;
}

// A string-array attribute (Keras 2's layer_names / weight_names).
std::vector<std::string> attr_strings(hid_t obj, const char* name) {
  const Hdf5Api& h5 = hdf5();
  std::vector<std::string> out;
  if (h5.Aexists(obj, name) <= 0) return out;
  H a{h5.Aopen(obj, name, H5P_DEFAULT), h5.Aclose};
  H t{h5.Aget_type(a.id), h5.Tclose};
  H sp{h5.Aget_space(a.id), h5.Sclose};
  const hssize_t n = h5.Sget_simple_extent_npoints(sp.id);
  if (n <= 0 || n > 1000000 || h5.Tget_class(t.id) != H5T_STRING) return out;
  if (h5.Tis_variable_str(t.id) > 0) {
    std::vector<char*> p(static_cast<std::size_t>(n), nullptr);
    H mt{h5.Tcopy(h5.c_s1), h5.Tclose};
    h5.Tset_size(mt.id, H5T_VARIABLE);
    h5.Tset_cset(mt.id, h5.Tget_cset(t.id));
    if (h5.Aread(a.id, mt.id, p.data()) >= 0)
      for (char* s : p) out.emplace_back(s ? s : "");
    h5.Dvlen_reclaim(mt.id, sp.id, H5P_DEFAULT, p.data());
  } else {
    const std::size_t sz = h5.Tget_size(t.id);
    std::string buf(sz * static_cast<std::size_t>(n), '\0');
    if (h5.Aread(a.id, t.id, buf.data()) >= 0)
      for (hssize_t i = 0; i < n; ++i) {
        std::string s = buf.substr(static_cast<std::size_t>(i) * sz, sz);
        out.push_back(s.substr(0, s.find('\0')));
      }
  }
  return out;
}

TensorData read_dataset(const std::string& path, hid_t file, const std::string& name) {
  const Hdf5Api& h5 = hdf5();
  H d{h5.Dopen2(file, name.c_str(), H5P_DEFAULT), h5.Dclose};
  if (d.id < 0) bad(path, "cannot open dataset '" + name + "'");
  H sp{h5.Dget_space(d.id), h5.Sclose};
  const int rank = h5.Sget_simple_extent_ndims(sp.id);
  if (rank < 0 || rank > 8) bad(path, "dataset '" + name + "' has rank " + std::to_string(rank));
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (h5.Sget_simple_extent_dims(sp.id, dims.data(), nullptr) < 0) bad(path, "cannot read the shape of dataset '" + name + "'");
  const std::optional<std::int64_t> count = detail::checked_product(dims, std::int64_t{1} << 32);
  if (!count) bad(path, "dataset '" + name + "' is too large");
  const std::int64_t n = *count;
  Shape s(dims.begin(), dims.end());
  H t{h5.Dget_type(d.id), h5.Tclose};
  if (h5.Tget_class(t.id) != H5T_FLOAT) bad(path, "dataset '" + name + "' is not floating point");
  std::vector<float> v(static_cast<std::size_t>(n));
  // HDF5 converts float16/float64 to float32 on read.
  if (n > 0 && h5.Dread(d.id, h5.native_float, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    bad(path, "cannot read dataset '" + name + "'");
  return TensorData::f32(std::move(s), std::move(v));
}

std::string canonical(std::string layer) {
  std::replace(layer.begin(), layer.end(), '/', '_');
  return layer;
}

// The weights of an open file; `path` names it in errors.
KerasWeights read_weights(const H& f, const std::string& path) {
  const Hdf5Api& h5 = hdf5();
  KerasWeights out;
  // A whole-model file (model.save) keeps the weights under /model_weights.
  std::string root = "/";
  if (h5.Lexists(f.id, "model_weights", H5P_DEFAULT) > 0) root = "/model_weights/";
  H r{h5.Gopen2(f.id, root.c_str(), H5P_DEFAULT), h5.Gclose};
  const std::vector<std::string> layers = attr_strings(r.id, "layer_names");
  if (!layers.empty()) {  // Keras 2
    for (const std::string& layer : layers) {
      H g{h5.Gopen2(r.id, layer.c_str(), H5P_DEFAULT), h5.Gclose};
      if (g.id < 0) bad(path, "layer '" + layer + "' is listed but missing");
      std::vector<TensorData> ws;
      for (const std::string& w : attr_strings(g.id, "weight_names")) ws.push_back(read_dataset(path, f.id, root + layer + "/" + w));
      if (!ws.empty()) out[canonical(layer)] = std::move(ws);
    }
    return out;
  }
  if (h5.Lexists(f.id, "layers", H5P_DEFAULT) <= 0) bad(path, "neither a Keras 2 weights file (layer_names) nor a Keras 3 one (/layers)");
  // Keras 3: every group named .../vars holds one layer's variables 0, 1, ...
  std::vector<std::string> vars_groups;
  h5.Lvisit(f.id, H5_INDEX_NAME, H5_ITER_NATIVE,
           [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
             const std::string n(name);
             if (n.size() > 5 && n.compare(n.size() - 5, 5, "/vars") == 0) static_cast<std::vector<std::string>*>(data)->push_back(n);
             return 0;
           },
           &vars_groups);
  for (const std::string& vg : vars_groups) {
    H g{h5.Gopen2(f.id, vg.c_str(), H5P_DEFAULT), h5.Gclose};
    const std::string name = attr_string(g.id, "name");
    std::vector<TensorData> ws;
    for (int i = 0;; ++i) {
      const std::string ds = vg + "/" + std::to_string(i);
      if (h5.Lexists(f.id, ds.c_str(), H5P_DEFAULT) <= 0) break;
      ws.push_back(read_dataset(path, f.id, ds));
    }
    if (!ws.empty()) {
      if (name.empty()) bad(path, "weights at '" + vg + "' have no layer name");
      out[canonical(name)] = std::move(ws);
    }
  }
  return out;
}

}  // namespace

KerasWeights read_keras_h5(const std::string& path) {
  const Hdf5Api& h5 = hdf5();
  h5.Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as return codes, reported by us
  if (h5.Fis_hdf5(path.c_str()) <= 0) bad(path, "not an HDF5 file (Keras weights are .h5)");
  H f{h5.Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), h5.Fclose};
  if (f.id < 0) throw Error(ErrorKind::Io, path + ": cannot open");
  return read_weights(f, path);
}

KerasWeights read_keras_h5_memory(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const Hdf5Api& h5 = hdf5();
  h5.Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  static const char kSignature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  if (size < 8 || std::memcmp(data, kSignature, 8) != 0) bad(name, "not an HDF5 file (Keras weights are .h5)");
  // HDF5's in-memory driver: it copies the image, so `data` stays untouched.
  H fapl{h5.Pcreate(h5.file_access), h5.Pclose};
  if (fapl.id < 0 || h5.Pset_fapl_core(fapl.id, 1 << 16, 0) < 0 || h5.Pset_file_image(fapl.id, const_cast<std::uint8_t*>(data), size) < 0)
    throw Error(ErrorKind::Internal, name + ": cannot set up HDF5's in-memory driver");
  // The name must not be an existing file: the core driver refuses to open
  // an image under the name of a file on disk. Under /dev/null none can be.
  H f{h5.Fopen("/dev/null/vinfer-memory-image.h5", H5F_ACC_RDONLY, fapl.id), h5.Fclose};
  if (f.id < 0) bad(name, "not a readable HDF5 file");
  return read_weights(f, name);
}

}  // namespace vinfer::zoo
