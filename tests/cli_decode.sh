#!/bin/sh
# The ibmcast command: --help, --version, usage errors, and `decode` on the
# real OpenSM MADs (with a tshark check of the capture where tshark exists).
set -u
build=$1
src=$2
ib="$build/ibmcast"
vec="$src/tests/vectors/opensm-mcmr.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() { # expect CODE DESCRIPTION -- command...
	want=$1; what=$2; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/out" "$tmp/err"; fail=1
	else
		echo "ok: $what (exit $got)"
	fi
}
has() { # has FILE TEXT
	grep -q -- "$2" "$tmp/$1" || { echo "FAIL: '$2' not in $1"; cat "$tmp/$1"; fail=1; }
}

expect 0 "--help" -- "$ib" --help; has out "decode"
expect 2 "no command" -- "$ib"
expect 2 "unknown command" -- "$ib" frobnicate; has err "unknown command 'frobnicate'"
expect 0 "--version" -- "$ib" --version; has out "ibmcast [0-9]"
expect 0 "decode --help" -- "$ib" decode --help; has out "usage: ibmcast decode"
expect 2 "decode without file" -- "$ib" decode
expect 2 "decode missing file" -- "$ib" decode "$tmp/nope"; has err "No such file"
expect 2 "decode bad --sm-lid" -- "$ib" decode --sm-lid 0xc000 "$vec"; has err "--sm-lid 0xc000: at most 0xbfff"
expect 2 "decode --check without --pcap" -- "$ib" decode --check "$vec"
printf 'tx 1 0102\n' >"$tmp/short.txt"
expect 2 "decode short MAD" -- "$ib" decode "$tmp/short.txt"; has err "short.txt:1: expected 256 bytes"
printf '# c\nzz 1 00\n' >"$tmp/bad.txt"
expect 2 "decode bad line" -- "$ib" decode "$tmp/bad.txt"; has err "bad.txt:2: expected"
expect 0 "decode vectors" -- "$ib" decode "$vec"
has out "8 MADs decoded; re-encoding byte for byte"
has out "MLID 0xc00e"
has out "status 0x0600 INSUF_COMPS"
has out "MGID ff12:a01b:fe80::"
if command -v tshark >/dev/null 2>&1; then
	expect 0 "decode --pcap --check" -- "$ib" decode --pcap "$tmp/c.pcap" --check "$vec"
	has out "tshark: 8 packets"
else
	echo "tshark not installed: capture check not run (apt-get install tshark)"
	expect 0 "decode --pcap" -- "$ib" decode --pcap "$tmp/c.pcap" "$vec"
fi
[ -s "$tmp/c.pcap" ] || { echo "FAIL: no capture written"; fail=1; }
exit $fail
