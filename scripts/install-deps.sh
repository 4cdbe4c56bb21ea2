#!/bin/sh
# Installs every Debian package ibmcast needs to build, test and run
# against a real SA (OpenSM on ibsim). Run as root (or through sudo).
set -eu
PKGS="build-essential cmake pkg-config clang libclang-rt-14-dev llvm
libibumad-dev libibverbs-dev libcmocka-dev libmnl-dev python3
opensm ibsim-utils libumad2sim0 infiniband-diags
tshark iproute2 iperf3 iputils-ping procps graphviz groff-base man-db"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
