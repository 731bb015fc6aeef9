#!/usr/bin/env bash
# Runs the side-by-side benchmarks and prints the benchstat table, with each
# library's ratio to the bare floor. Usage, from a fresh clone:
#
#	cd bench && ./run.sh            # -count 6, about five minutes
#	COUNT=10 ./run.sh               # more samples
#
# The raw results are kept in bench/out/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")"
export GOWORK=off # this module is not in the repository's go.work

BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
count=${COUNT:-6}
mkdir -p out

echo "# $(go version) on $(uname -sm), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
echo "# go test -run '^$' -bench . -count $count"
go test -run '^$' -bench . -count "$count" . | tee out/bench.txt >/dev/null

# One table per scenario, libraries as columns: benchstat compares each
# column with the first, which is the bare floor.
go run "$BENCHSTAT" -col /lib out/bench.txt | tee out/benchstat.txt
