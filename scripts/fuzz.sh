#!/bin/sh
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each one
# for SECONDS (default 60), two at a time. Exits non-zero on any finding;
# crashing inputs are kept in build-fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS] [TARGET-NAME-REGEX]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
pattern=${2:-.}
dir=build-fuzz
CC=clang cmake -S . -B "$dir" -DIMC_FUZZ=ON -DIMC_SANITIZE=ON -DIMC_TESTS=OFF >/dev/null
cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)"
mkdir -p "$dir/artifacts" "$dir/corpus"
targets=$(cd "$dir/fuzz" && ls fuzz_* | grep -E "$pattern" | sort)
run_one() {
	t=$1
	name=${t#fuzz_}
	mkdir -p "$dir/corpus/$name"
	seeds=fuzz/corpus/$name
	[ -d "$seeds" ] || seeds=""
	if "$dir/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$dir/artifacts/$name-" -print_final_stats=1 \
		"$dir/corpus/$name" $seeds >"$dir/artifacts/$name.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/artifacts/$name.log")
		echo "fuzz $name: ${runs:-?} runs in ${secs}s, no finding"
	else
		echo "fuzz $name: FINDING (log: $dir/artifacts/$name.log)"
		tail -40 "$dir/artifacts/$name.log"
		return 1
	fi
}
export dir secs
fail=0
n=0
set -- $targets
while [ $# -gt 0 ]; do
	run_one "$1" & p1=$!
	p2=""
	if [ $# -gt 1 ]; then run_one "$2" & p2=$!; fi
	wait $p1 || fail=$((fail + 1))
	[ -z "$p2" ] || wait $p2 || fail=$((fail + 1))
	n=$((n + 1)); [ -z "$p2" ] || n=$((n + 1))
	shift; [ $# -gt 0 ] && shift
done
echo "fuzz: $n targets, $secs s each, $fail with findings"
[ "$fail" -eq 0 ]
