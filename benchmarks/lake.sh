#!/usr/bin/env bash
# An archive shaped as real ones are, loaded into Iceberg: one generated
# Canal change stream of MiB mebibytes, cut in order into INPUTS files
# (as hourly files are), loaded in NIGHTS runs (each the next slice of
# the inputs), changelog and upsert. Prints each mode's total load time,
# the peak RSS of its largest run, and the table's data and delete files
# after the last night. BenchmarkLakeArchive (pipeline) measures the
# scan side.
#
#   benchmarks/lake.sh [MiB INPUTS NIGHTS]     (default 60 480 8)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib=${1:-60} inputs=${2:-480} nights=${3:-8}
dir="${BENCH_DIR:-/dev/shm/cdcetl-lake}"
rm -rf "$dir" && mkdir -p "$dir/in"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
"$dir/gen" -format canal-json -mb "$mib" > "$dir/all.jsonl"
(cd "$dir/in" && split -n l/"$inputs" -a 5 -d "$dir/all.jsonl" part- && for f in part-*; do mv "$f" "$f.json"; done)
mapfile -t files < <(ls "$dir/in"/*.json | sort)
printf '%-10s %7s %8s %10s %10s %12s\n' mode inputs seconds peakRSS datafiles deletefiles
for mode in changelog upsert; do
  rm -rf "$dir/wh"
  total=0 peak=0
  for ((n = 0; n < nights; n++)); do
    from=$((n * inputs / nights)) to=$(((n + 1) * inputs / nights))
    /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$dir/cdcetl" convert --quiet --to iceberg --table-mode $mode --workers 2 -o "$dir/wh" "${files[@]:from:to-from}"
    read -r s kb < "$dir/time.txt"
    total=$(echo "$total + $s" | bc) peak=$((kb > peak ? kb : peak))
  done
  data=$(find "$dir/wh" -path '*/data/*.parquet' | wc -l)
  dels=$(find "$dir/wh" -path '*/deletes/*' -type f | wc -l)
  printf '%-10s %7d %8s %8dMiB %10d %12d\n' $mode "$inputs" "$total" $((peak / 1024)) "$data" "$dels"
done
