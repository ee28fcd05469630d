// Names of resize modes and which (framework, filter) pairs exist.
#include <string>

#include "vinfer/error.hpp"
#include "vinfer/resize.hpp"

namespace vinfer {

Filter default_filter(Compat c) {
  switch (c) {
    case Compat::Torch: return Filter::Nearest;
    case Compat::Pil: return Filter::Bicubic;
    default: return Filter::Bilinear;
  }
}

Compat parse_compat(std::string_view n) {
  if (n == "torch" || n == "pytorch") return Compat::Torch;
  if (n == "tf" || n == "tensorflow") return Compat::Tf;
  if (n == "pil" || n == "pillow") return Compat::Pil;
  if (n == "opencv" || n == "cv2") return Compat::OpenCv;
  throw Error(ErrorKind::InvalidArgument, "unknown compat '" + std::string(n) + "' (torch, tf, pil, opencv)");
}

Filter parse_filter(std::string_view n) {
  if (n == "nearest") return Filter::Nearest;
  if (n == "nearest-exact") return Filter::NearestExact;
  if (n == "bilinear" || n == "linear") return Filter::Bilinear;
  if (n == "bicubic" || n == "cubic") return Filter::Bicubic;
  if (n == "area") return Filter::Area;
  if (n == "box") return Filter::Box;
  if (n == "hamming") return Filter::Hamming;
  if (n == "lanczos" || n == "lanczos3") return Filter::Lanczos;
  throw Error(ErrorKind::InvalidArgument, "unknown filter '" + std::string(n) +
                                              "' (nearest, nearest-exact, bilinear, bicubic, area, box, hamming, lanczos)");
}

std::string_view to_string(Compat c) {
  switch (c) {
    case Compat::Torch: return "torch";
    case Compat::Tf: return "tf";
    case Compat::Pil: return "pil";
    case Compat::OpenCv: return "opencv";
  }
  return "?";
}

std::string_view to_string(Filter f) {
  switch (f) {
    case Filter::Nearest: return "nearest";
    case Filter::NearestExact: return "nearest-exact";
    case Filter::Bilinear: return "bilinear";
    case Filter::Bicubic: return "bicubic";
    case Filter::Area: return "area";
    case Filter::Box: return "box";
    case Filter::Hamming: return "hamming";
    case Filter::Lanczos: return "lanczos";
  }
  return "?";
}

void validate(const ResizeSpec& s) {
  const Filter f = s.filter;
  bool ok = false;
  switch (s.compat) {
    case Compat::Torch:
      ok = f == Filter::Nearest || f == Filter::NearestExact || f == Filter::Bilinear || f == Filter::Bicubic ||
           f == Filter::Area;
      break;
    case Compat::Tf:
      ok = f == Filter::Nearest || f == Filter::Bilinear || f == Filter::Bicubic || f == Filter::Area ||
           f == Filter::Lanczos;
      break;
    case Compat::Pil:
      ok = f == Filter::Nearest || f == Filter::Box || f == Filter::Bilinear || f == Filter::Hamming ||
           f == Filter::Bicubic || f == Filter::Lanczos;
      break;
    case Compat::OpenCv:
      ok = f == Filter::Nearest || f == Filter::NearestExact || f == Filter::Bilinear || f == Filter::Bicubic ||
           f == Filter::Area;
      break;
  }
  const std::string name = std::string(to_string(s.compat)) + " has no '" + std::string(to_string(f)) + "' filter";
  if (!ok) throw Error(ErrorKind::InvalidArgument, "resize: " + name);
  if (s.antialias && !((s.compat == Compat::Torch || s.compat == Compat::Tf) &&
                       (f == Filter::Bilinear || f == Filter::Bicubic || f == Filter::Lanczos)))
    throw Error(ErrorKind::InvalidArgument,
                "resize: antialias applies to torch/tf bilinear and bicubic only (Pillow always antialiases)");
  if (s.align_corners && !(s.compat == Compat::Torch && (f == Filter::Bilinear || f == Filter::Bicubic)))
    throw Error(ErrorKind::InvalidArgument, "resize: align_corners applies to torch bilinear and bicubic only");
  if (s.align_corners && s.antialias)
    throw Error(ErrorKind::InvalidArgument, "resize: align_corners with antialias is not supported");
}

}  // namespace vinfer
