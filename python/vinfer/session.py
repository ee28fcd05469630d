"""vinfer.Session: any ONNX graph, every input and output by name, in ONNX Runtime's convention.

    sess = vinfer.Session("model.onnx")
    [y] = sess.run(None, {"x": x})          # None: every output, in the graph's order
    [i.name for i in sess.get_inputs()]

Inputs are NumPy arrays of float32 or of an integer type that int64 holds
(int64, int32, int16, int8, uint32, uint16, uint8, bool), each
of its input's declared type; outputs come back in theirs. An input with
symbolic dimensions takes any size for them: the graph is compiled for the
shapes it is given (the last few kept). A graph of one float32 input to
float32 outputs runs on vinfer's CPU backend; any other on the reference
evaluator (exact, slow: `passes` says so). What vinfer does not run is
refused when the session is made, with an UnsupportedError naming it.
"""
from collections import OrderedDict as _OrderedDict
from typing import NamedTuple as _NamedTuple

from . import _vinfer


class NodeArg(_NamedTuple):
    """An input or output: its name, its type ("tensor(float)", ...) and
    shape (None where a dimension is symbolic), as ONNX Runtime's NodeArg."""
    name: str
    type: str
    shape: list


_ONNX_TYPE = {"float32": "tensor(float)", "int64": "tensor(int64)", "int32": "tensor(int32)", "bool": "tensor(bool)",
              "uint8": "tensor(uint8)", "int8": "tensor(int8)", "int16": "tensor(int16)", "uint16": "tensor(uint16)",
              "uint32": "tensor(uint32)"}


class Session:
    """A loaded ONNX model (a path or its bytes), run by name.

    threads: 0 one per CPU this process may use; backend "cpu" (vinfer's kernels where the graph
    is one float32 input to float32 outputs) or "reference" (every node on
    the reference evaluator); optimize=False skips the fusion passes.
    """

    _KEEP = 4  # compiled shapes kept

    def __init__(self, model, *, threads=0, backend="cpu", optimize=True):
        self._src = model
        self._opts = dict(threads=threads, backend=backend, optimize=optimize)
        first = _vinfer.Session(model, input_shapes={}, **self._opts)
        self._inputs = [NodeArg(n, _ONNX_TYPE[t], [d if d >= 0 else None for d in file_shape])
                        for n, t, _, file_shape in first.inputs]
        self._outputs = [NodeArg(n, _ONNX_TYPE[t], list(shape)) for n, t, shape, _ in first.outputs]
        self._compiled = _OrderedDict({self._key({n: s for n, _, s, _ in first.inputs}): first})

    @staticmethod
    def _key(shapes):
        return tuple(sorted((n, tuple(s)) for n, s in shapes.items()))

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        """The outputs; their shapes as compiled for the first shapes seen."""
        return list(self._outputs)

    @property
    def passes(self):
        """What loading did (the most recently compiled shapes)."""
        return next(reversed(self._compiled.values())).passes

    def run(self, output_names, input_feed):
        """The outputs named (None: all, in order) as a list of arrays."""
        import numpy as np
        feeds = {k: np.asarray(v) for k, v in input_feed.items()}
        shapes = {i.name: list(feeds[i.name].shape) for i in self._inputs if i.name in feeds}
        key = self._key(shapes)
        sess = self._compiled.get(key)
        if sess is None:
            sess = _vinfer.Session(self._src, input_shapes=shapes, **self._opts)
            self._compiled[key] = sess
            if len(self._compiled) > self._KEEP:
                self._compiled.popitem(last=False)
        else:
            self._compiled.move_to_end(key)
        outs = sess.run(feeds)
        if output_names is None:
            return outs
        names = [o.name for o in self._outputs]
        picked = []
        for n in output_names:
            if n not in names:
                raise _errors.InvalidArgumentError(f"the network has no output '{n}' (its outputs: {', '.join(names)})")
            picked.append(outs[names.index(n)])
        return picked


from . import _errors  # noqa: E402
