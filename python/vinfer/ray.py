"""vinfer on Ray Data: classify a dataset of image files on every machine of a
Ray cluster, decoding and preprocessing exactly as vinfer does (the files'
bytes travel, not decoded pixels).

    import ray
    import vinfer.ray

    ds = ray.data.read_binary_files("/data/images", include_paths=True)
    out = ds.map_batches(vinfer.ray.Classifier, fn_constructor_kwargs={"model": "densenet121", "weights": "w.pth"},
                         batch_size=64, compute=ray.data.ActorPoolStrategy(size=4), num_cpus=2)
    out.write_parquet("/data/classes")

Each actor loads the network once and classifies the batches it is given.
ray.init() with no address runs on this machine; with a cluster's address
(ray.init("ray://head:10001"), or RAY_ADDRESS) the same code runs on all of
its machines, each of which needs vinfer installed and the model file at the
same path (or a built-in name).
"""
import pyarrow as pa

import vinfer


class Classifier:
    """A callable class for ray.data.Dataset.map_batches over the rows of
    ray.data.read_binary_files (columns "bytes" and, with include_paths=True,
    "path").

    model, weights, preset, threads, batch, precision, calibration: as vinfer.Model's. topk: classes
    per image. workers: threads that decode and preprocess while the network
    runs. Returns an Arrow table per batch (the same schema for every
    batch): path (or the row's position in the batch), topk_index,
    topk_label, topk_prob (lists, most probable first; empty for an image
    that failed) and error (null, or the one-line reason).
    """

    SCHEMA = pa.schema([("path", pa.string()), ("topk_index", pa.list_(pa.int32())), ("topk_label", pa.list_(pa.string())),
                        ("topk_prob", pa.list_(pa.float32())), ("error", pa.string())])

    def __init__(self, model, weights=None, *, preset=None, threads=0, batch=1, topk=5, workers=1, precision="f32",
                 calibration=None):
        self._model = vinfer.Model(model, weights, threads=threads, preset=preset, batch=batch, precision=precision,
                                   calibration=calibration)
        self._topk = topk
        self._workers = workers

    def __call__(self, rows):
        data = rows["bytes"]
        paths = rows["path"] if "path" in rows else [f"<row {i}>" for i in range(len(data))]
        results = self._model.classify([bytes(b) for b in data], topk=self._topk, workers=self._workers)
        out = {"path": [str(p) for p in paths], "topk_index": [], "topk_label": [], "topk_prob": [], "error": []}
        for r in results:
            top = r.get("topk", [])
            out["topk_index"].append([t["index"] for t in top])
            out["topk_label"].append([t["label"] for t in top])
            out["topk_prob"].append([t["prob"] for t in top])
            err = r.get("error")
            # Bytes carry no name: the row's path stands in for "<bytes>".
            out["error"].append(err.replace("<bytes>", out["path"][len(out["error"])], 1) if err else None)
        return pa.Table.from_pydict(out, schema=self.SCHEMA)
