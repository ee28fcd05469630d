"""vinfer serve over HTTP: the Open Inference Protocol with tritonclient (the
real client) and with plain requests; results equal `vinfer classify`'s;
malformed traffic gets its 4xx and the next good request is answered; a short
bounded load; SIGTERM finishes in-flight requests and exits 0.

Runs with VINFER_CLI (the vinfer executable; vinfer-serve beside it). The
network is the built-in DenseNet121 with seeded random weights: labels are
meaningless, the comparison is exact all the same.
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib

import numpy as np
import pytest
import tritonclient.http as httpclient

CLI = os.environ.get("VINFER_CLI", "build/vinfer")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGES = [os.path.join(ROOT, "tests", "data", "images", n) for n in ("squirrel_cls.jpg", "chelsea.png", "retina.jpg")]
MODEL = "densenet121"


def start(*extra):
    p = subprocess.Popen([CLI, "serve", "--model", f"dn={MODEL}", "--port", "0", "--tune-cache", "", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not m:
        p.kill()
        raise AssertionError(f"no listening line: {line!r} {p.stderr.read()}")
    return p, int(m.group(1))


def stop(p):
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    return p.returncode, out, err


@pytest.fixture(scope="module")
def server():
    p, port = start("--max-body-mb", "4", "--max-pixels", "40000000")
    yield port
    rc, out, err = stop(p)
    assert rc == 0, err


def post(port, body, headers=None, path="/v2/models/dn/infer"):
    # (urllib's default type, like curl's, is form-urlencoded: taken as any other body)
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def classify(path):
    out = subprocess.run([CLI, "classify", MODEL, path, "--json", "--topk", "5"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[0])["topk"]


def binary_images(paths):
    data = b"".join(struct.pack("<I", len(b)) + b for b in (open(p, "rb").read() for p in paths))
    header = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [len(paths)],
                                     "parameters": {"binary_data_size": len(data)}}]}).encode()
    return header + data, {"Inference-Header-Content-Length": str(len(header))}


def test_tritonclient_matches_classify(server):
    c = httpclient.InferenceServerClient(url=f"127.0.0.1:{server}")
    assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("dn")
    meta = c.get_model_metadata("dn")
    assert [i["name"] for i in meta["inputs"]] == ["image", "input"]
    assert meta["outputs"][0] == {"name": "logits", "datatype": "FP32", "shape": [-1, 1000]}
    assert "binary_tensor_data" in c.get_server_metadata()["extensions"]
    inp = httpclient.InferInput("image", [len(IMAGES)], "BYTES")
    inp.set_data_from_numpy(np.array([open(p, "rb").read() for p in IMAGES], dtype=np.object_), binary_data=True)
    outs = [httpclient.InferRequestedOutput(n, binary_data=True) for n in ("topk_indices", "topk_probabilities", "logits")]
    r = c.infer("dn", [inp], outputs=outs)
    idx, prob = r.as_numpy("topk_indices"), r.as_numpy("topk_probabilities")
    assert idx.shape == (3, 5) and r.as_numpy("logits").shape == (3, 1000)
    for i, path in enumerate(IMAGES):
        want = classify(path)
        assert list(idx[i]) == [t["index"] for t in want], path
        np.testing.assert_allclose(prob[i], [t["prob"] for t in want], rtol=1e-5)


def test_fp32_input_equals_image_input(server):
    with tempfile.TemporaryDirectory() as d:
        npy = os.path.join(d, "x.npy")
        subprocess.run([CLI, "preprocess", IMAGES[0], npy, "--preset", "torchvision"], check=True, capture_output=True)
        x = np.load(npy).astype(np.float32).reshape(1, 3, 224, 224)
    c = httpclient.InferenceServerClient(url=f"127.0.0.1:{server}")
    a = httpclient.InferInput("input", list(x.shape), "FP32")
    a.set_data_from_numpy(x, binary_data=False)  # JSON numbers
    by_tensor = c.infer("dn", [a], outputs=[httpclient.InferRequestedOutput("logits")]).as_numpy("logits")
    b = httpclient.InferInput("image", [1], "BYTES")
    b.set_data_from_numpy(np.array([open(IMAGES[0], "rb").read()], dtype=np.object_))
    by_image = c.infer("dn", [b], outputs=[httpclient.InferRequestedOutput("logits")]).as_numpy("logits")
    np.testing.assert_allclose(by_tensor, by_image, rtol=1e-5, atol=1e-6)


def big_png(w, h):
    raw = zlib.compress(b"".join(b"\x00" + bytes(w) for _ in range(h)), 1)
    chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def test_malformed_requests_get_4xx(server):
    good, headers = binary_images(IMAGES[:1])
    cases = [
        (b"{not json", {}, 400, "not JSON"),
        (good[:-10], headers, 400, "binary"),
        (good + b"xx", headers, 400, "no input claims"),
        (good, {"Inference-Header-Content-Length": "abc"}, 400, "not a size"),
        (json.dumps({"inputs": [{"name": "image", "datatype": "INT8", "shape": [1], "data": [1]}]}).encode(), {}, 400, "INT8"),
        (json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 3], "data": [1, 2, 3]}]}).encode(), {},
         400, "the model takes [-1,3,224,224]"),
        (json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": ["not an image"]}]}).encode(), {},
         400, "image 0"),
        (json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": ["x"]}],
                     "outputs": [{"name": "nope"}]}).encode(), {}, 400, "no output named"),
        (b"x" * (5 << 20), {}, 413, "limit"),
    ]
    for body, hdrs, status, needle in cases:
        code, text, _ = post(server, body, hdrs)
        assert code == status, (needle, code, text[:200])
        assert needle in json.loads(text)["error"], text[:200]
    # 90 MP: refused from its header (--max-pixels), before any pixel is decoded.
    png = big_png(10000, 9000)
    code, text, _ = post(server, *binary_images_bytes([png]))
    assert code == 413 and "pixels" in json.loads(text)["error"], text
    assert post(server, b"{}", path="/v2/models/other/infer")[0] == 404
    assert post(server, good, headers, path="/v2/models/dn/versions/2/infer")[0] == 404
    code, text, _ = post(server, good, headers, path="/v2/models/dn/versions/1/infer")
    assert code == 200, text


def binary_images_bytes(blobs):
    data = b"".join(struct.pack("<I", len(b)) + b for b in blobs)
    header = json.dumps({"inputs": [{"name": "image", "datatype": "BYTES", "shape": [len(blobs)],
                                     "parameters": {"binary_data_size": len(data)}}]}).encode()
    return header + data, {"Inference-Header-Content-Length": str(len(header))}


def test_dropped_and_slow_connections_do_not_take_it_down(server):
    slow = socket.create_connection(("127.0.0.1", server))
    slow.sendall(b"POST /v2/models/dn/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # and then nothing
    for _ in range(1000):
        s = socket.create_connection(("127.0.0.1", server))
        s.close()
    body, headers = binary_images(IMAGES[:1])
    code, text, _ = post(server, body, headers)
    assert code == 200, text
    slow.close()


def test_bounded_load_has_no_errors(server):
    body, headers = binary_images(IMAGES[:1])
    stop_at, errors, done = time.time() + 3, [], [0]

    def client():
        while time.time() < stop_at:
            code, text, _ = post(server, body, headers)
            if code != 200:
                errors.append((code, text[:200]))
            done[0] += 1

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert done[0] >= 8
    with urllib.request.urlopen(f"http://127.0.0.1:{server}/metrics", timeout=10) as r:
        metrics = r.read().decode()
    assert re.search(r'vinfer_requests_total\{model="dn",code="200"\} \d+', metrics)
    for stage in ("queue", "preprocess", "inference", "request"):
        assert f'vinfer_stage_ms_count{{model="dn",stage="{stage}"}}' in metrics


def test_sigterm_finishes_in_flight_requests():
    p, port = start()
    body, headers = binary_images(IMAGES)
    result = {}
    t = threading.Thread(target=lambda: result.update(r=post(port, body, headers)))
    t.start()
    time.sleep(0.05)
    rc, out, err = stop(p)
    t.join(timeout=60)
    assert rc == 0, err
    assert "stopped" in out
    assert result["r"][0] == 200, result


def test_bad_arguments_are_clear():
    r = subprocess.run([CLI, "serve", "--model", "nonsense"], capture_output=True, text=True)
    assert r.returncode == 2 and "NAME=MODEL" in r.stderr
    r = subprocess.run([CLI, "serve", "--model", "a=/nonexistent.onnx", "--port", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "/nonexistent.onnx" in r.stderr
    r = subprocess.run([CLI, "serve", "--model", "a=densenet121", "--batch-delay-ms", "5"], capture_output=True, text=True)
    assert r.returncode == 2 and "--max-batch" in r.stderr


def test_dynamic_batching_groups_concurrent_requests():
    """--max-batch 4 --batch-delay-ms: eight concurrent one-image requests and
    one of six images run in batches of up to four (fewer passes than
    images), each answer the same as `vinfer classify`'s."""
    p, port = start("--max-batch", "4", "--batch-delay-ms", "200", "--instances", "1", "--threads", "2")
    try:
        want = {path: classify(path) for path in IMAGES}
        c = httpclient.InferenceServerClient(url=f"127.0.0.1:{port}", concurrency=1)

        def ask(paths):
            inp = httpclient.InferInput("image", [len(paths)], "BYTES")
            inp.set_data_from_numpy(np.array([open(q, "rb").read() for q in paths], dtype=np.object_), binary_data=True)
            r = httpclient.InferenceServerClient(url=f"127.0.0.1:{port}").infer(
                "dn", [inp], outputs=[httpclient.InferRequestedOutput("topk_indices"), httpclient.InferRequestedOutput("topk_probabilities")])
            return paths, r.as_numpy("topk_indices"), r.as_numpy("topk_probabilities")

        jobs = [[IMAGES[i % 3]] for i in range(8)] + [[IMAGES[i % 3] for i in range(6)]]
        results = []
        threads = [threading.Thread(target=lambda j=j: results.append(ask(j))) for j in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert len(results) == len(jobs)
        for paths, idx, prob in results:
            for k, path in enumerate(paths):
                assert list(idx[k]) == [t["index"] for t in want[path]], path
                np.testing.assert_allclose(prob[k], [t["prob"] for t in want[path]], rtol=1e-5)
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30).read().decode()
        passes = int(re.search(r'vinfer_batches_total\{model="dn"\} (\d+)', metrics).group(1))
        images = int(re.search(r'vinfer_batched_images_total\{model="dn"\} (\d+)', metrics).group(1))
        assert images == 14 and passes < images, (passes, images)
        assert c.is_server_live()
    finally:
        rc, out, err = stop(p)
    assert rc == 0, err
