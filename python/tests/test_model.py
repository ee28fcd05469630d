"""vinfer.Model: logits against PyTorch's (the exports the C++ parity test
uses, in $VINFER_MODEL_DIR) and against the command-line tool, classify on
good and bad images, errors, and threads sharing one Model."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import vinfer
from conftest import ROOT, data

MODEL_DIR = os.environ.get("VINFER_MODEL_DIR", os.path.join(ROOT, "build", "models"))
CLI = os.environ.get("VINFER_CLI", os.path.join(ROOT, "build", "vinfer"))
PHOTOS = [data("images/squirrel_cls.jpg"), data("images/chelsea.png"), data("images/retina.jpg")]


def export(name):
    path = os.path.join(MODEL_DIR, name)
    if not os.path.exists(path):
        pytest.fail(f"{path} is missing: the test suite exports it first (tests/models/export_models.py)")
    return path


@pytest.mark.parametrize("name", ["densenet121", "resnet18"])
def test_run_gives_pytorchs_logits(name):
    m = vinfer.Model(export(name + ".onnx"), threads=2, tune_cache="")
    x = np.load(export(name + ".input.npy"))
    want = np.load(export(name + ".torch.npy"))
    y = m.run(x)
    assert y.shape == want.shape and y.dtype == np.float32
    assert np.abs(y - want).max() <= 2e-5 * np.abs(want).max()
    # N inputs stacked: each row as alone.
    y3 = m.run(np.concatenate([x, np.zeros_like(x), x]))
    assert y3.shape == (3,) + want.shape[1:]
    np.testing.assert_array_equal(y3[0], y[0])
    np.testing.assert_array_equal(y3[2], y[0])


def test_classify_gives_the_command_lines_answer(tmp_path, densenet):
    out = tmp_path / "logits.npy"
    subprocess.run([CLI, "classify", "densenet121", PHOTOS[0], "--threads", "1", "--tune-cache", "", "--save-logits", str(out)],
                   check=True, capture_output=True)
    cli = np.load(out)[0]
    x = vinfer.preprocess(PHOTOS[0])
    y = densenet.run(x)[0]
    assert np.abs(y - cli).max() <= 2e-5 * np.abs(cli).max()
    r = densenet.classify(PHOTOS[0], topk=3)
    assert r["image"] == PHOTOS[0]
    assert [t["index"] for t in r["topk"]] == list(np.argsort(-cli)[:3])
    p = np.exp(cli - cli.max())
    p /= p.sum()
    assert abs(r["topk"][0]["prob"] - p[r["topk"][0]["index"]]) < 1e-6
    assert r["topk"][0]["label"] == vinfer.labels()[r["topk"][0]["index"]]
    assert len(vinfer.labels()) == 1000 and vinfer.labels()[0] == "tench, Tinca tinca"


def test_classify_a_list_with_bad_files(tmp_path, densenet):
    text = tmp_path / "notes.jpg"
    text.write_text("not an image")
    blob = open(PHOTOS[1], "rb").read()
    arr = vinfer.decode(PHOTOS[2], "RGB")
    items = [PHOTOS[0], data("bad/truncated.jpg"), str(text), blob, arr, data("bad/missing.jpg")]
    rs = densenet.classify(items, topk=2)
    assert [("error" in r) for r in rs] == [False, True, True, False, False, True]
    assert "truncated.jpg" in rs[1]["error"] and "notes.jpg" in rs[2]["error"] and "cannot open" in rs[5]["error"]
    assert rs[3]["image"] == "<image 3>" and len(rs[3]["topk"]) == 2
    assert rs[4]["topk"] == densenet.classify(PHOTOS[2], topk=2)["topk"]
    with pytest.raises(vinfer.BadInputError, match="truncated.jpg"):
        densenet.classify(items, raise_errors=True)


def test_info_and_profile(densenet):
    i = densenet.info
    assert i["preset"] == "torchvision" and i["random_weights"] and i["nodes_executed"] > 100
    assert densenet.input_shape == (1, 3, 224, 224) and densenet.output_shape == (1, 1000)
    layers = densenet.profile()
    assert len(layers) > 100 and all(l["ms"] >= 0 for l in layers)
    assert any(l["name"].startswith("Conv") and l["gflop"] > 0 for l in layers)


def test_compact_weights_halve_the_positions_split():
    x = np.linspace(-1, 1, 3 * 224 * 224, dtype=np.float32).reshape(1, 3, 224, 224)
    whole = vinfer.Model("resnet18", threads=2, tune=False)
    compact = vinfer.Model("resnet18", threads=2, tune=False, compact_weights=True)
    a, b = whole.run(x), compact.run(x)
    assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max()
    pw, pc = whole.profile(x), compact.profile(x)
    assert [l["name"] for l in pw] == [l["name"] for l in pc]
    halved = [(w, c) for w, c in zip(pw, pc) if "_pos_half" in c["impl"]]
    assert all("_half" not in l["impl"] for l in pw)
    assert all(2 * c["weight_bytes"] == w["weight_bytes"] for w, c in halved)
    if any("wino_f43_pos" in l["impl"] for l in pw):
        assert halved


@pytest.mark.parametrize("call, exc, words", [
    (lambda m: m.run(np.zeros((1, 3, 224, 224), np.float64)), TypeError, "float64"),
    (lambda m: m.run(np.zeros((1, 3, 200, 224), np.float32)), ValueError, "not the model's"),
    (lambda m: m.run(np.zeros((3, 224, 224), np.float32)), ValueError, "not the model's"),
    (lambda m: m.classify(PHOTOS[0], topk=0), ValueError, "topk"),
    (lambda m: m.classify(np.zeros((8, 8, 4), np.uint8), raise_errors=True), ValueError, "HxWx3"),
])
def test_bad_arguments(densenet, call, exc, words):
    with pytest.raises(exc, match=words):
        call(densenet)


def test_bad_models_are_refused(tmp_path):
    with pytest.raises(vinfer.InvalidArgumentError, match="did you mean densenet121"):
        vinfer.Model("densenet12")
    with pytest.raises(vinfer.FileError, match="cannot open"):
        vinfer.Model(str(tmp_path / "none.onnx"))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x08\x07garbage" * 10)
    with pytest.raises(vinfer.BadInputError, match="junk.onnx"):
        vinfer.Model(junk)
    with pytest.raises(ValueError, match="device"):
        vinfer.Model("resnet18", device="tpu")


def test_a_malicious_pickle_is_refused_and_nothing_runs():
    marker = "/tmp/vinfer_pwned"
    if os.path.exists(marker):
        os.remove(marker)
    with pytest.raises(vinfer.BadInputError, match="refused"):
        vinfer.Model("densenet121", export("hostile.pth"))
    assert not os.path.exists(marker)


def test_threads_sharing_a_model_get_their_own_answers():
    """Four Python threads classify through one Model with two compiled
    copies: every answer equals the one-at-a-time answer."""
    m = vinfer.Model("resnet18", threads=1, instances=2, tune_cache="")
    want = {p: m.classify(p, topk=3) for p in PHOTOS}
    got, errors = [], []

    def work(k):
        try:
            for i in range(6):
                p = PHOTOS[(k + i) % len(PHOTOS)]
                got.append((p, m.classify(p, topk=3)))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert len(got) == 24
    for p, r in got:
        assert r == want[p]


def test_batches_and_loader_threads(densenet):
    """A model compiled for batches of 2 runs any number of inputs as one at a
    time does; classify with two loader threads keeps the list's order."""
    m = vinfer.Model("densenet121", threads=2, tune_cache="", batch=2)
    assert m.input_shape == (2, 3, 224, 224) and m.output_shape == (2, 1000)
    x = np.concatenate([vinfer.preprocess(p) for p in PHOTOS])
    y = m.run(x)
    assert y.shape == (3, 1000)
    for k in range(3):
        want = densenet.run(x[k:k + 1])[0]
        assert np.abs(y[k] - want).max() <= 2e-5 * np.abs(want).max()
    items = PHOTOS * 3 + [data("bad/truncated.jpg")]
    got = m.classify(items, topk=3, workers=2)
    assert [r["image"] for r in got] == items and "error" in got[-1]
    for r, p in zip(got, items):
        if "topk" in r:
            want = densenet.classify(p, topk=3)["topk"]
            assert [t["index"] for t in r["topk"]] == [t["index"] for t in want]
            assert all(abs(a["prob"] - b["prob"]) < 1e-6 for a, b in zip(r["topk"], want))
    with pytest.raises(ValueError, match="not the model's"):
        m.run(np.zeros((2, 3, 224, 225), np.float32))
    with pytest.raises(ValueError, match="workers"):
        m.classify(PHOTOS, workers=0)


def test_bf16_precision():
    x = np.load(export("resnet18.input.npy"))
    if not vinfer.cpu_has_bf16():
        with pytest.raises(vinfer.Error, match="bfloat16 dot products"):
            vinfer.Model(export("resnet18.onnx"), threads=2, tune_cache="", precision="bf16")
        return
    want = vinfer.Model(export("resnet18.onnx"), threads=2, tune_cache="").run(x)
    y = vinfer.Model(export("resnet18.onnx"), threads=2, tune_cache="", precision="bf16").run(x)
    rel = np.abs(y - want).max() / np.abs(want).max()
    assert 0 < rel <= 2e-2


def test_int8_calibrated_in_python(tmp_path):
    onnx = export("resnet18.onnx")
    x = np.load(export("resnet18.input.npy"))
    photos = PHOTOS
    with pytest.raises(ValueError, match="calibration"):
        vinfer.Model(onnx, threads=2, tune_cache="", precision="int8")
    # Calibrating measures float32 ranges: on any CPU.
    m = vinfer.Model(onnx, threads=2, tune_cache="", calibrating=True)
    with pytest.raises(vinfer.Error, match="run it on some images"):
        m.save_calibration(tmp_path / "early.calib")
    m.classify(photos)
    m.save_calibration(tmp_path / "r18.calib")
    assert json.loads((tmp_path / "r18.calib").read_text())["images"] == len(photos)
    if not vinfer.cpu_has_int8():
        with pytest.raises(vinfer.Error, match="int8 dot products"):
            vinfer.Model(onnx, threads=2, tune_cache="", precision="int8", calibration=tmp_path / "r18.calib")
        return
    want = vinfer.Model(onnx, threads=2, tune_cache="").run(x)
    q = vinfer.Model(onnx, threads=2, tune_cache="", precision="int8", calibration=tmp_path / "r18.calib")
    y = q.run(x)
    rel = np.abs(y - want).max() / np.abs(want).max()
    assert 0 < rel <= 5e-2
    assert any("precision int8" in p for p in q.info["passes"])
    (tmp_path / "bad.calib").write_text("{")
    with pytest.raises(vinfer.Error, match="not JSON"):
        vinfer.Model(onnx, threads=2, tune_cache="", precision="int8", calibration=tmp_path / "bad.calib")


def test_unknown_precision_is_a_value_error():
    with pytest.raises(ValueError, match="precision"):
        vinfer.Model("resnet18", precision="int4")


def runnable_threads(exclude):
    """Threads of this process in state R (running or runnable), but `exclude`."""
    n = 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == exclude:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                n += f.read().rsplit(")", 1)[1].split()[0] == "R"
        except OSError:
            pass  # (a thread that ended)
    return n


def test_no_thread_spins_while_a_model_is_idle():
    """Between calls nothing of vinfer's runs: its pool and OpenMP's workers sleep."""
    import time
    m = vinfer.Model("resnet18", threads=2, tune_cache="")
    x = np.zeros((1, 3, 224, 224), np.float32)
    m.run(x)
    m.classify(os.path.join(ROOT, "tests", "data", "images", "chelsea.png"))
    time.sleep(0.5)
    me = threading.get_native_id()
    busy = []
    for _ in range(20):
        busy.append(runnable_threads(me))
        time.sleep(0.05)
    assert sum(busy) == 0, busy
