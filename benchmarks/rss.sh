#!/usr/bin/env bash
# Peak RSS of cdcetl (2 workers, to Parquet) for inputs of 1 GiB and 5 GiB
# (or the sizes given, in MiB), side by side: memory must not grow with the
# input.
#
#   benchmarks/rss.sh [MiB...]      (default: 1024 5120)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${BENCH_DIR:-/dev/shm/cdcetl-rss}"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 5120)
f=canal-json
schema="$("$dir/gen" -format $f -schema)"
printf '%-10s %-8s %9s %10s\n' input workers seconds peakRSS
for mib in "${sizes[@]}"; do
  "$dir/gen" -format $f -mb "$mib" > "$dir/in.jsonl"
  rm -rf "$dir/out"
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$dir/cdcetl" convert --quiet --format $f --schema "$schema" --workers 2 -o "$dir/out" "$dir/in.jsonl"
  read -r s kb < "$dir/time.txt"
  printf '%-10s %-8s %9s %8dMiB\n' "${mib}MiB" 2 "$s" $((kb/1024))
  rm -f "$dir/in.jsonl"
done
