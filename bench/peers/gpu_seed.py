"""The seeds' PyTorch loop on a GPU, as written and corrected.

    python3 bench/peers/gpu_seed.py --image tests/data/images/squirrel_cls.jpg [--model densenet121] [--loops 100]

"as written": the seed's loop (PIL open -> Resize([224, 224]) -> ToTensor ->
Normalize -> .to(cuda) -> model(img)) with autograd on and no
synchronisation, timed the seed's way; its figure counts launches, not the
work, so it also prints the time until the GPU has finished.
"corrected": torch.no_grad(), the top-5 copied back to the host each image
(which waits for the GPU), CUDA synchronised before the clock stops.
Random weights (nothing can be downloaded): the timings are real, labels are not.
Prints one JSON object; --out writes it too.
"""
import argparse
import json
import statistics
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", required=True)
    ap.add_argument("--model", default="densenet121")
    ap.add_argument("--loops", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--out")
    a = ap.parse_args()

    import torch
    import torchvision
    import torchvision.transforms as T
    from PIL import Image

    dev = torch.device("cuda")
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = getattr(torchvision.models, a.model)(weights=None).eval().to(dev)
    tf = T.Compose([T.Resize([224, 224]), T.ToTensor(), T.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def seed_once():
        img = Image.open(a.image)
        x = tf(img).float().unsqueeze_(0).to(dev)
        return model(x)

    def corrected_once():
        with torch.no_grad():
            img = Image.open(a.image).convert("RGB")
            x = tf(img).unsqueeze(0).to(dev, non_blocking=False)
            y = model(x)
            return torch.topk(torch.softmax(y, 1), 5).indices.cpu()

    out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "model": a.model, "loops": a.loops}
    for name, fn in (("torch-seed", seed_once), ("torch-corrected", corrected_once)):
        for _ in range(a.warmup):
            fn()
        torch.cuda.synchronize()
        per = []
        start = time.perf_counter()
        for _ in range(a.loops):
            t = time.perf_counter()
            fn()
            if name == "torch-corrected":
                torch.cuda.synchronize()
            per.append((time.perf_counter() - t) * 1000)
        launched = (time.perf_counter() - start) * 1000 / a.loops
        torch.cuda.synchronize()
        finished = (time.perf_counter() - start) * 1000 / a.loops
        per.sort()
        out[name] = {"p50": statistics.median(per), "p90": per[int(0.9 * (len(per) - 1))], "mean_launched": launched,
                     "mean_finished": finished}
    # The forward pass alone (corrected, input already on the GPU).
    x = torch.randn(1, 3, 224, 224, device=dev)
    with torch.no_grad():
        for _ in range(a.warmup):
            model(x)
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        ms = []
        for _ in range(a.loops):
            ev[0].record()
            model(x)
            ev[1].record()
            ev[1].synchronize()
            ms.append(ev[0].elapsed_time(ev[1]))
    ms.sort()
    out["torch-forward-eager"] = {"p50": statistics.median(ms), "p90": ms[int(0.9 * (len(ms) - 1))]}
    print(json.dumps(out))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
