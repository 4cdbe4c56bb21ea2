#!/bin/sh
# Builds ibmcast and runs its tests with CTest.
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/
#   scripts/test.sh --clang      clang build in build-clang/
# Extra arguments after -- go to ctest (e.g. -- -R wire -L quick).
set -eu
cd "$(dirname "$0")/.."
dir=build
flags=""
cc=""
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) dir=build-asan; flags="-DIMC_SANITIZE=ON" ;;
	--clang) dir=build-clang; cc=clang ;;
	--) shift; break ;;
	*) echo "usage: scripts/test.sh [--sanitize|--clang] [-- CTEST-ARGS]" >&2; exit 2 ;;
	esac
	shift
done
jobs=$(nproc 2>/dev/null || echo 2)
# shellcheck disable=SC2086
CC=${cc:-${CC:-cc}} cmake -S . -B "$dir" $flags >/dev/null
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@"
