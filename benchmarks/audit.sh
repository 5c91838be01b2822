#!/usr/bin/env bash
# 'cdcetl audit' against 'cdcetl convert --to print' of the same archive:
# MiB (default 1024) of each format's envelope shape (every producer field;
# positions, Maxwell xids, Debezium source blocks) and of a Maxwell stream
# with GTIDs and whole transactions (internal/cdcgen/archive), each run in
# turns, best of RUNS (default 3): seconds, peak RSS, and audit's speed
# over print's. Print is given the schema; audit needs none.
#
#   [RUNS=3] [FORMATS=...] benchmarks/audit.sh [MiB]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-1024}"
dir="${BENCH_DIR:-/dev/shm/cdcetl-bench}"
mkdir -p "$dir"
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen && go build -o "$dir/archive" ./internal/cdcgen/archive)
best() { sort -n | head -1; }
printf '%-22s %10s %10s %10s %10s %8s\n' input audit_s print_s audit_MiB print_MiB ratio
for f in ${FORMATS:-canal-json maxwell-json ogg-json debezium-json stream}; do
  if [ "$f" = stream ]; then
    in="$dir/stream-$mib/stream.jsonl"
    [ -s "$in" ] || "$dir/archive" -o "$dir/stream-$mib" -mb "$mib"
    print=(convert --format maxwell-json --to print "$in")
  else
    in="$dir/env-$f-$mib.jsonl"
    [ -s "$in" ] || "$dir/gen" -format "$f" -shape envelope -mb "$mib" > "$in"
    print=(convert --format "$f" --schema "$("$dir/gen" -format "$f" -shape envelope -schema)" --to print "$in")
  fi
  rm -f "$dir/t.audit" "$dir/t.print"
  for _ in $(seq "${RUNS:-3}"); do
    /usr/bin/time -f "%e %M" -a -o "$dir/t.audit" "$dir/cdcetl" audit "$in" > /dev/null 2>&1 || true
    /usr/bin/time -f "%e %M" -a -o "$dir/t.print" "$dir/cdcetl" "${print[@]}" > /dev/null 2>&1
  done
  a=$(awk '/^[0-9]/ {print $1}' "$dir/t.audit" | best); p=$(awk '{print $1}' "$dir/t.print" | best)
  am=$(awk '/^[0-9]/ {print $2}' "$dir/t.audit" | sort -n | tail -1); pm=$(awk '{print $2}' "$dir/t.print" | sort -n | tail -1)
  printf '%-22s %10s %10s %10d %10d %8.2f\n' "$f" "$a" "$p" $((am / 1024)) $((pm / 1024)) "$(echo "$p / $a" | bc -l)"
done
