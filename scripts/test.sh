#!/bin/sh
# Builds ibmcast and runs its tests with CTest.
#   scripts/test.sh              normal build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UBSan build in build-asan/
#   scripts/test.sh --clang      clang build in build-clang/
#   scripts/test.sh --werror     warnings are errors (IMC_WERROR=ON, the
#                                default of a first configure under CI=true)
# Extra arguments after -- go to ctest (e.g. -- -R wire -L quick).
set -eu
cd "$(dirname "$0")/.."
dir=build
flags=""
cc=""
# CI fails on warnings even in a build tree configured before without.
[ "${CI:-}" = true ] && flags="-DIMC_WERROR=ON"
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) dir=build-asan; flags="$flags -DIMC_SANITIZE=ON" ;;
	--clang) dir=build-clang; cc=clang ;;
	--werror) flags="$flags -DIMC_WERROR=ON" ;;
	--) shift; break ;;
	*) echo "usage: scripts/test.sh [--sanitize|--clang] [--werror] [-- CTEST-ARGS]" >&2; exit 2 ;;
	esac
	shift
done
jobs=$(nproc 2>/dev/null || echo 2)
# shellcheck disable=SC2086
CC=${cc:-${CC:-cc}} cmake -S . -B "$dir" $flags >/dev/null
cmake --build "$dir" -j "$jobs"
ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@"
