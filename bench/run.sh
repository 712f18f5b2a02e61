#!/bin/sh
# Runs the benchmarks behind the numbers in the README. Each Go benchmark
# reports ns/op plus p50/p90 in milliseconds where latency matters.
#   ./bench/run.sh            all benchmarks, default iteration counts
#   COUNT=5 ./bench/run.sh    repeat each benchmark (for benchstat)
set -eu
cd "$(dirname "$0")/.."
count=${COUNT:-1}
echo "== plugin start-up and per-call overhead (host/sandbox)"
go test -run '^$' -bench . -benchtime 200x -count "$count" ./host/sandbox/
for pkg in ./plugins/landlock/ ./host/match/; do
  if [ -d "$pkg" ] && ls "$pkg"/*_test.go >/dev/null 2>&1 && grep -q '^func Benchmark' "$pkg"/*_test.go; then
    echo "== $pkg"
    go test -run '^$' -bench . -benchtime "${BENCHTIME:-200x}" -count "$count" "$pkg"
  fi
done
