// vinfer/labels.hpp: the 1000 ImageNet-1k class names, compiled in.
#pragma once
#include <string>
#include <vector>

namespace vinfer {

// Index -> name ("tench, Tinca tinca"); "class N" outside 0..999.
std::string imagenet_label(int index);
int imagenet_label_count();

}  // namespace vinfer
