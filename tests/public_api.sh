#!/bin/sh
# The public API: every header compiles on its own (C11, -Werror), and the
# shared library exports only imc_* symbols.
set -eu
build=$1
src=$2
fail=0
for h in "$src"/include/ibmcast/*.h; do
	if ! printf '#include "%s"\n' "$h" | ${CC:-cc} -std=c11 -Wall -Wextra -Werror \
		-I"$src/include" -fsyntax-only -x c -; then
		echo "header does not compile on its own: $h"
		fail=1
	fi
done
lib=$(ls "$build"/libibmcast.so.* 2>/dev/null | head -n 1)
[ -n "$lib" ] || { echo "no shared library in $build"; exit 1; }
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^imc_' | grep -v '^IBMCAST_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols outside imc_*:"; echo "$bad"; fail=1
fi
n=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^imc_' || true)
[ "$n" -gt 0 ] || { echo "no imc_* symbol exported"; fail=1; }
ls "$src"/include/ibmcast/*.h | wc -l | xargs printf 'headers checked: %s\n'
echo "exported imc_* symbols: $n"
exit $fail
