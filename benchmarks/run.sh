#!/usr/bin/env bash
# Converts about MiB mebibytes (default 1024) of generated changelog per
# format with cdcetl (1 and 2 workers) and with DuckDB (1 and 2 threads),
# checks that both wrote the same rows (counts and sums per row kind), and
# prints a table: MB/s of input, rows/s, peak RSS, output size, the
# cdcetl/DuckDB ratio, and a bare jsonparser walk as the parse floor.
#
#   benchmarks/run.sh [MiB]        (from anywhere; needs /usr/bin/time)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-1024}"
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
  read -r s kb < <(measure "$dir/floor" "$in")
  printf '%-14s %-10s %7s %9.1f %12s %8dMiB %10s %8s\n' "$f" jsonparser 1 "$(echo "$bytes/$s/1000000" | bc -l)" - $((kb/1024)) - -
  declare -A mbs
  for sys in cdcetl duckdb; do
    for t in 1 2; do
      out="$dir/out-$sys-$t"
      rm -rf "$out"; mkdir -p "$out"
      if [ "$sys" = cdcetl ]; then
        read -r s kb < <(measure "$dir/cdcetl" convert --quiet --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in")
        pq="$out/$f.jsonl.parquet"
      else
        pq="$out/duck.parquet"
        read -r s kb < <(measure "$dir/duckpeer" convert "$f" "$in" "$pq" "$t")
      fi
      "$dir/duckpeer" verify "$pq" > "$dir/verify-$sys-$t.txt"
      rows=$(awk -F'rows=' '{split($2,a," "); n+=a[1]} END {print n}' "$dir/verify-$sys-$t.txt")
      mb=$(echo "$bytes/$s/1000000" | bc -l)
      mbs[$sys$t]=$mb
      ratio=-
      if [ "$sys" = duckdb ]; then ratio=$(printf '%.2f' "$(echo "${mbs[cdcetl$t]}/$mb" | bc -l)"); fi
      printf '%-14s %-10s %7s %9.1f %12.0f %8dMiB %8dMiB %8s\n' "$f" "$sys" "$t" "$mb" "$(echo "$rows/$s" | bc -l)" $((kb/1024)) $(( $(stat -c %s "$pq")/1048576 )) "$ratio"
    done
  done
  for v in cdcetl-2 duckdb-1 duckdb-2; do
    cmp -s "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt" || { echo "$f: $v wrote different rows:"; cat "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt"; exit 1; }
  done
done
