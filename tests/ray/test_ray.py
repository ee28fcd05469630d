"""vinfer.ray on a local Ray cluster (this machine's cores, loopback only):
the Parquet that a map_batches job writes holds, row by row, what
`vinfer classify` says about the same files, bad ones included."""
import json
import os
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
CLI = os.environ.get("VINFER_CLI", os.path.join(ROOT, "build", "vinfer"))

try:
    import ray
except ImportError:  # where Ray has no wheel for the platform
    pytest.skip("Ray is not installed in this environment (scripts/setup puts it in .venv-test)", allow_module_level=True)
import pyarrow.parquet as pq

import vinfer.ray


@pytest.fixture(scope="module")
def cluster():
    if os.environ.get("VINFER_RAY_LOOPBACK_ONLY") != "1":
        pytest.skip("Ray's servers bind every interface: this test runs through tests/ray/run.sh, in a network "
                    "namespace of its own (unshare -rn), which this machine does not allow")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=200 << 20, log_to_driver=False)
    yield
    ray.shutdown()


def test_parquet_equals_the_command_line(cluster, tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    photos = ["squirrel_cls.jpg", "chelsea.png", "retina.jpg"]
    for i in range(36):
        p = photos[i % 3]
        shutil.copy(os.path.join(DATA, "images", p), images / f"{i:02d}_{p}")
    shutil.copy(os.path.join(DATA, "bad", "truncated.jpg"), images / "36_truncated.jpg")

    ds = ray.data.read_binary_files(str(images), include_paths=True)
    out = ds.map_batches(vinfer.ray.Classifier, fn_constructor_kwargs={"model": "resnet18", "threads": 1, "topk": 3, "batch": 2},
                         batch_size=8, compute=ray.data.ActorPoolStrategy(size=2),
                         num_cpus=0.5)  # (a CPU left for the reads)
    out.write_parquet(str(tmp_path / "classes"))
    rows = pq.read_table(tmp_path / "classes").to_pylist()
    assert len(rows) == 37

    cli = subprocess.run([CLI, "classify", "resnet18", str(images), "--json", "--topk", "3", "--threads", "1"],
                         capture_output=True, text=True)
    assert cli.returncode == 2, cli.stderr  # the truncated file
    want = {os.path.basename(r["image"]): r for r in map(json.loads, cli.stdout.splitlines())}
    assert len(want) == 37
    for row in rows:
        w = want[os.path.basename(row["path"])]
        if "error" in w:
            assert row["error"] == w["error"] and "truncated" in row["error"] and row["topk_index"] == []
            continue
        assert row["error"] is None
        assert row["topk_index"] == [t["index"] for t in w["topk"]], row["path"]
        assert row["topk_label"] == [t["label"] for t in w["topk"]]
        assert all(abs(a - t["prob"]) < 1e-5 for a, t in zip(row["topk_prob"], w["topk"])), row["path"]
