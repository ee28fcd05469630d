#!/usr/bin/env bash
# vinfer's own Winograd F(4,3) against direct convolution where oneDNN 2.6 has
# no Winograd: oneDNN limited to AVX2 (ONEDNN_MAX_CPU_ISA=AVX2), as on the
# 2-core AVX2 machines, so this runs on AVX-512 machines too.
# Rounds interleave the two settings; each figure is the median of the rounds'
# p50s. Models: ONNX files exported by tests/models/export_models.py.
#   bash bench/winograd_ab.sh MODEL_DIR [ROUNDS] [LOOPS] [THREADS] [MODELS...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1 rounds=${2:-3} loops=${3:-15} threads=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(densenet121 resnet50 vgg19)
tmp=$(mktemp)
for r in $(seq "$rounds"); do
  for m in "${models[@]}"; do
    for mode in direct winograd; do
      env=(ONEDNN_MAX_CPU_ISA=AVX2)
      [ "$mode" = direct ] && env+=(VINFER_WINOGRAD=onednn)
      p50=$(env "${env[@]}" ./build/vinfer bench "$dir/$m.onnx" --forward-only --loops "$loops" --warmup 3 --threads "$threads" 2>/dev/null |
            awk '/p50/ {print $2}')
      echo "$m $mode $p50" >> "$tmp"
    done
  done
done
echo "Forward pass p50 ms, oneDNN limited to AVX2, $threads threads, median of $rounds interleaved rounds x $loops loops"
echo
echo "| model | direct 3x3 (oneDNN) | vinfer Winograd F(4,3) | ratio |"
echo "|---|---:|---:|---:|"
for m in "${models[@]}"; do
  d=$(awk -v m="$m" '$1==m && $2=="direct" {print $3}' "$tmp" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  w=$(awk -v m="$m" '$1==m && $2=="winograd" {print $3}' "$tmp" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  awk -v m="$m" -v d="$d" -v w="$w" 'BEGIN {printf "| %s | %.1f | %.1f | %.2f |\n", m, d, w, w / d}'
done
rm -f "$tmp"
