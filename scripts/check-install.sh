#!/bin/sh
# Installs ibmcast into a staging prefix with `cmake --install`, then builds
# and runs a program against the installed library through pkg-config.
set -eu
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake -S . -B build-install -DIMC_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$stage" >/dev/null
cmake --build build-install -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
cmake --install build-install >/dev/null
pcdir=$(dirname "$(find "$stage" -name ibmcast.pc)")
for f in bin/ibmcast include/ibmcast/common.h; do
	[ -e "$stage/$f" ] || { echo "check-install: $f not installed" >&2; exit 1; }
done
cat >"$stage/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <ibmcast/common.h>
int main(void)
{
	printf("linked against ibmcast %s\n", imc_version());
	return strlen(imc_version()) ? 0 : 1;
}
C
# shellcheck disable=SC2046
cc -Wall -Werror -o "$stage/hello" "$stage/hello.c" \
	$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs ibmcast)
LD_LIBRARY_PATH=$(dirname "$pcdir") "$stage/hello"
"$stage/bin/ibmcast" --version
echo "check-install: ok (library, headers, pkg-config file and command installed)"
