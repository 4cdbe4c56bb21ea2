#!/bin/sh
# Compiles every build type (Debug, Release, RelWithDebInfo) with gcc and
# with clang, warnings as errors, without running tests: each
# optimisation level finds warnings the others do not (-O3 inlining gives
# gcc's maybe-uninitialized; -O0 keeps code that -O2 folds away).
#   scripts/build-matrix.sh [-j N] [COMPILER ...]
# Build trees go to build-matrix/<compiler>-<type>/ (IMC_MATRIX_DIR
# moves them); the first failing combination stops the script with its
# compiler output.
set -eu
cd "$(dirname "$0")/.."
jobs=2
if [ "${1:-}" = "-j" ]; then
	jobs=$2
	shift 2
fi
[ $# -gt 0 ] || set -- gcc clang
start=$(date +%s)
for cc in "$@"; do
	for type in Debug Release RelWithDebInfo; do
		dir=${IMC_MATRIX_DIR:-build-matrix}/$cc-$type
		t0=$(date +%s)
		CC=$cc cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=$type \
			-DIMC_WERROR=ON >/dev/null
		if ! out=$(cmake --build "$dir" -j "$jobs" 2>&1); then
			printf '%s\n' "$out" | grep -E -B2 -A8 'error|warning' | head -n 80
			echo "build-matrix: $cc $type FAILED"
			exit 1
		fi
		echo "build-matrix: $cc $type ok ($(( $(date +%s) - t0 )) s)"
	done
done
echo "build-matrix: all ok in $(( $(date +%s) - start )) s"
