#!/usr/bin/env bash
# Regenerates cmd/cdcetl/default.pgo, the profile `go build` uses for
# profile-guided optimization of the cdcetl binary: CPU profiles of
# one-worker conversions to Parquet of MiB (default 256) of each generated
# format in each data shape (products, envelope, wide; the first also
# routed without a schema over 20 tables), merged. Rerun it after changing the hot path
# (decoders, builders, the Parquet writer): a stale profile only loses the
# gain, it never changes what the binary does.
#
#   benchmarks/pgo.sh [MiB]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-256}"
dir="${BENCH_DIR:-/dev/shm/cdcetl-pgo}"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && go build -pgo=off -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
for f in canal-json maxwell-json ogg-json debezium-json; do
  for shape in products envelope wide; do
    "$dir/gen" -format "$f" -shape "$shape" -mb "$mib" > "$dir/in.jsonl"
    schema="$("$dir/gen" -format "$f" -shape "$shape" -schema)"
    rm -rf "$dir/out"
    "$dir/cdcetl" convert --quiet --format "$f" --schema "$schema" --workers 1 \
      --cpuprofile "$dir/$f-$shape.prof" -o "$dir/out" "$dir/in.jsonl"
  done
  "$dir/gen" -format "$f" -mb "$mib" -tables 20 > "$dir/in.jsonl"
  rm -rf "$dir/out"
  "$dir/cdcetl" convert --quiet --workers 1 --cpuprofile "$dir/$f-routed.prof" -o "$dir/out" "$dir/in.jsonl"
done
(cd "$root" && go tool pprof -proto "$dir"/*.prof > cmd/cdcetl/default.pgo)
echo "wrote $root/cmd/cdcetl/default.pgo"
