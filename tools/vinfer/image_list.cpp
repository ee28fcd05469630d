#include "image_list.hpp"

#include <algorithm>
#include <cctype>
#include <system_error>

#include "vinfer/error.hpp"

namespace vinfer::cli {

namespace fs = std::filesystem;

bool image_extension(const fs::path& p) {
  std::string e = p.extension().string();
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return e == ".jpg" || e == ".jpeg" || e == ".png";
}

void list_directory(const fs::path& dir, bool recursive, std::vector<Item>& out, std::size_t& skipped) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(*it);
  if (ec) {
    out.push_back({dir.string(), dir.string() + ": cannot list: " + ec.message()});
    return;
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.path() < b.path(); });
  for (const fs::directory_entry& e : entries) {
    std::error_code s;
    if (recursive && e.is_directory(s)) {
      list_directory(e.path(), true, out, skipped);
    } else if (!image_extension(e.path())) {
      skipped += e.is_regular_file(s) ? 1 : 0;
    } else if (e.is_regular_file(s)) {
      out.push_back({e.path().string(), {}});
    } else {
      out.push_back({e.path().string(), e.path().string() + (e.is_directory(s) ? ": is a directory (--recursive descends into directories)"
                                                                               : ": not a regular file")});
    }
  }
}

std::vector<Item> expand_images(const std::vector<std::string>& inputs) {
  std::vector<Item> items;
  std::size_t skipped = 0;
  for (const std::string& p : inputs) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) list_directory(p, false, items, skipped);
    else items.push_back({p, {}});
  }
  if (items.empty()) throw Error(ErrorKind::InvalidArgument, "no images (the directories hold no .jpg, .jpeg or .png)");
  return items;
}

}  // namespace vinfer::cli
