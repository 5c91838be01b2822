#!/usr/bin/env bash
# Throughput per shard: one archive of FILES inputs (MiB in all, default
# 512) converted by n shard processes at once (n = 1, 2; --workers 1
# each, so n shards use n cores), into a local directory and, when an S3
# server is given (CDCETL_TEST_S3, with AWS_* credentials), from a bucket
# into a bucket. Prints each run's wall time, MB/s in all and per shard.
#   benchmarks/shards.sh [MiB] [FILES]
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-512}
files=${2:-32}
work=$(mktemp -d /dev/shm/cdcetl-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/cdcetl" ./cmd/cdcetl
go run ./internal/cdcgen/gen -format debezium-json -mb "$mib" >"$work/all.json"
schema=$(go run ./internal/cdcgen/gen -format debezium-json -schema)
mkdir -p "$work/in"
(cd "$work/in" && split -d -a 3 -n "l/$files" --additional-suffix=.json "$work/all.json" part-)
rm "$work/all.json"
bytes=$(du -sb "$work/in" | cut -f1)
run() { # label n out inputs...
  local label=$1 n=$2 out=$3; shift 3
  local t0 t1
  t0=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    CDCETL_SHARD="$i/$n" "$work/cdcetl" convert --quiet --format debezium-json --schema "$schema" --workers 1 -o "$out" "$@" &
  done
  wait
  t1=$(date +%s.%N)
  awk -v l="$label" -v n="$n" -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN {
    s = z - a; printf "%-22s shards %d  %6.2f s  %7.1f MB/s in all  %7.1f MB/s per shard\n", l, n, s, b / s / 1e6, b / s / 1e6 / n }'
}
echo "input: $files files, $((bytes / 1048576)) MiB, debezium-json products; $(nproc) cores"
for n in 1 2; do
  run "local -> local" "$n" "$work/out-$n" "$work/in"
done
if [ -n "${CDCETL_TEST_S3:-}" ]; then
  ep="endpoint=$CDCETL_TEST_S3&use_path_style=true&region=us-east-1"
  tag=$(date +%s)
  # The archive goes into the bucket through the server's posix root
  # (CDCETL_S3_ROOT, e.g. versitygw's directory).
  if [ -n "${CDCETL_S3_ROOT:-}" ]; then
    mkdir -p "$CDCETL_S3_ROOT/archive/bench-$tag"
    cp "$work/in"/* "$CDCETL_S3_ROOT/archive/bench-$tag/"
    for n in 1 2; do
      run "s3 -> s3 (loopback)" "$n" "s3://lake/bench-$tag-$n/?$ep" "s3://archive/bench-$tag/?$ep"
    done
    rm -rf "$CDCETL_S3_ROOT/archive/bench-$tag" "$CDCETL_S3_ROOT/lake/bench-$tag-"*
  fi
fi
