#!/usr/bin/env bash
# Where a conversion's time goes, per shape and format: one-worker runs
# of MiB (default 256) of generated data with --cpuprofile, the profile's
# samples split into decoding (JSON to Arrow, in the workers), writing
# (Parquet encoding and compression), the garbage collector, and the
# rest (reading, chunking, the runtime).
#
#   [SHAPES=...] [FORMATS=...] benchmarks/profile.sh [MiB]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-256}"
dir="${BENCH_DIR:-/dev/shm/cdcetl-bench}"
mkdir -p "$dir"
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)
printf '%-9s %-14s %7s %8s %8s %8s %8s %8s\n' shape format MB/s decode write gc other snappy
for shape in ${SHAPES:-products envelope wide}; do
  for f in ${FORMATS:-canal-json maxwell-json ogg-json debezium-json}; do
    in="$dir/prof-$shape-$f-$mib.jsonl"
    [ -s "$in" ] || "$dir/gen" -format "$f" -shape "$shape" -mb "$mib" > "$in"
    schema="$("$dir/gen" -format "$f" -shape "$shape" -schema)"
    rm -rf "$dir/out-prof"
    start=$(date +%s.%N)
    "$dir/cdcetl" convert --quiet --workers 1 --format "$f" --schema "$schema" --cpuprofile "$dir/cpu.prof" -o "$dir/out-prof" "$in"
    end=$(date +%s.%N)
    top=$(go tool pprof -top -cum -nodecount=100000 "$dir/cdcetl" "$dir/cpu.prof" 2>/dev/null)
    total=$(echo "$top" | sed -n 's/.*Total samples = \([0-9.]*\)\(m*s\).*/\1 \2/p')
    share() { # share FUNCTION-REGEX: its cumulative seconds over the total
      echo "$top" | awk -v re="$1" -v total="$total" '
        BEGIN { split(total, t, " "); tot = t[1]; if (t[2] == "ms") tot /= 1000 }
        $6 ~ re { v = $4; if (v ~ /ms$/) { sub(/ms$/, "", v); v /= 1000 } else sub(/s$/, "", v); printf "%.0f%%", 100 * v / tot; exit }'
    }
    dec=$(share 'pipeline\.\(\*run\)\.worker$'); wr=$(share 'pipeline\.\(\*run\)\.write$'); gc=$(share 'runtime\.gcBgMarkWorker$'); sn=$(share 's2\.EncodeSnappy$')
    mb=$(echo "$(stat -c %s "$in") / ($end - $start) / 1000000" | bc -l)
    other=$(python3 -c "print('%d%%' % (100 - sum(int(x.rstrip('%') or 0) for x in '${dec:-0%} ${wr:-0%} ${gc:-0%}'.split())))")
    printf '%-9s %-14s %7.0f %8s %8s %8s %8s %8s\n' "$shape" "$f" "$mb" "${dec:--}" "${wr:--}" "${gc:--}" "$other" "${sn:--}"
  done
done
