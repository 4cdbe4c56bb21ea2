#!/bin/sh
# Installs ibmcast as users and packagers do, into prefixes other than the
# one CMake was configured with, and checks what they get:
#  - `cmake --install --prefix P`: ibmcast.pc and ibmcast-sim.pc name P
#    (cflags, libs), a program built with `pkg-config --cflags --libs
#    ibmcast` runs against libibmcast in P, one built with ibmcast-sim
#    against both libraries in P, and P/bin/ibmcast runs without
#    LD_LIBRARY_PATH;
#  - `DESTDIR=D cmake --install --prefix /opt/x`: the files land under D
#    and both .pc files name /opt/x, not D.
set -eu
cd "$(dirname "$0")/.."
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
fail() { echo "check-install: $*" >&2; exit 1; }
configured=/nonexistent/ibmcast-configure-prefix
cmake -S . -B build-install -DIMC_TESTS=OFF -DCMAKE_INSTALL_PREFIX="$configured" >/dev/null
cmake --build build-install -j 2 >/dev/null

prefix=$stage/prefix
cmake --install build-install --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name ibmcast.pc)
[ -n "$pc" ] || fail "ibmcast.pc not installed"
for f in bin/ibmcast sbin/ibmcastd include/ibmcast/common.h \
	include/ibmcast/ibmcast.h include/ibmcast/sim.h \
	share/man/man3/imc_mcast_join.3 share/man/man3/imc_fabric_create.3 \
	include/ibmcast/mcastd.h lib/systemd/system/ibmcastd.service \
	share/ibmcast/ibmcastd.policy; do
	[ -e "$prefix/$f" ] || fail "$f not installed"
done
# The unit starts the daemon where this install put it.
grep -q "^ExecStart=$prefix/sbin/ibmcastd " \
	"$prefix/lib/systemd/system/ibmcastd.service" ||
	fail "ibmcastd.service does not start $prefix/sbin/ibmcastd"
env -u LD_LIBRARY_PATH "$prefix/sbin/ibmcastd" --help >/dev/null ||
	fail "installed ibmcastd --help fails"
[ ! -e "$prefix/include/ibmcast/vectors.h" ] || fail "test-only vectors.h installed"
simpc=$(dirname "$pc")/ibmcast-sim.pc
[ -e "$simpc" ] || fail "ibmcast-sim.pc not installed beside ibmcast.pc"
for f in "$pc" "$simpc"; do
	if grep -q "$configured" "$f"; then
		cat "$f" >&2
		fail "$(basename "$f") names the configure-time prefix, not $prefix"
	fi
done
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags ibmcast)
libs=$(pkg-config --libs ibmcast)
libdir=$(pkg-config --variable=libdir ibmcast)
case "$cflags" in *"-I$prefix/include"*) ;; *) fail "cflags '$cflags' do not point into $prefix" ;; esac
case "$libs" in *"-L$prefix/"*) ;; *) fail "libs '$libs' do not point into $prefix" ;; esac
[ -e "$libdir/libibmcast.so" ] || fail "no libibmcast.so in the .pc's libdir $libdir"

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
# shellcheck disable=SC2086
cc -Wall -Werror -o "$stage/hello" "$stage/hello.c" $cflags $libs
# The program is linked against the shared library of P, found through the
# libdir the .pc names (a prefix outside the loader's path needs it).
LD_LIBRARY_PATH=$libdir "$stage/hello"
LD_LIBRARY_PATH=$libdir ldd "$stage/hello" | grep -q "libibmcast.so.* => $libdir/" ||
	fail "hello does not load libibmcast from $libdir"

# The simulator's library: its .pc brings libibmcast through Requires.
simlibs=$(pkg-config --libs ibmcast-sim)
case "$simlibs" in *-libmcast-sim*-libmcast*) ;; *) fail "ibmcast-sim libs '$simlibs' lack -libmcast-sim -libmcast" ;; esac
cat >"$stage/sim.c" <<'C'
#include <stdio.h>
#include <ibmcast/sim.h>
int main(void)
{
	struct imc_topo *t;
	uint32_t hcas, switches, links;
	if (imc_topo_generate("switch:hosts=3", &t, NULL, 0))
		return 1;
	imc_topo_counts(t, &hcas, &switches, &links);
	printf("%s: %u HCAs\n", imc_version(), (unsigned)hcas);
	imc_topo_destroy(t);
	return 0;
}
C
# shellcheck disable=SC2086
cc -std=c11 -pedantic -Wall -Werror -o "$stage/sim" "$stage/sim.c" \
	$(pkg-config --cflags ibmcast-sim) $simlibs
LD_LIBRARY_PATH=$libdir "$stage/sim" | grep -qx ".*: 3 HCAs" ||
	fail "a program linked with ibmcast-sim does not run"
LD_LIBRARY_PATH=$libdir ldd "$stage/sim" | grep -q "libibmcast-sim.so.* => $libdir/" ||
	fail "sim does not load libibmcast-sim from $libdir"

# The installed command finds its library by itself.
ver=$(env -u LD_LIBRARY_PATH "$prefix/bin/ibmcast" --version) ||
	fail "installed ibmcast --version fails"
echo "$ver"
if env -u LD_LIBRARY_PATH ldd "$prefix/bin/ibmcast" | grep -q "not found"; then
	fail "installed ibmcast has unresolved libraries"
fi

# A packager's staged install: files under DESTDIR, paths without it.
dest=$stage/destdir
DESTDIR=$dest cmake --install build-install --prefix /opt/ibmcast >/dev/null
pc=$(find "$dest" -name ibmcast.pc)
case "$pc" in "$dest/opt/ibmcast/"*) ;; *) fail "DESTDIR install put ibmcast.pc at '$pc'" ;; esac
grep -q "^prefix=/opt/ibmcast$" "$pc" || fail "staged ibmcast.pc does not name /opt/ibmcast"
if grep -q "$dest" "$pc"; then fail "staged ibmcast.pc names DESTDIR"; fi
grep -q "^prefix=/opt/ibmcast$" "$(dirname "$pc")/ibmcast-sim.pc" ||
	fail "staged ibmcast-sim.pc does not name /opt/ibmcast"
if grep -q "$dest" "$(dirname "$pc")/ibmcast-sim.pc"; then fail "staged ibmcast-sim.pc names DESTDIR"; fi
echo "check-install: ok (ibmcast.pc and ibmcast-sim.pc name the install prefix; pkg-config programs and the installed ibmcast run)"
