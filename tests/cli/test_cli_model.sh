#!/usr/bin/env bash
# The model commands' contract (classify, bench, info) on a real export:
# output formats, a batch with bad files, one-line errors with exit code 2.
set -u
V=${VINFER:?} D=${DATA:?} M=${MODEL:?}
. "$(dirname "$0")/lib.sh"
IMG="$D/images/squirrel_cls.jpg"

# Top-5 in text: five lines of "prob% index label" after the file name.
"$V" classify "$M" "$IMG" --threads 2 >"$T/out" && ok || bad "classify exit"
[ "$(grep -c '%' "$T/out")" -eq 5 ] && ok || bad "classify prints 5 classes: $(cat "$T/out")"
# JSON: one object per image per line, probabilities summing to <= 1, labels from the embedded list.
"$V" classify "$M" "$IMG" "$D/images/chelsea.png" --json --topk 3 --save-logits "$T/logits.npy" >"$T/out.json" && ok || bad "classify --json"
python3 - "$T/out.json" "$T/logits.npy" <<'PY' && ok || bad "classify json/npy content"
import json, sys, struct
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, lines
for l in lines:
    j = json.loads(l)
    assert len(j["topk"]) == 3 and all({"index", "label", "prob"} <= set(t) for t in j["topk"]), j
    p = [t["prob"] for t in j["topk"]]
    assert p == sorted(p, reverse=True) and 0 < sum(p) <= 1.0001, p
    assert isinstance(j["topk"][0]["label"], str) and j["topk"][0]["label"], j
b = open(sys.argv[2], "rb").read()
h = b[10:10 + struct.unpack("<H", b[8:10])[0]].decode()
assert "'shape': (2, 1000)" in h and "<f4" in h, h
PY
# The thread count changes nothing but speed: the same logits on one thread
# and on all (within float rounding: the kernels timed at load may differ).
"$V" classify "$M" "$IMG" --save-logits "$T/a.npy" >/dev/null && "$V" classify "$M" "$IMG" --threads 1 --save-logits "$T/b.npy" >/dev/null \
  && ok || bad "classify twice"
python3 - "$T/a.npy" "$T/b.npy" <<'PY' && ok || bad "thread count changes the logits"
import struct, sys
def logits(p):
    b = open(p, "rb").read()
    n = 10 + struct.unpack("<H", b[8:10])[0]
    return struct.unpack(f"<{(len(b) - n) // 4}f", b[n:])
a, b = logits(sys.argv[1]), logits(sys.argv[2])
scale = max(abs(v) for v in a)
worst = max(abs(x - y) for x, y in zip(a, b))
assert len(a) == len(b) == 1000 and scale > 0 and worst <= 2e-5 * scale, (len(a), len(b), worst, scale)
PY

# A batch with bad files: the good ones are classified, each bad one gets one line, exit 2.
"$V" classify "$M" "$IMG" "$D/bad/truncated.jpg" "$D/images/chelsea.png" "$D/bad/missing.jpg" --json >"$T/batch.json" 2>"$T/batch.err"
rc=$?
[ "$rc" -eq 2 ] && ok || bad "batch with bad files exits $rc (want 2)"
[ "$(wc -l <"$T/batch.err")" -eq 2 ] && ok || bad "batch stderr: $(cat "$T/batch.err")"
python3 - "$T/batch.json" <<'PY' && ok || bad "batch json records"
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert [("topk" in x, "error" in x) for x in r] == [(True, False), (False, True), (True, False), (False, True)], r
assert r[1]["image"].endswith("truncated.jpg") and r[3]["image"].endswith("missing.jpg"), r
PY

# Many images: a folder with good and bad entries, in batches of 3 with two
# loader threads, streamed to JSON lines: each good image classified as one
# at a time does, each bad one reported once, exit 2.
F="$T/folder"
mkdir -p "$F/sub" "$F/dir.jpg"
cp "$IMG" "$F/a.jpg"; cp "$D/images/chelsea.png" "$F/b.png"; cp "$D/images/retina.jpg" "$F/sub/c.JPG"
cp "$D/bad/truncated.jpg" "$F/trunc.jpg"; : >"$F/empty.jpg"; echo notes >"$F/notes.txt"
python3 - "$F/big.png" <<'PY'
import struct, sys, zlib
w = h = 9500  # 90.25 MP: over the default pixel limit, a small file (one grey colour)
row = b"\0" + b"\x80" * w
z = zlib.compressobj(9)
data = b"".join(z.compress(row) for _ in range(h)) + z.flush()
chunk = lambda t, d: struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
open(sys.argv[1], "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(b"IDAT", data) + chunk(b"IEND", b""))
PY
"$V" classify "$M" "$F" --threads 2 --json --topk 3 >"$T/one.json" 2>/dev/null
"$V" classify "$M" "$F" -r --batch 3 --workers 2 --threads 2 --topk 3 -o "$T/many.jsonl" 2>"$T/many.err"; rc=$?
[ "$rc" -eq 2 ] && ok || bad "folder with bad files exits $rc (want 2)"
[ "$(grep -c 'error:' "$T/many.err")" -eq 3 ] && ok || bad "folder: one error line per bad entry: $(cat "$T/many.err")"
python3 - "$T/one.json" "$T/many.jsonl" "$F" <<'PY' && ok || bad "folder records"
import json, sys
one = {r["image"]: r for r in map(json.loads, open(sys.argv[1]))}
many = [json.loads(l) for l in open(sys.argv[2])]
f = sys.argv[3]
names = [r["image"][len(f) + 1:] for r in many]
assert names == ["a.jpg", "b.png", "big.png", "empty.jpg", "sub/c.JPG", "trunc.jpg"], names  # -r: dir.jpg/ descended
bad = {r["image"][len(f) + 1:]: r["error"] for r in many if "error" in r}
assert set(bad) == {"big.png", "empty.jpg", "trunc.jpg"}, bad
assert "limit" in bad["big.png"], bad
assert "directory" in one[f + "/dir.jpg"]["error"], one  # without -r, reported
for r in many:
    if "topk" in r and r["image"] in one:  # without -r, sub/ was not listed
        assert [t["index"] for t in r["topk"]] == [t["index"] for t in one[r["image"]]["topk"]], r
        assert all(abs(a["prob"] - b["prob"]) < 1e-5 for a, b in zip(r["topk"], one[r["image"]]["topk"])), r
assert not any("sub/" in k for k in one), list(one)
PY
# The output is never overwritten; --resume needs one; a fixed list of files, as CSV.
expect_fail "" "exists (--resume continues it" -- "$V" classify "$M" "$IMG" -o "$T/many.jsonl"
expect_fail "" "--resume continues an --output" -- "$V" classify "$M" "$IMG" --resume
printf '%s\n' "$F/a.jpg" "$F/b.png" "$F/trunc.jpg" >"$T/list.txt"
"$V" classify "$M" --files-from "$T/list.txt" --batch 2 --streams 2 -o "$T/list.csv" 2>/dev/null; rc=$?
python3 - "$T/list.csv" "$rc" <<'PY' && ok || bad "--files-from to CSV"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert sys.argv[2] == "2" and [r["image"].rsplit("/", 1)[1] for r in rows] == ["a.jpg", "b.png", "trunc.jpg"], rows
assert rows[0]["top1_label"] and float(rows[0]["top1_prob"]) > 0 and not rows[0]["error"] and "truncated" in rows[2]["error"], rows
PY

# A run killed part-way, then resumed on the same output: every image exactly
# once, each record whole (also when the kill cut one short).
R="$T/resume"; mkdir -p "$R"
ABS_IMG="$(cd "$(dirname "$IMG")" && pwd)/$(basename "$IMG")"
for i in $(seq -w 1 40); do ln -s "$ABS_IMG" "$R/img$i.jpg"; done
"$V" classify "$M" "$R" --threads 1 -o "$T/r.jsonl" 2>/dev/null &
pid=$!
for _ in $(seq 1 200); do [ -s "$T/r.jsonl" ] && [ "$(wc -l <"$T/r.jsonl")" -ge 3 ] && break; sleep 0.05; done
kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
printf '{"image": "%s/img' "$R" >>"$T/r.jsonl"  # a record cut short
"$V" classify "$M" "$R" --threads 2 --batch 4 -o "$T/r.jsonl" --resume 2>"$T/r.err" && ok || bad "--resume exit: $(cat "$T/r.err")"
grep -q "already there" "$T/r.err" && ok || bad "--resume says what it skips: $(cat "$T/r.err")"
python3 - "$T/r.jsonl" <<'PY' && ok || bad "resumed output: each image once"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
names = sorted(r["image"].rsplit("/", 1)[1] for r in recs)
assert names == ["img%02d.jpg" % i for i in range(1, 41)], names
assert all("topk" in r for r in recs)
PY
expect_fail "" "not an output of vinfer classify" -- "$V" classify "$M" "$IMG" -o "$T/list.txt" --resume
# A network exported for batch 1 only (torch's dynamo export without dynamic shapes) says so.
expect_fail "" "fixed batch of 1, not 2" -- "$V" info "$D/onnx20/small.onnx" --batch 2
expect_fail "" "applies to --forward-only" -- "$V" bench "$M" "$IMG" --batch 2

# Forward-only benchmark and info.
"$V" bench "$M" --forward-only --loops 3 --warmup 1 --json "$T/bench.json" >"$T/out" && grep -q "p50" "$T/out" && ok || bad "bench --forward-only"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['latency_ms']['p50'] > 0 and len(j['per_iter_ms']) == 3" "$T/bench.json" && ok || bad "bench json"
# The peers' input from its .npy (written next to each export), or a clear error.
"$V" bench "$M" --forward-only --input "${M%.onnx}.input.npy" --loops 2 --warmup 0 --json "$T/bench_in.json" >"$T/out" && ok || bad "bench --input"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['input'].endswith('.input.npy')" "$T/bench_in.json" && ok || bad "bench --input json"
expect_fail "$T/bench_bad.json" "values, the model takes" -- "$V" bench "$M" --forward-only --input "$T/logits.npy" --json "$T/bench_bad.json"
python3 -c "
import sys
h = b\"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\"
h += b' ' * (63 - len(h) % 64) + b'\\n'
open(sys.argv[1], 'wb').write(b'\\x93NUMPY\\x01\\x00' + len(h).to_bytes(2, 'little') + h + b'\\0' * 64)" "$T/huge.npy"
expect_fail "" "larger than the file" -- "$V" bench "$M" --forward-only --input "$T/huge.npy"
expect_fail "" "for --forward-only" -- "$V" bench "$M" "$IMG" --input "$T/logits.npy"
"$V" profile "$M" --input "${M%.onnx}.input.npy" --runs 1 >"$T/out" && grep -q "total (the fastest" "$T/out" && ok || bad "profile --input"
# The seed's loop, stage by stage: JSON, CSV, plot, and the pipelined variant.
"$V" bench "$M" "$IMG" "$D/images/chelsea.png" --loops 4 --warmup 1 --json "$T/full.json" --csv "$T/full.csv" --plot "$T/full.png" >"$T/out" \
  && grep -q "| FPS | Latency (ms) |" "$T/out" && ok || bad "bench (full scenario): $(cat "$T/out")"
python3 - "$T/full.json" "$T/full.csv" <<'PY' && ok || bad "bench full json/csv"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["mode"] == "single-stream" and j["loops"] == 4 and j["fps"] > 0, j
for k in ("mean", "p50", "p90", "p99", "min", "max"):
    assert j["latency_ms"][k] > 0, k
assert set(j["stages"]) == {"read", "decode", "resize", "normalize", "infer", "topk"}, j["stages"]
assert abs(sum(s["mean"] for s in j["stages"].values()) - j["latency_ms"]["mean"]) <= 0.05 * j["latency_ms"]["mean"]
rows = open(sys.argv[2]).read().splitlines()
assert rows[0].startswith("iteration,image,read_ms") and len(rows) == 5, rows
assert rows[2].split(",")[1].endswith("chelsea.png"), rows[2]
PY
[ -s "$T/full.png" ] && head -c 4 "$T/full.png" | grep -q PNG && ok || bad "bench --plot png"
"$V" bench "$M" --loops 3 --warmup 1 --pipeline --json "$T/pipe.json" >"$T/out" && grep -q "throughput" "$T/out" && ok || bad "bench --pipeline"
"$V" info "$M" --profile --runs 1 >"$T/out" && grep -q "arena" "$T/out" && grep -q "GFLOP/s" "$T/out" && ok || bad "info --profile"
# The timed 3x3 choices are kept in the cache file and read back, not timed again;
# an unwritable cache path (a directory) costs nothing but the saving.
"$V" info "$M" --threads 2 --tune-cache "$T/tune/cache.txt" >"$T/out1" && ok || bad "info with a new tune cache"
"$V" info "$M" --threads 2 --tune-cache "$T/tune/cache.txt" >"$T/out2" && ok || bad "info with a written tune cache"
# (SqueezeNet's 3x3s have several candidates wherever vinfer's Winograd runs:
# every CPU with AVX2; only VINFER_ISA=plain leaves nothing to time.)
if [ "${VINFER_ISA:-}" = plain ]; then
  grep -q "tune_conv:" "$T/out1" && bad "timed 3x3 kernels at ISA level plain" || ok
else
  grep -q "tune_conv:" "$T/out1" && ok || bad "no 3x3 layer was timed: $(grep -c . "$T/out1") lines of info"
  head -1 "$T/tune/cache.txt" | grep -qx "vinfer tune cache 1" && ok || bad "tune cache header: $(head -2 "$T/tune/cache.txt")"
  grep -q "0 shapes timed" "$T/out2" && grep -q "nothing new" "$T/out2" && ok || bad "tune cache not reused: $(grep tune "$T/out2")"
  "$V" info "$M" --threads 2 --tune-cache "$T/tune" >"$T/out3" && grep -q "0 written" "$T/out3" && ok || bad "tune cache on a directory: $(grep tune "$T/out3")"
fi

# Errors: one line, exit 2.
expect_fail "" "cannot open" -- "$V" classify "$T/none.onnx" "$IMG"
head -c 1000 "$M" >"$T/trunc.onnx"
expect_fail "" "trunc.onnx" -- "$V" classify "$T/trunc.onnx" "$IMG"
echo "not a model" >"$T/text.onnx"
expect_fail "" "not a valid ONNX model" -- "$V" classify "$T/text.onnx" "$IMG"
expect_fail "" "must be positive" -- "$V" classify "$D/bad/onnx_zero_stride.onnx" "$IMG"
expect_fail "" "NHWC" -- "$V" classify "$M" "$IMG" --preset keras-caffe
expect_fail "" "truncated.jpg" -- "$V" bench "$M" "$D/bad/truncated.jpg" --loops 2
expect_fail "" "drop the images" -- "$V" bench "$M" "$IMG" --forward-only
expect_fail "" "preset" -- "$V" classify "$M" "$IMG" --preset nope

# Checkpoints: hostile, corrupt, wrong network: one line, exit 2, nothing executed.
MD=$(dirname "$M")
rm -f /tmp/vinfer_pwned
expect_fail "" "refused" -- "$V" classify resnet18 "$IMG" --weights "$MD/hostile.pth"
[ ! -e /tmp/vinfer_pwned ] && ok || bad "the hostile checkpoint ran code"
expect_fail "" "pickle_cycle.pth" -- "$V" classify resnet18 "$IMG" --weights "$D/bad/pickle_cycle.pth"
head -c 5000 "$MD/resnet18.pth" >"$T/cut.pth"
expect_fail "" "cut.pth" -- "$V" classify resnet18 "$IMG" --weights "$T/cut.pth"
expect_fail "" "weights do not fit densenet121" -- "$V" classify densenet121 "$IMG" --weights "$MD/resnet18.pth"
expect_fail "" "--weights applies to built-in networks only" -- "$V" classify "$M" "$IMG" --weights "$MD/resnet18.pth"
expect_fail "" "'alexnet' is neither a file nor a built-in network; built-in: densenet121" -- "$V" classify alexnet "$IMG"
# Limits, each with an option.
expect_fail "" "limit" -- "$V" classify "$M" "$IMG" --max-nodes 10
# profile: per-layer table with the machine's measured FP32 peak and each layer's share of it.
"$V" profile "$M" --threads 1 --runs 1 >"$T/prof.txt" 2>&1 && grep -q 'FP32 peak here: [0-9.]* GFLOP/s' "$T/prof.txt" &&
  grep -q '%peak' "$T/prof.txt" && grep -q '% of peak' "$T/prof.txt" && ok || bad "profile: $(head -c 600 "$T/prof.txt")"
# With several runs also each layer's median and their sum (what a pass spends, as ONNX Runtime's profiler reports).
"$V" profile "$M" --threads 1 --runs 3 --json "$T/prof3.json" >"$T/prof3.txt" 2>&1 && grep -q 'p50 ms' "$T/prof3.txt" &&
  grep -q 'p50 total (sum of the layers. medians over 3 runs)' "$T/prof3.txt" && ok || bad "profile --runs 3: $(tail -c 400 "$T/prof3.txt")"
python3 - "$T/prof3.json" <<'PY' && ok || bad "profile --json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["runs"] == 3 and j["threads"] == 1 and j["layers"], j
for l in j["layers"]:
    assert set(l) == {"layer", "impl", "ms_min", "ms_p50", "flops", "weight_bytes"}, l
    assert 0 < l["ms_min"] <= l["ms_p50"], l
assert any(l["layer"].startswith("Conv '") and l["flops"] > 0 and l["weight_bytes"] > 0 for l in j["layers"])
PY
grep -q 'GB/s' "$T/prof3.txt" && grep -q 'MB of weights read a pass' "$T/prof3.txt" && ok || bad "profile: weights read"
# Devices: the CPU always listed; asking for a backend or device that is not there is one clear line.
"$V" devices >"$T/dev.txt" && grep -q '^cpu: compiled in' "$T/dev.txt" && grep -q '^cuda: ' "$T/dev.txt" && ok || bad "devices: $(cat "$T/dev.txt")"
"$V" devices --json | python3 -c 'import json,sys; j=json.load(sys.stdin); assert [b["backend"] for b in j][:2]==["cpu","cuda"] and j[0]["devices"], j' && ok || bad "devices --json"
if ! grep -q '^  cuda:0' "$T/dev.txt"; then
  expect_fail "" "no CUDA" -- "$V" classify "$M" "$IMG" --device cuda
  expect_fail "" "no CUDA" -- "$V" bench "$M" --forward-only --device cuda:1 --loops 2
fi
expect_fail "" "expected cpu, cuda or cuda:N" -- "$V" classify "$M" "$IMG" --device gpu
expect_fail "" "expected cuda:N" -- "$V" bench "$M" --forward-only --device cuda:x
expect_fail "" "limit" -- "$V" classify "$M" "$IMG" --max-model-mb 1
"$V" classify "$M" "$IMG" "$IMG" --max-pixels 1000 --json >"$T/lim.json" 2>"$T/lim.err"; rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/lim.err")" -eq 2 ] && grep -q "limit" "$T/lim.err" && ok || bad "--max-pixels: rc $rc $(cat "$T/lim.err")"

# Reduced precision: refused, in one line, where the CPU lacks bfloat16 dot
# products (VINFER_BF16=0 makes this one such a CPU); measured by `check`
# where it has them: the thresholds it is given decide its exit code.
expect_fail "" "bfloat16 dot products" -- env VINFER_BF16=0 "$V" classify "$M" "$IMG" --precision bf16
expect_fail "" "bfloat16 dot products" -- env VINFER_BF16=0 "$V" check "$M" "$IMG" --precision bf16
expect_fail "" "give the reduced one" -- "$V" check "$M" "$IMG"

# int8: a calibration file from `calibrate`, refused where it is not one
# (each in one line, exit 2, nothing half-written), and where the CPU lacks
# VNNI (VINFER_ISA=avx2 makes this one such a CPU).
C="$T/m.calib"
"$V" calibrate "$M" "$IMG" "$D/images/chelsea.png" -o "$C" >"$T/cal.out" 2>"$T/cal.err"; rc=$?
[ "$rc" -eq 0 ] && grep -q "from 2 image(s)" "$T/cal.out" && ok || bad "calibrate: exit $rc $(cat "$T/cal.out" "$T/cal.err")"
python3 - "$C" <<'PY' && ok || bad "calibration file"
import json, math, sys
j = json.load(open(sys.argv[1]))
assert j["format"] == "vinfer-calibration" and j["version"] == 1 and j["images"] == 2, j
assert len(j["activations"]) >= 10 and all(r["min"] <= r["max"] and math.isfinite(r["max"]) for r in j["activations"].values())
assert any(r["max"] > 0 for r in j["activations"].values())
assert all(len(s) > 0 and min(s) > 0 for s in j["weight_scales"].values())
PY
"$V" calibrate "$M" "$IMG" "$D/bad/truncated.jpg" -o "$T/part.calib" >"$T/cal.out" 2>"$T/cal.err"; rc=$?
[ "$rc" -eq 2 ] && [ -s "$T/part.calib" ] && grep -q "from 1 image" "$T/cal.out" && grep -q "truncated.jpg" "$T/cal.err" && ok \
  || bad "calibrate with a bad image: exit $rc $(cat "$T/cal.out" "$T/cal.err")"
"$V" calibrate "$M" "$D/bad/truncated.jpg" -o "$T/none.calib" >/dev/null 2>"$T/cal.err"; rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$T/none.calib" ] && tail -1 "$T/cal.err" | grep -q "none of the images" && ok \
  || bad "calibrate without a readable image: exit $rc $(cat "$T/cal.err")"
expect_fail "" "cannot create" -- "$V" calibrate "$M" "$IMG" -o "$T/no/such/dir/m.calib"
expect_fail "" "needs --calibration" -- "$V" bench "$M" --forward-only --precision int8
expect_fail "" "int8 dot products" -- env VINFER_ISA=avx2 "$V" classify "$M" "$IMG" --precision int8 --calibration "$C"
head -c 300 "$C" >"$T/truncated.calib"
printf 'not json' >"$T/garbage.calib"
python3 - "$C" "$T" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); t = sys.argv[2]
def write(name, k):
    json.dump(k, open(f"{t}/{name}.calib", "w"))
name = next(iter(j["activations"]))
k = json.loads(json.dumps(j)); k["activations"][name]["max"] = 1e39; write("inf", k)  # (beyond float32)
k = json.loads(json.dumps(j)); k["activations"][name] = {"min": 1.0, "max": -1.0}; write("minmax", k)
k = json.loads(json.dumps(j)); k["weight_scales"][next(iter(k["weight_scales"]))][0] = 0; write("zeroscale", k)
k = json.loads(json.dumps(j)); k["version"] = 2; write("version", k)
k = json.loads(json.dumps(j)); k["fingerprint"] = "0123456789abcdef"; k["model"] = "resnet18"; write("other", k)
PY
# (Which network a calibration is for is checked after the CPU: without VNNI, that refusal comes first.)
other="another network"
# VINFER_ISA below avx512 caps the int8 capability as a CPU without VNNI would.
{ grep -qw avx512_vnni /proc/cpuinfo && [ "${VINFER_ISA:-avx512}" = avx512 ]; } || other="int8 dot products"
for f in truncated:"not JSON" garbage:"not JSON" inf:"not a finite float" minmax:"min > max" zeroscale:"not positive" \
         version:"version 2" other:"$other"; do
  expect_fail "" "${f#*:}" -- "$V" classify "$M" "$IMG" --precision int8 --calibration "$T/${f%%:*}.calib"
done
expect_fail "" "No such file" -- "$V" classify "$M" "$IMG" --precision int8 --calibration "$T/missing.calib"
"$V" check "$M" "$IMG" "$D/images/chelsea.png" --precision bf16 --max-error 0.05 --min-top1 0.5 --min-cosine 0.99 \
  --json "$T/check.json" >"$T/check.out" 2>"$T/check.err"; rc=$?
if grep -q "bfloat16 dot products" "$T/check.err"; then
  [ "$rc" -eq 2 ] && ok || bad "check without bf16: exit $rc"
else
  [ "$rc" -eq 0 ] && grep -q "top-1 agreement" "$T/check.out" && ok || bad "check: exit $rc $(cat "$T/check.out" "$T/check.err")"
  python3 - "$T/check.json" <<'PY' && ok || bad "check json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["precision"] == "bf16" and j["reference"] == "f32" and j["images"] == 2, j
assert 0 < j["max_rel_error"]["max"] <= 0.05 and j["cosine"]["min"] >= 0.99 and j["met"], j
assert set(j["thresholds"]) == {"max_rel_error", "top1", "cosine"}, j["thresholds"]
assert len(j["per_image"]) == 2 and all(0 < p["max_rel_error"] <= 0.05 for p in j["per_image"]), j["per_image"]
PY
  # bfloat16 moves the logits: no error at all is a threshold it misses.
  "$V" check "$M" "$IMG" --precision bf16 --max-error 0 >"$T/check.out" 2>/dev/null; rc=$?
  [ "$rc" -eq 1 ] && grep -q "MISSED" "$T/check.out" && ok || bad "check --max-error 0: exit $rc $(cat "$T/check.out")"
  # An unreadable image is reported, the rest compared, and the exit code says so.
  "$V" check "$M" "$IMG" "$D/bad/truncated.jpg" --precision bf16 >"$T/check.out" 2>"$T/check.err"; rc=$?
  [ "$rc" -eq 2 ] && grep -q "on 1 image" "$T/check.out" && grep -q "truncated.jpg" "$T/check.err" && ok \
    || bad "check with a bad image: exit $rc $(cat "$T/check.out" "$T/check.err")"
fi

if ! grep -q "int8 dot products" <(env "$V" check "$M" "$IMG" --precision int8 --calibration "$C" 2>&1 >/dev/null); then
  "$V" check "$M" "$IMG" "$D/images/chelsea.png" --precision int8 --calibration "$C" --max-error 0.1 --min-cosine 0.99 \
    --json "$T/check8.json" >"$T/check.out" 2>"$T/check.err"; rc=$?
  [ "$rc" -eq 0 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["precision"]=="int8" and 0<j["max_rel_error"]["max"]<=0.1, j' \
    "$T/check8.json" && ok || bad "check int8: exit $rc $(cat "$T/check.out" "$T/check.err")"
  # The same file, the same results: int8 is deterministic run to run.
  "$V" classify "$M" "$IMG" --precision int8 --calibration "$C" --json >"$T/i8a.json" 2>/dev/null &&
    "$V" classify "$M" "$IMG" --precision int8 --calibration "$C" --json >"$T/i8b.json" 2>/dev/null &&
    cmp -s "$T/i8a.json" "$T/i8b.json" && ok || bad "int8 classify differs run to run"
fi

# No leak: resident memory after 1000 images is what it is after 50 (flat). Under
# ASan the quarantine holds freed memory on purpose; there LeakSanitizer checks instead.
[ -n "${VINFER_SANITIZED:-}" ] || python3 - "$V" "$M" "$IMG" <<'PY' && ok || bad "resident size grows with the number of images"
import resource, subprocess, sys
v, m, img = sys.argv[1:4]
def peak(n):
    subprocess.run([v, "classify", m] + [img] * n + ["--topk", "1", "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, max over children so far
small = peak(50)
large = peak(1000)
assert large <= small * 1.05 + 2048, (small, large)
PY

echo "cli model contract: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
