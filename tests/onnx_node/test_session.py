"""vinfer.Session (the general API) and Model.run on graphs that are not
image-in, scores-out: several outputs of several types, outputs whose
first dimension is not the input's batch, symbolic dimensions."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import vinfer


def model_bytes(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m.SerializeToString()


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


@pytest.fixture(scope="module")
def three_outputs():
    # x float [N, 3], k int32 [N, 3] -> relu(x) float, x > 0 bool, k * 2 int32
    two = helper.make_tensor("two", TensorProto.INT32, [], [2])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    return model_bytes(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Greater", ["x", "zero"], ["pos"]),
         helper.make_node("Mul", ["k", "two"], ["k2"])],
        [vi("x", TensorProto.FLOAT, ["N", 3]), vi("k", TensorProto.INT32, ["N", 3])],
        [vi("r", TensorProto.FLOAT, ["N", 3]), vi("pos", TensorProto.BOOL, ["N", 3]), vi("k2", TensorProto.INT32, ["N", 3])],
        [two, zero])


def test_several_outputs_of_several_types(three_outputs):
    s = vinfer.Session(three_outputs, threads=1)
    assert [(i.name, i.type, i.shape) for i in s.get_inputs()] == [("x", "tensor(float)", [None, 3]),
                                                                   ("k", "tensor(int32)", [None, 3])]
    assert [o.type for o in s.get_outputs()] == ["tensor(float)", "tensor(bool)", "tensor(int32)"]
    x = np.array([[-1, 0, 2], [3, -4, 5]], np.float32)
    k = np.array([[1, -2, 3], [2**30, 5, 6]], np.int32)
    r, pos, k2 = s.run(None, {"x": x, "k": k})
    assert r.dtype == np.float32 and np.array_equal(r, np.maximum(x, 0))
    assert pos.dtype == np.bool_ and np.array_equal(pos, x > 0)
    assert k2.dtype == np.int32 and np.array_equal(k2, k * np.int32(2))  # int32 wraps as int32 does
    assert any("reference evaluator" in p for p in s.passes)
    # Outputs by name, in the order asked; another batch compiles again.
    [only] = s.run(["k2"], {"x": x[:1], "k": k[:1]})
    assert only.shape == (1, 3) and np.array_equal(only, k2[:1])


def test_inputs_are_checked(three_outputs):
    s = vinfer.Session(three_outputs, threads=1)
    x = np.zeros((1, 3), np.float32)
    k = np.zeros((1, 3), np.int32)
    with pytest.raises(TypeError, match="float64"):
        s.run(None, {"x": x.astype(np.float64), "k": k})
    with pytest.raises(vinfer.InvalidArgumentError, match="int32"):
        s.run(None, {"x": x, "k": k.astype(np.int64)})
    with pytest.raises(vinfer.InvalidArgumentError, match="not given"):
        s.run(None, {"x": x})
    with pytest.raises(vinfer.InvalidArgumentError, match="no output"):
        s.run(["nope"], {"x": x, "k": k})
    with pytest.raises(vinfer.InvalidArgumentError):
        s.run(None, {"x": np.zeros((1, 4), np.float32), "k": k})


@pytest.fixture(scope="module")
def concat_rows():
    # x [2, 3] -> Concat(x, x, axis 0) [4, 3]: more rows out than the batch in
    return model_bytes([helper.make_node("Concat", ["x", "x"], ["y"], axis=0)],
                       [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [4, 3])])


def test_model_run_gives_the_graphs_output_shape(concat_rows, tmp_path):
    p = tmp_path / "concat.onnx"
    p.write_bytes(concat_rows)
    m = vinfer.Model(str(p), threads=1, tune_cache="", batch=2)
    assert m.output_shape == (4, 3)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = m.run(x)
    assert y.shape == (4, 3) and np.array_equal(y, np.concatenate([x, x]))
    with pytest.raises(vinfer.InvalidArgumentError, match="not one per item"):
        m.run(np.zeros((3, 3), np.float32))
    [z] = vinfer.Session(concat_rows, threads=1).run(None, {"x": x})
    assert np.array_equal(y, z)


def test_training_dropout_is_refused():
    ratio = helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.5])
    train = helper.make_tensor("train", TensorProto.BOOL, [], [True])
    b = model_bytes([helper.make_node("Dropout", ["x", "ratio", "train"], ["y"])], [vi("x", TensorProto.FLOAT, [1, 4])],
                    [vi("y", TensorProto.FLOAT, [1, 4])], [ratio, train], opset=13)
    with pytest.raises(vinfer.UnsupportedError, match="training mode"):
        vinfer.Session(b)


def test_unsupported_types_are_refused_by_name():
    b = model_bytes([helper.make_node("Abs", ["x"], ["y"])], [vi("x", TensorProto.DOUBLE, [2])], [vi("y", TensorProto.DOUBLE, [2])])
    with pytest.raises(vinfer.UnsupportedError, match="DOUBLE"):
        vinfer.Session(b)
