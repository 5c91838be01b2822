#!/usr/bin/env bash
# What the target of half the parse floor asks of each part, per shape and
# format, measured on this host in one pass: the simdjson floor of a file
# (../shared/floor/run.sh), a one-worker conversion of it (pinned to the
# floor's core), reading it (cat, pinned), the process's start (the same
# conversion of the file's first line), decoding alone into Arrow
# (BenchmarkDecodeShape) and writing alone to snappy Parquet
# (BenchmarkParquetWriter), each the best of RUNS (default 3). From these
# it prints two columns:
#
#   need dec/floor  the decoding speed, over the floor's, that would put
#                   the conversion at half the floor with today's writer,
#                   start and reading (the budget is twice the floor's
#                   time); "inf" when those alone take the budget
#   need wr/now     how much faster the writer would have to be were
#                   decoding as fast as the floor itself; "inf" when start
#                   and reading leave it no time
#
# Decoding does all the floor does (validate, find and unescape every
# value, parse every number) and converts and stores each value besides,
# so a "need dec/floor" above 1 asks for a decoder faster than simdjson.
# The in-process benchmarks leave out what a whole run adds (the
# collector, fresh memory, the pipeline), so both columns are the least
# the target asks.
#
# The generated inputs stay in BENCH_DIR (default /dev/shm/cdcetl-bound)
# for the next pass.
#
#   [RUNS=3] [SHAPES=...] [FORMATS=...] benchmarks/bound.sh [MiB]   (default 128)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-128}"
runs="${RUNS:-3}"
floor="$root/../shared/floor/run.sh"
if [ ! -f "$floor" ]; then
  echo "bound: needs the parse floor at $floor (../shared beside the project)" >&2
  exit 1
fi
command -v taskset >/dev/null || { echo "bound: needs taskset (util-linux)" >&2; exit 1; }
dir="${BENCH_DIR:-/dev/shm/cdcetl-bound}"
mkdir -p "$dir"
trap 'rm -rf "$dir"/out "$dir"/one.jsonl' EXIT
(cd "$root" && go build -o "$dir/cdcetl" ./cmd/cdcetl && go build -o "$dir/gen" ./internal/cdcgen/gen)

# The in-process parts, pinned like the rest, built with the profile the
# command is built with (default.pgo: 3.5-5% faster code).
(cd "$root" && taskset -c 0 go test -pgo="$root/cmd/cdcetl/default.pgo" -run '^$' -bench 'DecodeShape' -count "$runs" ./decode) > "$dir/decode.txt"
(cd "$root" && taskset -c 0 go test -pgo="$root/cmd/cdcetl/default.pgo" -run '^$' -bench 'ParquetWriter' -count "$runs" ./pipeline) > "$dir/write.txt"

now() { date +%s.%N; }
: > "$dir/runs.txt"
for shape in ${SHAPES:-products envelope wide}; do
  for f in ${FORMATS:-canal maxwell ogg debezium}; do
    in="$dir/$shape-$f-$mib.jsonl"
    [ -s "$in" ] || "$dir/gen" -format "$f-json" -shape "$shape" -mb "$mib" > "$in"
    schema=$("$dir/gen" -format "$f-json" -shape "$shape" -schema)
    head -1 "$in" > "$dir/one.jsonl"
    fl=0 conv=999 rd=999 st=999
    for _ in $(seq "$runs"); do
      # Memory freed more than about two seconds earlier has gone back to
      # the host: every run starts after the same pause.
      sleep 2.5
      m=$(bash "$floor" "$in" | sed -n 's/.* \([0-9.]*\) MB\/s.*/\1/p')
      fl=$(python3 -c "print(max($fl, $m))")
      rm -rf "$dir/out"
      sleep 2.5
      t0=$(now)
      taskset -c 0 "$dir/cdcetl" convert --quiet --workers 1 --format "$f-json" --schema "$schema" -o "$dir/out" "$in" > /dev/null
      t1=$(now)
      taskset -c 0 cat "$in" > /dev/null
      t2=$(now)
      rm -rf "$dir/out"
      taskset -c 0 "$dir/cdcetl" convert --quiet --workers 1 --format "$f-json" --schema "$schema" -o "$dir/out" "$dir/one.jsonl" > /dev/null
      t3=$(now)
      read -r conv rd st < <(python3 -c "print(min($conv, $t1-$t0), min($rd, $t2-$t1), min($st, $t3-$t2))")
    done
    echo "$shape $f $(stat -c %s "$in") $fl $conv $rd $st" >> "$dir/runs.txt"
  done
done

python3 - "$dir" <<'EOF'
import collections, re, sys
d = sys.argv[1]
def best(name):
    b = collections.defaultdict(float)
    for line in open(f"{d}/{name}"):
        m = re.match(r"Benchmark\w+/(?:(\w+)/)?([\w-]+?)-json(?:-\d+)?\s+\d+\s+[\d.]+ ns/op\s+([\d.]+) MB/s", line)
        if m:
            k = (m.group(1) or "products", m.group(2))
            b[k] = max(b[k], float(m.group(3)))
    return b
dec, wr = best("decode.txt"), best("write.txt")
print("%-9s %-9s %7s %7s %6s %7s %7s %6s %6s %15s %12s" % ("shape", "format", "floor", "cdcetl", "ratio", "decode", "write", "start", "read", "need dec/floor", "need wr/now"))
for line in open(f"{d}/runs.txt"):
    shape, f, n, fl, conv, rd, st = line.split()
    mb, fl, conv, rd, st = int(n) / 1e6, float(fl), float(conv), float(rd), float(st)
    budget = 2 * mb / fl
    D, W = dec.get((shape, f), 0), wr.get((shape, f), 0)
    left = budget - mb / W - st - rd if W else 0
    need_dec = "%.2f" % (mb / left / fl) if left > 0 else "inf"
    left = budget - mb / fl - st - rd
    need_wr = "%.2f" % (mb / left / W) if left > 0 and W else "inf"
    print("%-9s %-9s %7.0f %7.0f %6.2f %7.0f %7.0f %6.3f %6.3f %15s %12s" % (shape, f, fl, mb / conv, mb / conv / fl, D, W, st, rd, need_dec, need_wr))
print("MB/s of input; start and read in seconds; decode and write are the in-process benchmarks (8 and 16 MiB).")
EOF
