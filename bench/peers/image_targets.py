import json, statistics
runs = [json.load(open(f"out/bench_image_{i}.json")) for i in (1, 2, 3)]
def get(r, name, scen=None):
    for sc, n, v in r["results"]:
        if n == name and v and (scen is None or sc == scen): return v["p50"]
    raise KeyError(name)
def best(r, names, scen=None):
    return min(get(r, n, scen) for n in names)
SEED = ["torch-seed (default, 2t)", "torch-seed (threads=cores, 2t)", "torch-seed (1 thread, 1t)"]
T = [
 ("resize loop (gray 1411² → 470²) >= 10x the seed's PyTorch loop", lambda r: best(r, SEED, "resize") / get(r, "vinfer torch nearest, f32 out (2t)"), 10),
 ("... no slower than OpenCV INTER_NEAREST", lambda r: best(r, ["opencv INTER_NEAREST (default, 2t)", "opencv INTER_NEAREST (1 thread, 1t)"]) / get(r, "vinfer opencv nearest (2t)"), 1),
 ("Pillow BILINEAR (antialiased) >= 5x Pillow (gray)", lambda r: get(r, "pillow BILINEAR (antialiased)") / get(r, "vinfer pil bilinear (2t)"), 5),
 ("... same, 1 thread", lambda r: get(r, "pillow BILINEAR (antialiased)") / get(r, "vinfer pil bilinear (1t)"), 5),
 ("... faster than Pillow-SIMD (gray)", lambda r: [v for s,n,v in r["results"] if n.startswith("pillow-simd") and s=="resize"][0]["p50"] / get(r, "vinfer pil bilinear (2t)"), 1),
 ("... faster than Pillow-SIMD (RGB 1411^2 -> 224^2, 2 threads)", lambda r: [v for s,n,v in r["results"] if n.startswith("pillow-simd") and s=="resize-rgb224"][0]["p50"] / get(r, "vinfer pil bilinear RGB -> 224x224 (2t)"), 1),
 ("... same, 1 thread", lambda r: [v for s,n,v in r["results"] if n.startswith("pillow-simd") and s=="resize-rgb224"][0]["p50"] / get(r, "vinfer pil bilinear RGB -> 224x224 (1t)"), 1),
 ("OpenCV INTER_LINEAR no slower than OpenCV", lambda r: best(r, ["opencv INTER_LINEAR (default, 2t)", "opencv INTER_LINEAR (1 thread, 1t)"]) / get(r, "vinfer opencv bilinear (2t)"), 1),
 ("OpenCV INTER_AREA no slower than OpenCV", lambda r: best(r, ["opencv INTER_AREA (default, 2t)", "opencv INTER_AREA (1 thread, 1t)"]) / get(r, "vinfer opencv area (2t)"), 1),
 ("TF bilinear faster than tf.image.resize", lambda r: get(r, "tf-seed tf.image.resize bilinear (default threads)") / get(r, "vinfer tf bilinear, f32 out (2t)"), 1),
 ("torchvision preset, exact, >= 1.8x PIL + torchvision", lambda r: best(r, ["PIL + torchvision transforms (1 thread, 1t)", "PIL + torchvision transforms (threads=cores, 2t)", "PIL + torchvision transforms (default, 2t)"]) / get(r, "vinfer torchvision preset, exact (2t)"), 1.8),
 ("torchvision preset, fast, >= 4x", lambda r: best(r, ["PIL + torchvision transforms (1 thread, 1t)", "PIL + torchvision transforms (threads=cores, 2t)", "PIL + torchvision transforms (default, 2t)"]) / min(get(r, "vinfer torchvision preset, fast (2t)"), get(r, "vinfer torchvision preset, fast (1t)")), 4),
 ("resize loop with decode, fast >= 3x the seed's PyTorch loop", lambda r: best(r, SEED, "resize-decode") / min(get(r, "vinfer seed loop, fast: luma + DCT-scaled (1t)"), get(r, "vinfer seed loop, fast: luma + DCT-scaled (2t)")), 3),
 ("resize loop with decode, exact >= 1.5x", lambda r: best(r, SEED, "resize-decode") / min(get(r, "vinfer seed loop, exact (1t)"), get(r, "vinfer seed loop, exact (2t)")), 1.5),
]
print("| target | run 1 | run 2 | run 3 | median | met? |\n|---|---:|---:|---:|---:|---|")
for name, f, goal in T:
    vals = [f(r) for r in runs]
    med = statistics.median(vals)
    print(f"| {name} | " + " | ".join(f"{v:.2f}x" for v in vals) + f" | **{med:.2f}x** | {'yes' if med >= goal else 'no'} |")
