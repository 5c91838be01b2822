#!/usr/bin/env bash
# Peak RSS of cdcetl at 2 workers for inputs of each size given in MiB
# (default 1024 and 5120), in every mode: to Parquet with a schema, under
# producer semantics, without a schema (one table, and 20 tables routed:
# interleaved at random, and in runs of 50,000 messages a table, as a
# snapshot or a sorted export has them), to Iceberg; and with a schema on
# the envelope and wide shapes. Memory must not grow with the input.
#
#   [MODES="schema producer noschema tables20 runs20 iceberg envelope wide"] benchmarks/rss.sh [MiB...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
dir="${BENCH_DIR:-/dev/shm/cdcetl-rss}"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1024 5120)
f=${FORMAT:-canal-json}
printf '%-10s %-10s %9s %10s\n' input mode seconds peakRSS
for mib in "${sizes[@]}"; do
  for mode in ${MODES:-schema producer noschema tables20 runs20 iceberg envelope wide}; do
    shape=products tables=1 run=0
    case $mode in envelope|wide) shape=$mode ;; tables20) tables=20 ;; runs20) tables=20 run=50000 ;; esac
    want="$shape-$tables-$run-$mib"
    if [ "$(cat "$dir/in.what" 2>/dev/null)" != "$want" ]; then
      "$dir/gen" -format $f -shape $shape -tables $tables -run $run -mb "$mib" > "$dir/in.jsonl"
      echo "$want" > "$dir/in.what"
    fi
    schema="$("$dir/gen" -format $f -shape $shape -schema)"
    case $mode in
      schema|envelope|wide) args=(--format $f --schema "$schema") ;;
      producer) args=(--semantics producer --format $f --schema "$schema") ;;
      noschema|tables20|runs20) args=() ;;
      iceberg) args=(--to iceberg) ;;
    esac
    rm -rf "$dir/out"
    /usr/bin/time -f '%e %M' -o "$dir/time.txt" "$dir/cdcetl" convert --quiet "${args[@]}" --workers 2 -o "$dir/out" "$dir/in.jsonl"
    read -r s kb < "$dir/time.txt"
    printf '%-10s %-10s %9s %8dMiB\n' "${mib}MiB" "$mode" "$s" $((kb/1024))
  done
  rm -f "$dir/in.jsonl" "$dir/in.what"
done
