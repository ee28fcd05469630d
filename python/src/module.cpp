// vinfer's Python extension (vinfer._vinfer): the public C++ API, NumPy in
// and out. The Python package (python/vinfer/__init__.py) re-exports it with
// the docstrings users see; this file only converts types, releases the GIL
// around the work, and maps vinfer::Error kinds to Python exceptions.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <iterator>
#include <cstring>
#include <map>
#include <type_traits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "vinfer/color.hpp"
#include "vinfer/decode.hpp"
#include "vinfer/devices.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/pipeline.hpp"
#include "vinfer/postprocess.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/resize.hpp"
#include "vinfer/version.hpp"
#include "vinfer/zoo.hpp"

namespace py = pybind11;

namespace vinfer::python {
namespace {

[[noreturn]] void invalid(const std::string& what) { throw Error(ErrorKind::InvalidArgument, what); }

// Bytes of a path-or-bytes source: a str / os.PathLike is a file name, bytes
// or a buffer its content. Returns the name used in messages.
struct Source {
  std::string path;               // set for files
  std::string bytes;              // set for in-memory content
  std::string name;
  bool is_file() const { return !path.empty(); }
};

Source source_of(const py::handle& obj) {
  Source s;
  if (py::isinstance<py::bytes>(obj) || py::isinstance<py::bytearray>(obj) || py::isinstance<py::memoryview>(obj)) {
    s.bytes = py::isinstance<py::bytes>(obj) ? obj.cast<std::string>()
                                             : py::module_::import("builtins").attr("bytes")(obj).cast<std::string>();
    s.name = "<bytes>";
    return s;
  }
  if (py::isinstance<py::str>(obj) || py::hasattr(obj, "__fspath__")) {
    s.path = py::str(py::module_::import("os").attr("fspath")(obj)).cast<std::string>();
    if (s.path.empty()) invalid("an empty file name");
    s.name = s.path;
    return s;
  }
  throw py::type_error("expected a file name (str or os.PathLike) or the file's bytes, got " +
                       py::str(py::type::of(obj).attr("__name__")).cast<std::string>());
}

// An owned image handed to NumPy without a copy.
template <typename T>
py::array_t<T> to_array(Image<T>&& img, bool keep_channel_axis) {
  auto* owned = new Image<T>(std::move(img));
  py::capsule free_it(owned, [](void* p) { delete static_cast<Image<T>*>(p); });
  std::vector<py::ssize_t> shape{owned->height(), owned->width()};
  if (keep_channel_axis || owned->channels() != 1) shape.push_back(owned->channels());
  return py::array_t<T>(shape, owned->data(), free_it);
}

// A C-contiguous HxW or HxWxC array as an image view (the array keeps the data alive).
template <typename T>
ImageView<T> view_of(const py::array_t<T, py::array::c_style>& a) {
  if (a.ndim() != 2 && a.ndim() != 3) invalid("an image must be HxW or HxWxC, got " + std::to_string(a.ndim()) + " dimensions");
  const int h = static_cast<int>(a.shape(0)), w = static_cast<int>(a.shape(1));
  const int c = a.ndim() == 3 ? static_cast<int>(a.shape(2)) : 1;
  if (c != 1 && c != 3 && c != 4) invalid("an image must have 1, 3 or 4 channels, got " + std::to_string(c));
  if (h < 1 || w < 1) invalid("an empty image");
  return {a.data(), w, h, c, static_cast<std::ptrdiff_t>(w) * c};
}

std::string dtype_name(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

PixelFormat format_of(const std::string& mode, int file_channels) {
  if (mode.empty()) return file_channels == 1 ? PixelFormat::Gray : file_channels == 2 || file_channels == 4 ? PixelFormat::RGBA : PixelFormat::RGB;
  if (mode == "L") return PixelFormat::Gray;
  if (mode == "RGB") return PixelFormat::RGB;
  if (mode == "RGBA") return PixelFormat::RGBA;
  invalid("mode '" + mode + "': expected L, RGB or RGBA (or None: as the file is)");
}

std::pair<int, int> size_of(const py::object& size) {
  const auto wh = size.cast<std::vector<long long>>();
  if (wh.size() != 2 || wh[0] < 1 || wh[1] < 1 || wh[0] > 65535 || wh[1] > 65535)
    invalid("size must be (width, height), each 1..65535");
  return {static_cast<int>(wh[0]), static_cast<int>(wh[1])};
}

// The file's bytes (Error(Io) naming it when it cannot be read).
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorKind::Io, path + ": read error");
  return bytes;
}

py::array decode(const py::object& src, const std::string& mode, bool exif, std::uint64_t max_pixels, const std::string& gray,
                 const std::optional<py::object>& draft) {
  const Source s = source_of(src);
  DecodeOptions opt;
  opt.apply_exif_orientation = exif;
  opt.max_pixels = max_pixels;
  opt.gray_rule = parse_gray_rule(gray);
  if (draft) std::tie(opt.target_width, opt.target_height) = size_of(*draft);
  ImageU8 img;
  {
    py::gil_scoped_release nogil;
    const std::string file = s.is_file() ? read_all(s.path) : std::string();
    const std::string& bytes = s.is_file() ? file : s.bytes;
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    const ImageInfo info = probe_memory(data, bytes.size(), s.name);
    opt.format = format_of(mode, info.channels);
    decode_memory(data, bytes.size(), opt, img, s.name);
  }
  return to_array(std::move(img), !mode.empty() && mode != "L");
}

ResizeSpec resize_spec(const std::string& compat, const std::optional<std::string>& filter, bool antialias,
                       bool align_corners, int threads) {
  ResizeSpec spec;
  spec.compat = parse_compat(compat);
  spec.filter = filter ? parse_filter(*filter) : default_filter(spec.compat);
  spec.antialias = antialias;
  spec.align_corners = align_corners;
  spec.threads = threads;
  validate(spec);
  return spec;
}


py::array resize(const py::array& image, const py::object& size, const std::string& compat, const std::optional<std::string>& filter,
                 bool antialias, bool align_corners, const std::string& dtype, int threads, std::optional<double> scale) {
  const auto [w, h] = size_of(size);
  ResizeSpec spec = resize_spec(compat, filter, antialias, align_corners, threads);
  if (scale) {
    if (spec.compat != Compat::Torch) invalid("scale applies to compat 'torch' only (F.interpolate's scale_factor)");
    spec.torch_scale_x = spec.torch_scale_y = *scale;
    validate(spec);
  }
  Resizer r(spec);
  if (dtype != "uint8" && dtype != "float32" && !dtype.empty()) invalid("dtype '" + dtype + "': expected uint8 or float32");
  const bool keep_axis = image.ndim() == 3;
  if (py::isinstance<py::array_t<std::uint8_t>>(image)) {
    const auto a = py::array_t<std::uint8_t, py::array::c_style>::ensure(image);
    const ImageView<std::uint8_t> in = view_of(a);
    if (dtype == "float32") {
      ImageF32 out;
      {
        py::gil_scoped_release nogil;
        r.run(in, w, h, out);
      }
      return to_array(std::move(out), keep_axis);
    }
    ImageU8 out;
    {
      py::gil_scoped_release nogil;
      r.run(in, w, h, out);
    }
    return to_array(std::move(out), keep_axis);
  }
  if (py::isinstance<py::array_t<float>>(image)) {
    if (dtype == "uint8") invalid("a float32 image resizes to float32 only");
    const auto a = py::array_t<float, py::array::c_style>::ensure(image);
    const ImageView<float> in = view_of(a);
    ImageF32 out;
    {
      py::gil_scoped_release nogil;
      r.run(in, w, h, out);
    }
    return to_array(std::move(out), keep_axis);
  }
  throw py::type_error("an image must be uint8 or float32, got " + dtype_name(image));
}

// Runs a Preprocessor on a path, bytes or an RGB uint8 array; writes into out.
void preprocess_into(Preprocessor& pre, const py::handle& src, float* out) {
  if (py::isinstance<py::array>(src)) {
    const py::array arr = py::reinterpret_borrow<py::array>(src);
    if (!py::isinstance<py::array_t<std::uint8_t>>(arr)) throw py::type_error("an image array must be uint8, got " + dtype_name(arr));
    const auto a = py::array_t<std::uint8_t, py::array::c_style>::ensure(arr);
    const ImageView<std::uint8_t> v = view_of(a);
    if (v.channels != 3) invalid("an image array for preprocessing must be HxWx3 RGB, got " + std::to_string(v.channels) + " channel(s)");
    py::gil_scoped_release nogil;
    pre.run(v, out);
    return;
  }
  const Source s = source_of(src);
  py::gil_scoped_release nogil;
  if (s.is_file()) pre.run_file(s.path, out);
  else pre.run_memory(reinterpret_cast<const std::uint8_t*>(s.bytes.data()), s.bytes.size(), s.name, out);
}

py::array_t<float> tensor_for(const Preprocessor& pre) {
  const auto shape = pre.tensor_shape();
  return py::array_t<float>(std::vector<py::ssize_t>(shape.begin(), shape.end()));
}

// One Preprocessor per calling thread and setting, kept from call to call:
// a fresh one per call started its streaming thread and planned its resize
// each time (0.25 ms of a 1.7 ms PNG with two threads).
py::array preprocess(const py::object& src, const std::string& preset_name, int size, bool fast, int threads) {
  struct Kept {
    std::string preset;
    int size, threads;
    bool fast;
    Preprocessor pre;
  };
  thread_local std::vector<Kept> kept;
  auto it = std::find_if(kept.begin(), kept.end(), [&](const Kept& k) {
    return k.preset == preset_name && k.size == size && k.threads == threads && k.fast == fast;
  });
  if (it == kept.end()) {
    Preset p = preset(preset_name, size);
    p.fast_decode = fast;
    if (kept.size() >= 4) kept.erase(kept.begin());
    kept.push_back({preset_name, size, threads, fast, Preprocessor(p, threads)});
    it = kept.end() - 1;
  }
  Preprocessor& pre = it->pre;
  py::array_t<float> out = tensor_for(pre);
  preprocess_into(pre, src, out.mutable_data());
  return out;
}

// Runs calls on one persistent thread. OpenMP (libgomp) keeps a team per
// thread that starts parallel regions, and throttles the spinning of all
// teams once it manages more threads than there are cores: inference called
// from changing Python threads ran ~1.8x slower than from the thread that
// loaded the model (DenseNet121, 2 cores: 25 vs 14 ms). So each compiled
// copy is loaded and run on a thread of its own, whichever thread calls.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  // Runs fn on the worker and waits; rethrows what it threw. One caller at a time.
  void call(const std::function<void()>& fn) {
    std::unique_lock<std::mutex> lock(mu_);
    job_ = &fn;
    done_ = false;
    error_ = nullptr;
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || job_ != nullptr; });
      if (stop_) return;
      const std::function<void()>* fn = job_;
      lock.unlock();
      std::exception_ptr e;
      try {
        (*fn)();
      } catch (...) {
        e = std::current_exception();
      }
      lock.lock();
      job_ = nullptr;
      error_ = e;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// A loaded network: `instances` compiled copies, each with its own
// preprocessor, handed to one caller at a time, so that Python threads that
// share a Model run in parallel up to that many and never share an executor.
class PyModel {
 public:
  PyModel(const std::string& model, const std::string& weights, int threads, const std::string& device,
          const std::optional<std::string>& preset_name, int instances, bool tune, const std::string& tune_cache, int batch,
          const std::string& precision, const std::string& calibration, bool calibrating, bool compact_weights) {
    if (instances < 1 || instances > 64) invalid("instances must be 1..64");
    if (batch < 1 || batch > 4096) invalid("batch must be 1..4096");
    EngineOptions opt;
    // Several instances share the CPUs granted rather than each taking them all.
    opt.threads = threads > 0 || instances == 1 ? threads : std::max(1, default_threads() / instances);
    opt.batch = batch;
    opt.tune = tune;
    opt.tune_cache = tune_cache;
    opt.keep_constants = calibrating;  // (save_calibration reads the weights)
    opt.record_ranges = calibrating;
    opt.compact_weights = compact_weights;
    if (precision != "f32" && precision != "bf16" && precision != "int8")
      invalid("precision '" + precision + "': expected f32, bf16 or int8");
    opt.precision = parse_precision(precision);
    if (calibrating && (instances != 1 || opt.precision != Precision::F32))
      invalid("calibrating=True measures one float32 instance (instances=1, precision='f32')");
    if (opt.precision == Precision::INT8) {
      if (calibration.empty()) invalid("precision='int8' needs calibration=FILE (from Model(..., calibrating=True).save_calibration)");
      py::gil_scoped_release nogil;
      opt.calibration = std::make_shared<const Calibration>(Calibration::load(calibration));
    } else if (!calibration.empty()) {
      invalid("calibration applies to precision='int8'");
    }
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
      opt.backend = Backend::Cuda;
      const char* first = device.data() + 5;
      const char* last = device.data() + device.size();
      const auto [end, ec] = std::from_chars(first, last, opt.device);
      if (device.size() > 5 && (ec != std::errc() || end != last || opt.device < 0))
        invalid("device '" + device + "': expected cpu, cuda or cuda:N");
    } else if (device != "cpu") {
      invalid("device '" + device + "': expected cpu, cuda or cuda:N");
    }
    py::gil_scoped_release nogil;
    for (int i = 0; i < instances; ++i) {
      auto slot = std::make_unique<Slot>();
      slot->worker.call([&] { slot->model.emplace(load_model(model, weights, opt, &zoo_)); });
      slots_.push_back(std::move(slot));
    }
    preset_name_ = preset_name ? *preset_name : zoo_.preset;
    source_ = model;
  }

  const Model& first() const { return *slots_[0]->model; }

  py::tuple input_shape() const { return py::cast(first().input_shape()); }
  py::tuple output_shape() const { return py::cast(first().output_shape()); }

  py::dict info() const {
    const ModelInfo& i = first().info();
    py::dict d;
    d["name"] = i.name;
    d["source"] = i.source;
    d["preset"] = preset_name_;
    d["random_weights"] = zoo_.random_weights;
    d["nodes_imported"] = i.nodes_imported;
    d["nodes_executed"] = i.nodes_executed;
    d["arena_bytes"] = i.arena_bytes;
    d["weight_bytes"] = i.weight_bytes;
    d["passes"] = i.passes;
    d["load_ms"] = i.load_ms;
    d["peak_rss_bytes"] = i.peak_rss_bytes;
    d["threads"] = first().threads();
    d["instances"] = slots_.size();
    d["outputs_probabilities"] = first().outputs_probabilities();
    return d;
  }

  // x: float32, N items of the model's input shape (any N >= 1: run in the
  // model's batches, the last one padded).
  py::array run(const py::array& x) {
    if (!py::isinstance<py::array_t<float>>(x)) throw py::type_error("input must be float32, got " + dtype_name(x));
    const auto a = py::array_t<float, py::array::c_style>::ensure(x);
    const Shape& in = first().input_shape();
    if (in.empty() || static_cast<std::size_t>(a.ndim()) != in.size() || a.shape(0) < 1 ||
        !std::equal(in.begin() + 1, in.end(), a.shape() + 1)) {
      std::string got, want = "N";
      for (py::ssize_t i = 0; i < a.ndim(); ++i) got += (i ? ", " : "") + std::to_string(a.shape(i));
      for (std::size_t i = 1; i < in.size(); ++i) want += ", " + std::to_string(in[i]);
      invalid("input shape (" + got + ") is not the model's (" + want + ")");
    }
    const py::ssize_t n = a.shape(0);
    // One output per item where the output's first dimension is the batch;
    // otherwise the output as it is (and run_items takes exactly one batch).
    std::vector<py::ssize_t> out_shape(first().output_shape().begin(), first().output_shape().end());
    if (!out_shape.empty() && out_shape[0] == in[0]) out_shape[0] = n;
    else if (n != static_cast<py::ssize_t>(first().batch()))
      invalid("the network's output " + shape_str(first().output_shape()) + " is not one per item of its input " + shape_str(in) +
              ": give exactly " + std::to_string(first().batch()) + " item(s)");
    py::array_t<float> y(out_shape);
    const float* src = a.data();
    float* dst = y.mutable_data();
    {
      py::gil_scoped_release nogil;
      Lease lease(*this);
      lease.slot->worker.call([&] { lease.slot->model->run_items(src, n, dst); });
    }
    return y;
  }

  // images: one source or a list; each a path, bytes or an HxWx3 uint8 array.
  // Loaded by `workers` threads while the model runs its batches.
  py::object classify(const py::object& images, int topk, bool raise_errors, int workers) {
    if (topk < 1) invalid("topk must be at least 1");
    if (workers < 1 || workers > 256) invalid("workers must be 1..256");
    const bool one = !py::isinstance<py::list>(images) && !py::isinstance<py::tuple>(images);
    std::vector<py::object> objects;
    if (one) objects.push_back(images);
    else
      for (const py::handle& h : images) objects.push_back(py::reinterpret_borrow<py::object>(h));
    // Everything the loaders read, taken while holding the GIL: paths and
    // bytes copied, arrays held (their memory is read without the GIL).
    struct Item {
      Source src;
      std::optional<py::array_t<std::uint8_t, py::array::c_style>> array;
      ImageView<std::uint8_t> view{};
    };
    std::vector<Item> items(objects.size());
    for (std::size_t i = 0; i < objects.size(); ++i) {
      if (py::isinstance<py::array>(objects[i])) {
        const py::array arr = py::reinterpret_borrow<py::array>(objects[i]);
        if (!py::isinstance<py::array_t<std::uint8_t>>(arr)) throw py::type_error("an image array must be uint8, got " + dtype_name(arr));
        items[i].array = py::array_t<std::uint8_t, py::array::c_style>::ensure(arr);
        items[i].view = view_of(*items[i].array);
        if (items[i].view.channels != 3)
          invalid("an image array for preprocessing must be HxWx3 RGB, got " + std::to_string(items[i].view.channels) + " channel(s)");
      } else {
        items[i].src = source_of(objects[i]);
      }
    }
    std::vector<ItemResult> results(items.size());
    {
      py::gil_scoped_release nogil;  // never wait for a slot while holding the GIL
      Lease lease(*this);
      PipelineOptions po;
      po.workers = workers;
      po.topk = topk;
      lease.slot->worker.call([&] {
        Model& m = *lease.slot->model;
        if (items.size() == 1) po.preprocessor = &lease.preprocessor(preset_name_);
        classify_items(
            m, model_preset(m, preset_name_), items.size(),
            [&](std::size_t i, Preprocessor& pre, float* x) {
              const Item& it = items[i];
              if (it.array) pre.run(it.view, x);
              else if (it.src.is_file()) pre.run_file(it.src.path, x);
              else pre.run_memory(reinterpret_cast<const std::uint8_t*>(it.src.bytes.data()), it.src.bytes.size(), it.src.name, x);
            },
            [&](ItemResult&& r) { results[r.index] = std::move(r); }, po);
      });
    }
    py::list out;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const ItemResult& r = results[i];
      if (!r.error.empty() && raise_errors) throw Error(ErrorKind::BadInput, r.error);
      py::dict d;
      d["image"] = name_of(objects[i], i);
      if (!r.error.empty()) {
        d["error"] = r.error;
      } else {
        py::list top;
        for (std::size_t k = 0; k < r.top.size(); ++k) {
          py::dict t;
          t["index"] = r.top[k];
          t["label"] = imagenet_label(r.top[k]);
          t["prob"] = r.prob[k];
          top.append(t);
        }
        d["topk"] = top;
      }
      out.append(d);
    }
    return one ? out[0] : py::object(out);
  }

  // The ranges seen by run() and classify() so far, as a calibration file.
  void save_calibration(const std::string& path) {
    py::gil_scoped_release nogil;
    Lease lease(*this);
    lease.slot->worker.call([&] { lease.slot->model->calibration().save(path); });
  }

  py::list profile(const std::optional<py::array>& x, int runs) {
    if (runs < 1) invalid("runs must be at least 1");
    std::vector<float> input(first().input_size(), 0.5f), y(first().output_size());
    if (x) {
      if (!py::isinstance<py::array_t<float>>(*x)) throw py::type_error("input must be float32, got " + dtype_name(*x));
      const auto a = py::array_t<float, py::array::c_style>::ensure(*x);
      if (static_cast<std::size_t>(a.size()) != input.size())
        invalid(std::to_string(a.size()) + " values, the model takes " + std::to_string(input.size()));
      std::memcpy(input.data(), a.data(), input.size() * sizeof(float));
    }
    std::vector<LayerProfile> best;
    {
      py::gil_scoped_release nogil;
      Lease lease(*this);
      lease.slot->worker.call([&] {
        for (int r = 0; r < runs; ++r) {
          std::vector<LayerProfile> p = lease.slot->model->profile(input.data(), y.data());
          if (best.empty()) best = std::move(p);
          else
            for (std::size_t i = 0; i < best.size() && i < p.size(); ++i) best[i].ms = std::min(best[i].ms, p[i].ms);
        }
      });
    }
    py::list out;
    for (const LayerProfile& l : best) {
      py::dict d;
      d["name"] = l.name;
      d["impl"] = l.impl;
      d["ms"] = l.ms;
      d["gflop"] = l.flops / 1e9;
      d["weight_bytes"] = l.weight_bytes;
      out.append(d);
    }
    return out;
  }

  const std::string& preset_name() const { return preset_name_; }

 private:
  struct Slot {
    Worker worker;  // declared first: destroyed last, after the model it ran
    std::optional<Model> model;
    std::optional<Preprocessor> pre;
  };

  // One slot held for the duration of a call; blocks while all are taken.
  struct Lease {
    explicit Lease(PyModel& m) : owner(m) {
      std::unique_lock<std::mutex> lock(m.mu_);
      m.freed_.wait(lock, [&] { return m.next_free_ < m.slots_.size(); });
      index = m.take();
      slot = m.slots_[index].get();
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(owner.mu_);
      owner.give_back(index);
      owner.freed_.notify_one();
    }
    // The slot's own, for one image at a time (the model's threads).
    Preprocessor& preprocessor(const std::string& name) {
      if (!slot->pre) slot->pre.emplace(model_preset(*slot->model, name), slot->model->threads());
      return *slot->pre;
    }
    PyModel& owner;
    std::size_t index = 0;
    Slot* slot = nullptr;
  };

  // The free slots are indices [next_free_, size) of order_ (a stack).
  std::size_t take() {
    if (order_.size() != slots_.size()) {
      order_.resize(slots_.size());
      for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    }
    return order_[next_free_++];
  }
  void give_back(std::size_t index) { order_[--next_free_] = index; }

  static std::string name_of(const py::handle& item, std::size_t i) {
    if (py::isinstance<py::str>(item) || py::hasattr(item, "__fspath__"))
      return py::str(py::module_::import("os").attr("fspath")(item)).cast<std::string>();
    return "<image " + std::to_string(i) + ">";
  }

  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<std::size_t> order_;
  std::size_t next_free_ = 0;
  std::mutex mu_;
  std::condition_variable freed_;
  ZooInfo zoo_;
  std::string preset_name_, source_;
};

// The general API: any inputs and outputs, by name, as NumPy arrays. The
// Python class vinfer.Session (ONNX Runtime's convention) is built on it.
class PySession {
 public:
  PySession(const py::object& model, int threads, const std::string& backend, const std::map<std::string, Shape>& input_shapes,
            bool optimize) {
    EngineOptions opt;
    opt.threads = threads;
    opt.optimize = optimize;
    opt.input_shapes = input_shapes;
    opt.tune_cache = "";
    if (backend == "reference") opt.backend = Backend::Reference;
    else if (backend != "cpu") invalid("backend '" + backend + "': expected cpu or reference");
    Source src = source_of(model);
    py::gil_scoped_release nogil;
    worker_.call([&] {
      model_.emplace(src.is_file() ? Model::load_onnx(src.path, opt)
                                   : Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(src.bytes.data()),
                                                             src.bytes.size(), src.name, opt));
    });
  }

  static py::list infos(const std::vector<TensorInfo>& v) {
    py::list out;
    for (const TensorInfo& t : v) out.append(py::make_tuple(t.name, to_string(t.type), py::cast(t.shape), py::cast(t.file_shape)));
    return out;
  }
  py::list inputs() const { return infos(model_->inputs()); }
  py::list outputs() const { return infos(model_->outputs()); }
  py::list passes() const { return py::cast(model_->info().passes); }

  // feeds: name -> array; returns every output, in outputs() order.
  py::list run(const py::dict& feeds) {
    std::map<std::string, Tensor> in;
    for (const auto& [key, value] : feeds) {
      const std::string name = py::str(key).cast<std::string>();
      const py::array a = py::array::ensure(value);
      if (!a) throw py::type_error("input '" + name + "' is not an array");
      Tensor t;
      t.type = element_type(name, a);
      t.shape.assign(a.shape(), a.shape() + a.ndim());
      if (t.type == ElementType::Float32) {
        const auto c = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
        t.f.assign(c.data(), c.data() + c.size());
      } else {
        const auto c = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(a);
        t.i.assign(c.data(), c.data() + c.size());
      }
      in.emplace(name, std::move(t));
    }
    std::vector<Tensor> out;
    {
      py::gil_scoped_release nogil;
      worker_.call([&] { out = model_->run(in); });
    }
    py::list res;
    for (Tensor& t : out) res.append(to_numpy(t));
    return res;
  }

 private:
  static ElementType element_type(const std::string& name, const py::array& a) {
    // Read as Python attributes: pybind11 before 2.12 reads itemsize from
    // numpy 1's struct layout, which numpy 2 changed.
    const char kind = a.dtype().attr("kind").cast<std::string>().at(0);
    const py::ssize_t size = a.dtype().attr("itemsize").cast<py::ssize_t>();
    if (kind == 'f' && size == 4) return ElementType::Float32;
    if (kind == 'i' && size == 8) return ElementType::Int64;
    if (kind == 'i' && size == 4) return ElementType::Int32;
    if (kind == 'b') return ElementType::Bool;
    if (kind == 'u' && size == 1) return ElementType::UInt8;
    if (kind == 'i' && size == 1) return ElementType::Int8;
    if (kind == 'i' && size == 2) return ElementType::Int16;
    if (kind == 'u' && size == 2) return ElementType::UInt16;
    if (kind == 'u' && size == 4) return ElementType::UInt32;
    throw py::type_error("input '" + name + "' is " + dtype_name(a) + " (vinfer takes float32, int64, int32, int16, int8, uint32, uint16, uint8 and bool)");
  }

  template <typename T>
  static py::array filled(const Tensor& t) {
    py::array_t<T> a(std::vector<py::ssize_t>(t.shape.begin(), t.shape.end()));
    T* d = a.mutable_data();
    if constexpr (std::is_same_v<T, float>) std::copy(t.f.begin(), t.f.end(), d);
    else
      for (std::size_t k = 0; k < t.i.size(); ++k) d[k] = static_cast<T>(t.i[k]);
    return a;
  }
  static py::array to_numpy(const Tensor& t) {
    switch (t.type) {
      case ElementType::Float32: return filled<float>(t);
      case ElementType::Int64: return filled<std::int64_t>(t);
      case ElementType::Int32: return filled<std::int32_t>(t);
      case ElementType::Bool: return filled<bool>(t);
      case ElementType::UInt8: return filled<std::uint8_t>(t);
      case ElementType::Int8: return filled<std::int8_t>(t);
      case ElementType::Int16: return filled<std::int16_t>(t);
      case ElementType::UInt16: return filled<std::uint16_t>(t);
      case ElementType::UInt32: return filled<std::uint32_t>(t);
    }
    throw Error(ErrorKind::Internal, "unknown element type");
  }

  Worker worker_;  // declared first: destroyed last, after the model it ran
  std::optional<Model> model_;
};

}  // namespace
}  // namespace vinfer::python

PYBIND11_MODULE(_vinfer, m) {
  using namespace vinfer;
  using namespace vinfer::python;
  m.doc() = "vinfer's C++ core; use the `vinfer` package";

  // vinfer.Error and its kinds are defined in Python (vinfer/_errors.py);
  // a vinfer::Error becomes the class for its kind, with the same message.
  // (A handle kept for the process: a static py::object would be released
  // after the interpreter is gone.)
  static const py::handle errors = py::module_::import("vinfer._errors").release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      const char* cls = "InternalError";
      switch (e.kind()) {
        case ErrorKind::InvalidArgument: cls = "InvalidArgumentError"; break;
        case ErrorKind::BadInput: cls = "BadInputError"; break;
        case ErrorKind::Unsupported: cls = "UnsupportedError"; break;
        case ErrorKind::LimitExceeded: cls = "LimitExceededError"; break;
        case ErrorKind::Io: cls = "FileError"; break;
        case ErrorKind::Internal: break;
      }
      PyErr_SetString(errors.attr(cls).ptr(), e.what());
    }
  });

  m.def("version", &version);
  m.def("presets", &preset_names);
  m.def("models", &zoo_models);
  m.def("cpu_has_bf16", &cpu_has_bf16);
  m.def("cpu_has_int8", &cpu_has_int8);
  m.def("labels", [] {
    std::vector<std::string> names;
    for (int i = 0; i < imagenet_label_count(); ++i) names.push_back(imagenet_label(i));
    return names;
  });
  m.def("decode", &decode, py::arg("src"), py::arg("mode") = "", py::arg("exif") = false,
        py::arg("max_pixels") = DecodeOptions{}.max_pixels, py::arg("gray") = "pil", py::arg("draft") = py::none());
  m.def("resize", &resize, py::arg("image"), py::arg("size"), py::arg("compat") = "pil", py::arg("filter") = py::none(),
        py::arg("antialias") = false, py::arg("align_corners") = false, py::arg("dtype") = "", py::arg("threads") = 1,
        py::arg("scale") = py::none());
  m.def("preprocess", &preprocess, py::arg("src"), py::arg("preset") = "torchvision", py::arg("size") = 224,
        py::arg("fast") = false, py::arg("threads") = 0);

  py::class_<PyModel>(m, "Model")
      .def(py::init<const std::string&, const std::string&, int, const std::string&, const std::optional<std::string>&, int, bool,
                    const std::string&, int, const std::string&, const std::string&, bool, bool>(),
           py::arg("model"), py::arg("weights") = "", py::arg("threads") = 0, py::arg("device") = "cpu",
           py::arg("preset") = py::none(), py::arg("instances") = 1, py::arg("tune") = true, py::arg("tune_cache") = "",
           py::arg("batch") = 1, py::arg("precision") = "f32", py::arg("calibration") = "", py::arg("calibrating") = false,
           py::arg("compact_weights") = false)
      .def("save_calibration", &PyModel::save_calibration, py::arg("path"))
      .def_property_readonly("input_shape", &PyModel::input_shape)
      .def_property_readonly("output_shape", &PyModel::output_shape)
      .def_property_readonly("info", &PyModel::info)
      .def_property_readonly("preset", &PyModel::preset_name)
      .def("run", &PyModel::run, py::arg("x"))
      .def("classify", &PyModel::classify, py::arg("images"), py::arg("topk") = 5, py::arg("raise_errors") = false,
           py::arg("workers") = 1)
      .def("profile", &PyModel::profile, py::arg("x") = py::none(), py::arg("runs") = 1);

  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, int, const std::string&, const std::map<std::string, Shape>&, bool>(), py::arg("model"),
           py::arg("threads") = 0, py::arg("backend") = "cpu", py::arg("input_shapes") = std::map<std::string, Shape>{},
           py::arg("optimize") = true)
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("passes", &PySession::passes)
      .def("run", &PySession::run, py::arg("feeds"));
}
