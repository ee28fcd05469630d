// Image inputs of the commands that take many: directories listed as
// sorted image files.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace vinfer::cli {

// One input: a path, or an entry that listing already found bad.
struct Item {
  std::string path, error;
};

// Whether the name ends in .jpg, .jpeg or .png (any case).
bool image_extension(const std::filesystem::path& p);

// A directory's images (.jpg, .jpeg, .png, any case), sorted; with recursive,
// its subdirectories' too. An entry named like an image that is not a file
// (a directory without recursive, a broken link) is an item that fails.
// `skipped` counts the other files.
void list_directory(const std::filesystem::path& dir, bool recursive, std::vector<Item>& out, std::size_t& skipped);

// Files as they are, directories as their images (not recursive); throws
// InvalidArgument when that leaves nothing.
std::vector<Item> expand_images(const std::vector<std::string>& inputs);

}  // namespace vinfer::cli
