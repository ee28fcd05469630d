// vinfer/suggest.hpp: "did you mean ...?" for names a user typed.
//
//   vinfer::closest_match("densenet12", vinfer::zoo_models())  // "densenet121"
#pragma once
#include <string>
#include <vector>

namespace vinfer {

// The choice nearest to `word` by edit distance (case-insensitive), if it is
// close enough to be a likely typo (at most a third of the word's length,
// and at least 1); "" otherwise.
std::string closest_match(const std::string& word, const std::vector<std::string>& choices);

}  // namespace vinfer
