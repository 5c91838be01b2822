#!/usr/bin/env bash
# Converts about MiB mebibytes (default 1024) of generated changelog per
# format with cdcetl (1 and 2 workers), with DuckDB and with Polars
# (nodejs-polars, polarspeer/; 1 and 2 threads; POLARS=0 leaves it out),
# checks that both wrote the same rows (counts and sums per row kind), and
# prints a table: MB/s of input, rows/s, peak RSS, output size, the
# cdcetl/DuckDB ratio, and a bare jsonparser walk; the "floor" column is
# each one-worker cdcetl row's speed over the physical parse floor of the
# same file (simdjson On-Demand touching every value on one core,
# ../shared/floor/run.sh, run in the same rounds; left out when ../shared
# is not there); the
# "producer" rows are cdcetl with --semantics producer (1 worker), their
# ratio the speed relative to Flink semantics; "noschema" is cdcetl with no
# --format and no --schema (detected, inferred, routed: one table), its
# ratio the speed relative to the explicit schema; "schema20" and
# "tables20" convert the same changelog spread over 20 tables, with one
# explicit schema (one output) and with none (routed, 20 outputs), the
# ratio of the latter relative to the former; "iceberg" is the explicit
# schema written as an Iceberg changelog table (--to iceberg, one
# worker), its ratio the speed relative to the Parquet files. Each
# configuration runs RUNS times (default 3), interleaved: MB/s is the best
# run, the ratio the median of each round's DuckDB time over cdcetl's (the
# machines here are shared and their speed drifts by tens of percent).
# SHAPES (default "products envelope wide") picks the data shapes of
# internal/cdcgen: products (lean envelopes, two metadata columns),
# envelope (full producer envelopes, every metadata column declared), wide
# (60 columns of mixed types, half NULL); the 20-table rows are for
# products only. FORMATS narrows the formats.
#
#   [RUNS=3] [SHAPES=...] [FORMATS=...] benchmarks/run.sh [MiB]   (needs /usr/bin/time)
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
# The Polars peer (nodejs-polars from npm, installed once into $dir).
polars=
if [ "${POLARS:-1}" = 1 ] && command -v npm >/dev/null; then
  mkdir -p "$dir/polars"
  cp "$here/polarspeer/package.json" "$here/polarspeer/peer.js" "$dir/polars/"
  if [ -d "$dir/polars/node_modules/nodejs-polars-linux-x64-gnu" ] || (cd "$dir/polars" && npm i --no-audit --no-fund >/dev/null 2>&1); then
    polars="$dir/polars/peer.js"
  else
    echo "npm could not install nodejs-polars: the Polars rows are left out" >&2
  fi
fi

# The simdjson parse floor, when the shared tools are beside the project.
simdfloor=
[ -f "$root/../shared/floor/run.sh" ] && simdfloor="$root/../shared/floor/run.sh"

# measure NAME CMD... : prints "seconds peakKB" of one run
measure() {
  /usr/bin/time -f '%e %M' -o "$dir/time.txt" "${pin[@]}" "$@" >/dev/null 2>"$dir/err.txt" || { cat "$dir/err.txt" >&2; exit 1; }
  cat "$dir/time.txt"
}

# median_ratio "A1 A2 .." "B1 B2 ..": the median of Ai/Bi, runs of the same
# round paired (they ran seconds apart, so the machine's phase cancels).
median_ratio() {
  python3 -c 'import sys,statistics; a=sys.argv[1].split(); b=sys.argv[2].split(); print("%.2f" % statistics.median(float(x)/float(y) for x,y in zip(a,b)))' "$1" "$2"
}

shapes="${SHAPES:-products envelope wide}"
formats="${FORMATS:-canal-json maxwell-json ogg-json debezium-json}"
printf '%-9s %-14s %-10s %7s %9s %12s %10s %10s %11s %6s\n' shape format system threads MB/s rows/s peakRSS output ratio floor
for shape in $shapes; do
configs="floor-1 cdcetl-1 cdcetl-2 producer-1 noschema-1 iceberg-1 duckdb-1 duckdb-2"
[ "$shape" = products ] && configs="floor-1 cdcetl-1 cdcetl-2 producer-1 noschema-1 iceberg-1 schema20-1 tables20-1 duckdb-1 duckdb-2"
[ -n "$polars" ] && configs="$configs polars-1 polars-2"
[ -n "$simdfloor" ] && configs="simdjson-1 $configs"
for f in $formats; do
  in="$dir/$f-$mib.jsonl"
  [ "$shape" = products ] || in="$dir/$shape-$f-$mib.jsonl"
  [ -s "$in" ] || "$dir/gen" -format "$f" -shape "$shape" -mb "$mib" > "$in"
  in20="$dir/$f-20-$mib.jsonl"
  [ "$shape" != products ] || [ -s "$in20" ] || "$dir/gen" -format "$f" -mb "$mib" -tables 20 > "$in20"
  bytes=$(stat -c %s "$in")
  schema="$("$dir/gen" -format "$f" -shape "$shape" -schema)"
  # Every configuration runs $runs times, interleaved, so a slow phase of a
  # shared machine hits all of them alike; the best time and the largest
  # RSS are kept.
  declare -A secs rss all
  for cfg in $configs; do secs[$cfg]=999999; rss[$cfg]=0; all[$cfg]=; done
  for r in $(seq "$runs"); do
    for cfg in $configs; do
      sys=${cfg%-*} t=${cfg#*-}
      # One-thread runs share the core the simdjson floor is pinned to:
      # the machine's cores differ in load from minute to minute.
      pin=()
      [ "$t" = 1 ] && [ -n "$simdfloor" ] && command -v taskset >/dev/null && pin=(taskset -c 0)
      out="$dir/out-$cfg"
      rm -rf "$out"; mkdir -p "$out"
      case $sys in
        floor) read -r s kb < <(measure "$dir/floor" "$in") ;;
        simdjson) # its own best of three over the file in memory, in MB/s
          mbs=$(bash "$simdfloor" "$in" | sed -n 's/.* bytes, \([0-9.]*\) MB\/s.*/\1/p')
          s=$(echo "$bytes/($mbs*1000000)" | bc -l) kb=0 ;;
        cdcetl) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in") ;;
        producer) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --semantics producer --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in") ;;
        noschema) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --workers "$t" -o "$out" "$in") ;;
        iceberg) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --to iceberg --table bench.t --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in") ;;
        schema20) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --format "$f" --schema "$schema" --workers "$t" -o "$out" "$in20") ;;
        tables20) read -r s kb < <(measure "$dir/cdcetl" convert --quiet --workers "$t" -o "$out" "$in20") ;;
        duckdb) read -r s kb < <(measure "$dir/duckpeer" convert "$f" "$in" "$out/duck.parquet" "$t" "$shape") ;;
        polars) read -r s kb < <(measure env POLARS_MAX_THREADS="$t" node "$polars" "$f" "$in" "$out/polars.parquet" "$shape") ;;
      esac
      if (( $(echo "$s < ${secs[$cfg]}" | bc) )); then secs[$cfg]=$s; fi
      all[$cfg]="${all[$cfg]:-} $s"
      (( kb > rss[$cfg] )) && rss[$cfg]=$kb
      if [ "$r" = 1 ] && [ "$sys" != floor ] && [ "$sys" != simdjson ]; then
        pq="$out/$(basename "$in").parquet"
        case $sys in
          duckdb) pq="$out/duck.parquet" ;;
          polars) pq="$out/polars.parquet" ;;
          iceberg) pq="$out/bench/t/data/*.parquet" ;;
          schema20) pq="$out/$(basename "$in20").parquet" ;;
          noschema|tables20) pq="$out/*/*/*.parquet" ;; # routed: a directory per table
        esac
        "$dir/duckpeer" verify "$pq" "$shape" > "$dir/verify-$cfg.txt"
        size[$cfg]=$(cat $pq | wc -c)
      fi
    done
  done
  for cfg in $configs; do
    sys=${cfg%-*} t=${cfg#*-}
    s=${secs[$cfg]}
    b=$bytes
    case $sys in schema20|tables20) b=$(stat -c %s "$in20") ;; esac
    mb=$(echo "$b/$s/1000000" | bc -l)
    case $sys in floor|simdjson) ;; *) rows=$(awk -F'rows=' '{split($2,a," "); n+=a[1]} END {print n}' "$dir/verify-$cfg.txt") ;; esac
    if [ "$sys" = floor ]; then
      printf '%-9s %-14s %-10s %7s %9.1f %12s %8dMiB %10s %11s %6s\n' "$shape" "$f" jsonparser 1 "$mb" - $((rss[$cfg]/1024)) - - -
      continue
    fi
    if [ "$sys" = simdjson ]; then
      printf '%-9s %-14s %-10s %7s %9.1f %12s %10s %10s %11s %6s\n' "$shape" "$f" simdjson 1 "$mb" - - - - -
      continue
    fi
    # floor: the one-worker row's speed over simdjson's, rounds paired.
    fl=-
    if [ -n "$simdfloor" ] && [ "$t" = 1 ] && [ "$sys" != duckdb ] && [ "$sys" != polars ]; then
      case $sys in schema20|tables20) ;; *) fl=$(median_ratio "${all[simdjson-1]}" "${all[$cfg]}") ;; esac
    fi
    # ratio: for DuckDB rows cdcetl's speed over DuckDB's; for cdcetl rows
    # its time over the parse floor's (1 worker) and its speed-up over
    # 1 worker (2 workers) -- the issue's three targets.
    case $cfg in
      duckdb-*) ratio=$(median_ratio "${all[duckdb-$t]}" "${all[cdcetl-$t]}") ;;
      polars-*) ratio=$(median_ratio "${all[polars-$t]}" "${all[cdcetl-$t]}") ;;
      cdcetl-1) ratio="floor×$(median_ratio "${all[cdcetl-1]}" "${all[floor-1]}")" ;;
      cdcetl-2) ratio="×$(median_ratio "${all[cdcetl-1]}" "${all[cdcetl-2]}")" ;;
      producer-1) ratio="flink×$(median_ratio "${all[cdcetl-1]}" "${all[producer-1]}")" ;;
      noschema-1) ratio="schema×$(median_ratio "${all[cdcetl-1]}" "${all[noschema-1]}")" ;;
      iceberg-1) ratio="schema×$(median_ratio "${all[cdcetl-1]}" "${all[iceberg-1]}")" ;;
      schema20-1) ratio="-" ;;
      tables20-1) ratio="schema×$(median_ratio "${all[schema20-1]}" "${all[tables20-1]}")" ;;
    esac
    printf '%-9s %-14s %-10s %7s %9.1f %12.0f %8dMiB %8dMiB %11s %6s\n' "$shape" "$f" "$sys" "$t" "$mb" "$(echo "$rows/$s" | bc -l)" $((rss[$cfg]/1024)) $(( ${size[$cfg]}/1048576 )) "$ratio" "$fl"
  done
  checks="cdcetl-2 producer-1 iceberg-1 duckdb-1 duckdb-2"
  [ -n "$polars" ] && checks="$checks polars-1 polars-2"
  for v in $checks; do
    cmp -s "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt" || { echo "$shape $f: $v wrote different rows:"; cat "$dir/verify-cdcetl-1.txt" "$dir/verify-$v.txt"; exit 1; }
  done
  # Without a schema the columns are the inferred ones: the row counts agree.
  [ "$(awk '{print $1, $2}' "$dir/verify-cdcetl-1.txt")" = "$(awk '{print $1, $2}' "$dir/verify-noschema-1.txt")" ] || { echo "$shape $f: noschema wrote other rows:"; cat "$dir/verify-cdcetl-1.txt" "$dir/verify-noschema-1.txt"; exit 1; }
  if [ "$shape" = products ]; then
    [ "$(awk '{print $1, $2}' "$dir/verify-schema20-1.txt")" = "$(awk '{print $1, $2}' "$dir/verify-tables20-1.txt")" ] || { echo "$f: tables20-1 wrote different rows:"; cat "$dir/verify-schema20-1.txt" "$dir/verify-tables20-1.txt"; exit 1; }
  fi
  unset secs rss all
done
done
