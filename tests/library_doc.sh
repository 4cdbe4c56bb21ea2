#!/bin/bash
# docs/library.md quotes examples/c as they are (scripts/doc-snippets.py),
# and the output it shows for mcast_fabric is what the program prints.
# Arguments: build directory, source directory.
set -u
. "$(dirname "$0")/lib/example_build.sh"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
python3 "$src/scripts/doc-snippets.py" "$src/docs/library.md" || exit 1
n=$(grep -c '^<!-- snippet: ' "$src/docs/library.md")
[ "$n" -ge 7 ] || { echo "FAIL only $n snippets in docs/library.md"; exit 1; }
# The output block after "The program prints:", built and run against
# the build tree's libraries.
want=$(awk '/^excepted. The program prints:$/ {f = 1; next}
	f && /^```$/ {if (in_block) exit; in_block = 1; next}
	in_block {print}' "$src/docs/library.md")
[ -n "$want" ] || { echo "FAIL no output block in docs/library.md"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
umad_inc=$(sed -n 's/^UMAD_INCLUDE_DIR:PATH=//p' "$build/CMakeCache.txt")
$cc $san -std=c11 -I"$src/include" ${umad_inc:+-I"$umad_inc"} -o "$tmp/mcast_fabric" \
	"$src/examples/c/mcast_fabric.c" "$build/libibmcast-sim.so" "$build/libibmcast.so" \
	-Wl,-rpath,"$build" || exit 1
got=$("$tmp/mcast_fabric")
if [ "$got" != "$want" ]; then
	echo "FAIL docs/library.md shows another output than mcast_fabric prints:"
	diff <(echo "$want") <(echo "$got")
	exit 1
fi
echo "ok   docs/library.md: $n snippets as in examples/c, mcast_fabric's output as shown"
