#!/usr/bin/env bash
# Converts about MiB mebibytes (default 1024) of generated changelog per
# format with cdcetl (1 and 2 workers) and with DuckDB (1 and 2 threads),
# checks that both wrote the same rows (counts and sums per row kind), and
# prints a table: MB/s of input, rows/s, peak RSS, output size, the
# cdcetl/DuckDB ratio, and a bare jsonparser walk as the parse floor. Each
# configuration runs RUNS times (default 3), interleaved; the best time is
# reported (the machines here are shared and vary by tens of percent).
#
#   [RUNS=3] benchmarks/run.sh [MiB]        (from anywhere; needs /usr/bin/time)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-1024}"
runs="${RUNS:-3}"
declare -A size
dir="${BENCH_DIR:-/dev/shm/cdcetl-bench}"
mkdir -p "$dir"
trap 'rm -rf "$dir"/out-*' EXIT

(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
(cd "$here" && go build -o "$dir/floor" ./floor && go build -o "$dir/duckpeer" ./duckpeer)

# measure NAME CMD... : prints "seconds peakKB" of one run
measure() {
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/err.txt" || { cat "$dir/err.txt" >&2; exit 1; }
  cat "$dir/time.txt"
}

printf '%-14s %-10s %7s %9s %12s %10s %10s %8s\n' format system threads MB/s rows/s peakRSS output ratio
for f in canal-json maxwell-json ogg-json debezium-json; do
  in="$dir/$f.jsonl"
  [ -s "$in" ] || "$dir/gen" -format "$f" -mb "$mib" > "$in"
  bytes=$(stat -c %s "$in")
  schema="$("$dir/gen" -format "$f" -schema)"
  # Every configuration runs $runs times, interleaved, so a slow phase of a
  # shared machine hits all of them alike; the best time and the largest
  # RSS are kept.
  declare -A secs rss
  for cfg in floor-1 cdcetl-1 cdcetl-2 duckdb-1 duckdb-2; do secs[$cfg]=999999; rss[$cfg]=0; done
  for r in $(seq "$runs"); do
    for cfg in floor-1 cdcetl-1 cdcetl-2 duckdb-1 duckdb-2; do
      sys=${cfg%-*} t=${cfg#*-}
      out="$dir/out-$cfg"
      rm -rf "$out"; mkdir -p "$out"
      case $sys in
        floor) read -r s kb < <(measure "$dir/floor" "$in") ;;
        cdcetl) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in") ;;
        duckdb) read -r s kb < <(measure "$dir/duckpeer" convert "$f" "$in" "$out/duck.parquet" "$t") ;;
      esac
      if (( $(echo "$s < ${secs[$cfg]}" | bc) )); then secs[$cfg]=$s; fi
      (( kb > rss[$cfg] )) && rss[$cfg]=$kb
      if [ "$r" = 1 ] && [ "$sys" != floor ]; then
        pq="$out/$f.jsonl.parquet"; [ "$sys" = duckdb ] && pq="$out/duck.parquet"
        "$dir/duckpeer" verify "$pq" > "$dir/verify-$cfg.txt"
        size[$cfg]=$(stat -c %s "$pq")
      fi
    done
  done
  rows=$(awk -F'rows=' '{split($2,a," "); n+=a[1]} END {print n}' "$dir/verify-cdcetl-1.txt")
  for cfg in floor-1 cdcetl-1 cdcetl-2 duckdb-1 duckdb-2; do
    sys=${cfg%-*} t=${cfg#*-}
    s=${secs[$cfg]}
    mb=$(echo "$bytes/$s/1000000" | bc -l)
    if [ "$sys" = floor ]; then
      printf '%-14s %-10s %7s %9.1f %12s %8dMiB %10s %8s\n' "$f" jsonparser 1 "$mb" - $((rss[$cfg]/1024)) - -
      continue
    fi
    ratio=-
    if [ "$sys" = duckdb ]; then ratio=$(printf '%.2f' "$(echo "${secs[duckdb-$t]}/${secs[cdcetl-$t]}" | bc -l)"); fi
    printf '%-14s %-10s %7s %9.1f %12.0f %8dMiB %8dMiB %8s\n' "$f" "$sys" "$t" "$mb" "$(echo "$rows/$s" | bc -l)" $((rss[$cfg]/1024)) $(( ${size[$cfg]}/1048576 )) "$ratio"
  done
  for v in cdcetl-2 duckdb-1 duckdb-2; do
    cmp -s "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt" || { echo "$f: $v wrote different rows:"; cat "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt"; exit 1; }
  done
done
