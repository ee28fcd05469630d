#!/usr/bin/env bash
# The GPU check: one run on a machine with an NVIDIA GPU, under 5 minutes:
#   1. the backends and devices vinfer sees;
#   2. parity: the op tests (CPU, CUDA and the reference on every small graph)
#      and whole networks exported by that machine's PyTorch (CUDA logits vs
#      PyTorch's and vs vinfer's CPU);
#   3. figures: the forward pass on the GPU, the seed's loop (file -> top-5) on
#      the GPU through vinfer, and PyTorch eager's loop as written and corrected.
# The GPU machine's image has CUDA, cuDNN and PyTorch but not Debian's -dev
# libraries, so the binaries come prebuilt from here: run `bash scripts/gpu_bundle`
# first and carry out/gpu with the tree. Results go to $OUT (default out/gpu_check),
# and all of them in one $OUT/results.tgz (where only a few files may travel back:
# OUT=/tmp/gc bash bench/gpu_check.sh; cp /tmp/gc/results.tgz <there>).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out/gpu_check}
mkdir -p "$OUT"
step() { echo; echo "== $* ($(date +%T))"; }
work=$(mktemp -d /tmp/vinfer-gpu.XXXXXX)

if [ -f out/gpu/bundle.tar.xz ]; then
  tar -C "$work" -xJf out/gpu/bundle.tar.xz
else
  step "no out/gpu/bundle.tar.xz: building here (needs vinfer's dependencies installed)"
  cmake -S . -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DVINFER_CUDA=ON -DVINFER_BUILD_BENCH=OFF >/dev/null &&
    cmake --build "$work/build" -j"$(nproc)" >/dev/null || { echo "build failed"; exit 1; }
  mkdir -p "$work/bin" "$work/lib"
  cp "$work/build/vinfer" "$work/build/tests/vinfer_tests" "$work/build/tests/vinfer_model_tests" "$work/bin/"
fi
BIN=$work/bin
# NVIDIA's libraries: the machine's own (PyTorch's nvidia-* wheels, or the toolkit).
nv=$(python3 - <<'PY' 2>/dev/null
import glob, os, site
dirs = set()
for sp in site.getsitepackages():
    for d in glob.glob(os.path.join(sp, "nvidia", "**", "lib"), recursive=True):
        dirs.add(d)
print(":".join(sorted(dirs)))
PY
)
export LD_LIBRARY_PATH="$work/lib:${nv}:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}"

step "devices"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv 2>&1 | tee "$OUT/nvidia-smi.txt"
if ldd "$BIN/vinfer" | grep 'not found'; then echo "missing libraries (above)"; exit 1; fi
"$BIN/vinfer" devices | tee "$OUT/devices.txt"
"$BIN/vinfer" devices | grep -q '^  cuda:0' || { echo "vinfer sees no CUDA device"; exit 1; }

step "op parity (CPU, CUDA, reference)"
"$BIN/vinfer_tests" --gtest_filter='EngineOps*:Cuda*:Winograd*:Engine.*:FusedPrep*' --gtest_brief=1 2>&1 | tail -n 30 | tee "$OUT/op_tests.txt"

step "network parity (exports by this machine's PyTorch)"
M=$work/models   # not under $OUT: only a few files come back from a run
mkdir -p "$M"
if ! VINFER_OPSET=17 timeout 120 python3 tests/models/export_models.py "$M" densenet121 resnet50 squeezenet1_1 2>&1 | grep -v Warning | tail -n 5; then
  echo "export failed: the carried squeezenet1_1 only"
fi
[ -f "$M/densenet121.onnx" ] || cp out/gpu/models/* "$M/" 2>/dev/null
VINFER_MODEL_DIR=$M "$BIN/vinfer_model_tests" --gtest_filter='Exports/*' 2>&1 | grep -E 'max \||OK|FAILED' | tee "$OUT/model_parity.txt"

step "forward pass on the GPU (batch 1, CUDA graph replay)"
for m in densenet121 resnet50 squeezenet1_1; do
  [ -f "$M/$m.onnx" ] || continue
  "$BIN/vinfer" bench "$M/$m.onnx" --forward-only --device cuda --loops 300 --warmup 20 --json "$OUT/forward_$m.json" 2>&1 | tee -a "$OUT/forward.txt"
  "$BIN/vinfer" bench "$M/$m.onnx" --forward-only --device cuda --allow-tf32 --loops 300 --warmup 20 2>&1 | sed 's/^/[tf32] /' | tee -a "$OUT/forward.txt"
done
"$BIN/vinfer" info "$M/densenet121.onnx" --device cuda --profile --runs 5 > "$OUT/profile_densenet121.txt" 2>&1 || true
tail -n 3 "$OUT/profile_densenet121.txt"

step "the seed's loop: file -> top-5, DenseNet121, one image at a time"
IMG=tests/data/images/squirrel_cls.jpg   # 535x426 JPEG, 0.23 MP
# Resize + normalize on the GPU (the default with --device cuda), then on the CPU.
"$BIN/vinfer" bench densenet121 "$IMG" --device cuda --loops 300 --warmup 20 --json "$OUT/seed_vinfer_cuda.json" 2>&1 | tee "$OUT/seed_vinfer_cuda.txt"
"$BIN/vinfer" bench densenet121 "$IMG" --device cuda --host-preprocess --loops 200 --warmup 20 --json "$OUT/seed_vinfer_cuda_hostprep.json" 2>&1 | tail -n 16 | tee "$OUT/seed_vinfer_cuda_hostprep.txt"
"$BIN/vinfer" classify densenet121 "$IMG" --device cuda --save-logits "$OUT/logits_cuda.npy" >/dev/null 2>&1
"$BIN/vinfer" classify densenet121 "$IMG" --save-logits "$OUT/logits_cpu.npy" >/dev/null 2>&1
python3 -c "
import sys
try:
    import numpy as np
except ImportError:
    sys.exit('classify parity: numpy missing here, compare the two .npy files elsewhere')
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
print('classify, GPU preprocessing vs CPU: max|diff| / max|logit| = %.2e (target <= 1e-3)' % (np.abs(a - b).max() / np.abs(b).max()))
" "$OUT/logits_cpu.npy" "$OUT/logits_cuda.npy" 2>&1 | tee "$OUT/classify_parity.txt"
"$BIN/vinfer" bench densenet121 "$IMG" --loops 30 --warmup 5 --json "$OUT/seed_vinfer_cpu.json" 2>&1 | tail -n 12 | tee "$OUT/seed_vinfer_cpu.txt"
timeout 150 python3 bench/peers/gpu_seed.py --image "$IMG" --loops 100 --out "$OUT/seed_torch.json" || echo "PyTorch seed loop failed"

step "summary"
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(n):
    p = os.path.join(out, n)
    return json.load(open(p)) if os.path.exists(p) else None
rows = []
f = load("forward_densenet121.json")
if f: rows.append(("vinfer forward, DenseNet121 (CUDA graph)", f["latency_ms"]["p50"], "target <= 1.0 ms"))
v = load("seed_vinfer_cuda.json")
if v: rows.append(("vinfer seed loop, file -> top-5 (GPU preprocessing)", v["latency_ms"]["p50"], "target <= 2.5 ms"))
h = load("seed_vinfer_cuda_hostprep.json")
if h: rows.append(("vinfer seed loop, CPU preprocessing (--host-preprocess)", h["latency_ms"]["p50"], ""))
t = load("seed_torch.json")
if t:
    rows.append(("PyTorch eager forward", t["torch-forward-eager"]["p50"], ""))
    rows.append(("PyTorch seed loop as written (launch time)", t["torch-seed"]["p50"], "finished: %.3f" % t["torch-seed"]["mean_finished"]))
    rows.append(("PyTorch seed loop corrected", t["torch-corrected"]["p50"], ""))
    if v: rows.append(("corrected PyTorch / vinfer", t["torch-corrected"]["p50"] / v["latency_ms"]["p50"], "target >= 5x"))
print("| what | p50 ms (or ratio) | note |\n|---|---:|---|")
for r in rows: print("| %s | %.3f | %s |" % r)
PY
tar -C "$OUT" -czf "$work/results.tgz" . && mv "$work/results.tgz" "$OUT/"
echo; echo "results in $OUT (and all of them in $OUT/results.tgz)"
