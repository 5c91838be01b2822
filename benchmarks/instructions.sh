#!/usr/bin/env bash
# Instructions a one-worker conversion executes (valgrind's callgrind),
# per part: decode (the decoders and javatext), arrowconv, writer (with
# parquet-go's encoders), snappy, gc (the collector and its write
# barriers), runtime (the rest of the Go runtime: memmove, the scheduler),
# and "work", the sum of the first four. Unlike seconds on a shared VM,
# these counts repeat to a few tenths of a percent between runs of one
# binary, so they judge a change of a few percent; gc and runtime vary
# more (the collector's timing, the scheduler's spinning).
#
# With one revision, it counts that build; with two, both, and the ratio
# of their work. A revision is a git commit (built with its own
# default.pgo) or "." for the working tree.
#
#   [SHAPES="products envelope wide"] [FORMATS="canal maxwell ogg debezium"] \
#     [MODE=schema|producer|noschema] benchmarks/instructions.sh [MiB] [REV [REV]]
#
# MODE picks the conversion: the explicit schema (the default), the same
# schema under producer semantics, or no schema (detected, inferred,
# routed, lineage columns; the inference's value checks count as decode).
#
# Two settings make callgrind run the Go runtime here: GODEBUG
# cpu.rdtscp=off (valgrind 3.19 does not take RDTSCP) and
# asyncpreemptoff=1 (its preemption signals trip an assertion in callgrind).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mib="${1:-16}"
shift || true
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(.)
command -v valgrind >/dev/null || (apt-get install -y -q valgrind >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q valgrind >/dev/null 2>&1; }) ||
  { echo "instructions: valgrind is missing and cannot be installed" >&2; exit 1; }
dir="${BENCH_DIR:-/dev/shm/cdcetl-instr}"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/gen" ./internal/cdcgen/gen)
for i in "${!revs[@]}"; do
  if [ "${revs[$i]}" = . ]; then
    (cd "$root" && go build -o "$dir/cdcetl-$i" ./cmd/cdcetl)
  else
    rm -rf "$dir/src"
    git -C "$root" worktree add -q --detach "$dir/src" "${revs[$i]}"
    (cd "$dir/src" && go build -o "$dir/cdcetl-$i" ./cmd/cdcetl)
    git -C "$root" worktree remove --force "$dir/src"
  fi
done
# count BIN FILE FORMAT SCHEMA: one line of "part=instructions" pairs.
count() {
  rm -rf "$dir/out"
  local modeargs=(--format "$3" --schema "$4")
  case "${MODE:-schema}" in
    schema) ;;
    producer) modeargs+=(--semantics producer) ;;
    noschema) modeargs=() ;;
    *) echo "instructions: MODE is schema, producer or noschema" >&2; exit 2 ;;
  esac
  GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
    "$1" convert --quiet "${modeargs[@]}" --workers 1 -o "$dir/out" "$2" > "$dir/vg.log" 2>&1 ||
    { echo "instructions: callgrind failed:" >&2; tail -5 "$dir/vg.log" >&2; exit 1; }
  callgrind_annotate --auto=no --threshold=100 "$dir/cg.out" | python3 -c '
import re, sys
parts = [("decode", ("cdcetl/decode.", "javatext", "cdcetl/infer.")), ("arrowconv", ("cdcetl/arrowconv.",)),
         ("writer", ("cdcetl/writer.", "parquet-go")), ("snappy", ("compress/s2",)),
         ("gc", ("mgc", "mwbbuf", "mbitmap", "findObject", "gcWriteBarrier", "mbarrier")),
         ("runtime", ("runtime.", "/runtime/", "bytealg"))]
n = {k: 0 for k, _ in parts}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s+\(.*?\)\s+(\S.*)$", line)
    if not m or "PROGRAM TOTALS" in m.group(2):
        continue
    for k, pats in parts:
        if any(p in m.group(2) for p in pats):
            n[k] += int(m.group(1).replace(",", ""))
            break
n["work"] = n["decode"] + n["arrowconv"] + n["writer"] + n["snappy"]
print(" ".join("%s=%d" % kv for kv in n.items()))
'
}
printf '%-9s %-9s %-4s %9s %9s %9s %9s %9s %9s %9s\n' shape format rev decode arrowconv writer snappy gc runtime work
for shape in ${SHAPES:-products envelope wide}; do
  for f in ${FORMATS:-canal maxwell ogg debezium}; do
    "$dir/gen" -format "$f-json" -shape "$shape" -mb "$mib" > "$dir/in.jsonl"
    schema="$("$dir/gen" -format "$f-json" -shape "$shape" -schema)"
    works=()
    for i in "${!revs[@]}"; do
      line="$(count "$dir/cdcetl-$i" "$dir/in.jsonl" "$f-json" "$schema")"
      eval "$(echo "$line" | tr ' ' '\n' | sed 's/^/c_/')"
      printf '%-9s %-9s %-4s %8.0fM %8.0fM %8.0fM %8.0fM %8.0fM %8.0fM %8.0fM\n' "$shape" "$f" "$i" \
        "$(bc -l <<< "$c_decode/1000000")" "$(bc -l <<< "$c_arrowconv/1000000")" "$(bc -l <<< "$c_writer/1000000")" \
        "$(bc -l <<< "$c_snappy/1000000")" "$(bc -l <<< "$c_gc/1000000")" "$(bc -l <<< "$c_runtime/1000000")" "$(bc -l <<< "$c_work/1000000")"
      works+=("$c_work")
    done
    if [ ${#works[@]} -eq 2 ]; then
      printf '%-9s %-9s work 1/0: %.3f\n' "$shape" "$f" "$(bc -l <<< "${works[1]}/${works[0]}")"
    fi
  done
done
