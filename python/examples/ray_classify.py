#!/usr/bin/env python3
"""Classify a directory of images (JPEG, PNG) into Parquet with Ray Data and vinfer.

    python ray_classify.py IMAGES OUT [--model densenet121] [--weights W] [--actors 2] [--batch-size 64]

Without RAY_ADDRESS (or --address) Ray starts on this machine; with a
cluster's address the same command runs on every machine of the cluster
(each needs vinfer installed, the model at the same path, and IMAGES and OUT
where every machine reaches them: a shared file system or object storage
such as s3://bucket/images).
"""
import argparse
import time

import ray

import vinfer.ray


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("images")
    ap.add_argument("out")
    ap.add_argument("--model", default="densenet121", help="a built-in name or an ONNX file")
    ap.add_argument("--weights", default=None)
    ap.add_argument("--address", default=None, help="a Ray cluster (default: $RAY_ADDRESS, else a local one)")
    ap.add_argument("--actors", type=int, default=2, help="model copies (each loads the network once)")
    ap.add_argument("--cpus-per-actor", type=float, default=1)
    ap.add_argument("--threads", type=int, default=1, help="inference threads per actor")
    ap.add_argument("--batch-size", type=int, default=64, help="images per map_batches call")
    ap.add_argument("--topk", type=int, default=5)
    a = ap.parse_args()
    ray.init(address=a.address)
    t = time.perf_counter()
    ds = ray.data.read_binary_files(a.images, include_paths=True, file_extensions=["jpg", "jpeg", "png"])
    out = ds.map_batches(vinfer.ray.Classifier,
                         fn_constructor_kwargs={"model": a.model, "weights": a.weights, "threads": a.threads, "topk": a.topk},
                         batch_size=a.batch_size, compute=ray.data.ActorPoolStrategy(size=a.actors),
                         num_cpus=a.cpus_per_actor)
    out.write_parquet(a.out)
    print(f"classified {a.images} into {a.out} in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
