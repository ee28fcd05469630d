#!/usr/bin/env bash
# The CLI's contract: results written atomically, bad input -> one-line error
# naming the file, exit code 2, and no output file.
set -u
V=${VINFER:?} D=${DATA:?}
. "$(dirname "$0")/lib.sh"

# Good runs.
"$V" resize "$D/images/squirrel_cls.jpg" "$T/a.png" --size 100x80 --compat pil --filter bilinear && [ -s "$T/a.png" ] && ok || bad "resize png"
"$V" resize "$D/images/retina.jpg" "$T/g.npy" --scale 0.3333333333 --gray --compat torch --dtype f32 && [ -s "$T/g.npy" ] && ok || bad "resize npy"
# The image keeps its kind unless --gray or --rgb says otherwise.
for c in "in_rgba.png::(30, 40, 4)" "in_gray.png::(30, 40)," "in_rgba.png:--rgb:(30, 40, 3)" \
         "png_palette_trns.png::(30, 40, 4)" "png_palette.png::(30, 40, 3)"; do
  IFS=: read -r f flag shape <<<"$c"
  "$V" resize "$D/fixtures/$f" "$T/k.npy" --size 40x30 $flag && grep -aqF "'shape': $shape" "$T/k.npy" && ok || bad "resize keeps kind: $c"
done
python3 - "$T/g.npy" <<'PY' && ok || bad "npy shape"
import sys, struct
b = open(sys.argv[1], 'rb').read()
h = b[10:10 + struct.unpack('<H', b[8:10])[0]].decode()
assert "'shape': (470, 470)" in h and "<f4" in h, h
PY
"$V" preprocess "$D/images/squirrel_cls.jpg" "$T/t.npy" --preset torchvision && [ -s "$T/t.npy" ] && ok || bad "preprocess"
"$V" bench-resize "$D/images/squirrel_cls.jpg" --gray --iters 50 --json "$T/b.json" >"$T/out" && grep -q per_iter_ms "$T/b.json" && ok || bad "bench-resize"
grep -q '"p50"' "$T/b.json" && ok || bad "bench-resize json p50"

# Bad inputs and arguments: exit 2, one line, no output.
for f in empty.jpg text.jpg truncated.jpg huge_dims.jpg truncated.png huge_dims.png image.gif zero_width.png; do
  expect_fail "$T/o.png" "$f" -- "$V" resize "$D/bad/$f" "$T/o.png" --size 10x10
done
expect_fail "$T/o.png" "cannot open" -- "$V" resize "$D/bad/missing.jpg" "$T/o.png" --size 10x10
expect_fail "$T/o.png" "size" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size 0x10
expect_fail "$T/o.png" "size" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size abc
expect_fail "$T/o.png" "exactly one" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png"
expect_fail "$T/o.png" "at most one" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size 5x5 --gray --rgb
expect_fail "$T/o.png" "filter" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size 5x5 --filter bogus
expect_fail "$T/o.png" "area" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size 5x5 --compat pil --filter area
expect_fail "$T/o.bmp" "png or .npy" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.bmp" --size 5x5
expect_fail "$T/o.png" "exceeds the limit" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --size 5x5 --max-pixels 1000
expect_fail "$T/o.npy" "preset" -- "$V" preprocess "$D/images/squirrel_cls.jpg" "$T/o.npy" --preset nope
expect_fail "$T/o.npy" "truncated" -- "$V" preprocess "$D/bad/truncated.jpg" "$T/o.npy" --preset torchvision
expect_fail "" "k" -- "$V" bench-resize "$D/images/squirrel_cls.jpg" --k 0
expect_fail "" "unknown option '--nonsense' for 'resize'" -- "$V" resize --nonsense
expect_fail "$T/o.png" "did you mean --size?" -- "$V" resize "$D/images/squirrel_cls.jpg" "$T/o.png" --sise 5x5

# First contact: no arguments lists every command, one per line; a mistyped
# command or built-in network name is named, with the nearest one.
"$V" >"$T/usage" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "^usage: vinfer COMMAND" "$T/usage" && ok || bad "vinfer alone: exit $rc, $(head -1 "$T/usage")"
for c in classify bench info profile devices resize preprocess bench-resize bench-preprocess; do
  grep -q "^  $c  " "$T/usage" && ok || bad "usage lacks $c"
done
expect_fail "" "unknown command 'classfy' (did you mean classify?)" -- "$V" classfy x.jpg
expect_fail "" "'densenet12' is neither a file nor a built-in network (did you mean densenet121?)" -- "$V" classify densenet12 "$D/images/squirrel_cls.jpg"

# An existing output is replaced only by a complete new one.
cp "$T/a.png" "$T/keep.png"
expect_fail "" "truncated" -- "$V" resize "$D/bad/truncated.jpg" "$T/keep.png" --size 10x10
cmp -s "$T/a.png" "$T/keep.png" && ok || bad "failed run modified an existing output"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
