"""vinfer as an ONNX backend (onnx.backend.base.Backend), as onnxruntime.backend is:

    import vinfer.backend
    rep = vinfer.backend.prepare(model_proto)      # or a path, or the bytes
    outputs = rep.run([x])                          # or {"x": x}
    outputs = vinfer.backend.run_model(model_proto, [x])

so that ONNX's own backend tests (onnx.backend.test.BackendTest) run on
vinfer. Needs the onnx package (not a dependency of vinfer itself).
"""
from onnx.backend.base import Backend, BackendRep

from .session import Session


class VinferRep(BackendRep):
    """A prepared model: run(inputs) with a list (the graph's order) or a dict.

    Where vinfer needs an input as a constant (axes, a target shape, clip
    bounds: it fixes every shape at load), the model is compiled at each
    run with every input but the first bound to the values given (exact,
    and slower)."""

    def __init__(self, model, session, refusal, kwargs):
        self.model, self.session, self.refusal, self.kwargs = model, session, refusal, kwargs

    def run(self, inputs, **kwargs):
        names = [i.name for i in self.model.graph.input if i.name not in {t.name for t in self.model.graph.initializer}]
        if isinstance(inputs, dict):
            feeds = dict(inputs)
        else:
            if not isinstance(inputs, (list, tuple)):
                inputs = [inputs]
            if len(inputs) > len(names):
                from ._errors import InvalidArgumentError
                raise InvalidArgumentError(f"{len(inputs)} inputs given, the model takes {len(names)}")
            feeds = dict(zip(names, inputs))
        if self.session is not None:
            return self.session.run(None, feeds)
        from ._errors import Error
        first = names[0]
        try:
            bound = Session(_bind(self.model, {k: v for k, v in feeds.items() if k != first}).SerializeToString(), **self.kwargs)
        except (Error, ValueError, TypeError):
            raise self.refusal from None  # (binding did not help: what vinfer refused first)
        return bound.run(None, {first: feeds[first]} if first in feeds else {})


def _bind(model, values):
    """The model with these inputs turned into initializers holding the values."""
    import numpy as np
    from onnx import numpy_helper
    m = type(model)()
    m.CopyFrom(model)
    # (Left among the inputs too: an initializer that is also an input is
    # what IR versions before 4 require, and vinfer reads it as a constant.)
    for name, v in values.items():
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(v), name))
    return m


class VinferBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device="CPU", **kwargs):
        return cls.supports_device(device)

    @classmethod
    def supports_device(cls, device):
        return device == "CPU"

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        if not cls.supports_device(device):
            from ._errors import UnsupportedError
            raise UnsupportedError(f"device {device}: vinfer's ONNX backend runs on the CPU")
        import onnx
        from ._errors import UnsupportedError
        if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
            model = onnx.load_model_from_string(model) if isinstance(model, bytes) else onnx.load(model)
        try:
            return VinferRep(model, Session(model.SerializeToString(), **kwargs), None, kwargs)
        except UnsupportedError as e:
            inputs = [i for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
            if len(inputs) < 2:
                raise
            return VinferRep(model, None, e, kwargs)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        raise NotImplementedError("vinfer runs whole models (prepare / run_model), not single nodes")


prepare = VinferBackend.prepare
run_model = VinferBackend.run_model
run_node = VinferBackend.run_node
supports_device = VinferBackend.supports_device
is_compatible = VinferBackend.is_compatible
