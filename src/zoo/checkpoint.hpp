// Internal: reading weights saved by PyTorch (torch.save: the zip format and
// the legacy pre-1.6 format) and safetensors files, without Python.
//
// torch.save pickles its object graph. vinfer reads the subset of pickle that
// state dicts use, with an allowlist of globals (OrderedDict, the tensor
// rebuild functions, the storage types), like torch.load(weights_only=True):
// any other global (os.system, builtins.eval, ...) is refused, never executed.
#pragma once
#include <map>
#include <set>
#include <string>

#include "vinfer/graph.hpp"

namespace vinfer::zoo {

using StateDict = std::map<std::string, TensorData>;

// By content: zip (torch >= 1.6), legacy torch pickle, or safetensors. Float
// tensors of any precision become float32, integer ones int64. A checkpoint
// dict that holds the weights under "state_dict" or "model" is unwrapped;
// a "module." prefix (DataParallel) is dropped. Throws Error(BadInput) naming the file.
// The 2-D tensors named in `transposed` come back transposed ([out, in]
// stored, [in, out] returned), read so from the file: no second copy.
StateDict read_checkpoint(const std::string& path, const std::set<std::string>& transposed = {});
StateDict read_checkpoint_memory(const std::uint8_t* data, std::size_t size, const std::string& name,
                                 const std::set<std::string>& transposed = {});

}  // namespace vinfer::zoo
