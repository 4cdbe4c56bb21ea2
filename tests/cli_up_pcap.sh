#!/bin/sh
# ibmcast up --pcap writes wall-clock timestamps (the real-time loop runs
# on CLOCK_MONOTONIC) and --snaplen N keeps the first N bytes of each
# packet, with its length on the wire; a bad --snaplen is refused with
# its limit. Needs a TUN device and namespaces (root): skipped without.
. "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3 to read the capture"; exit 77; }

"$ib" up "$src/examples/ipoib-tun.scn" --tun H-000001 --snaplen 65536 \
	>/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || { echo "FAIL: --snaplen 65536: exit $rc"; fail=1; }
has err "ibmcast up: --snaplen 65536: at most 65535"

before=$(date +%s)
timeout 60 "$ib" up "$src/examples/ipoib-tun.scn" --tun H-000001 --netns \
	--until 300ms --pcap "$tmp/up.pcap" --snaplen 64 >"$tmp/out" 2>&1
rc=$?
after=$(date +%s)
if [ $rc -ne 0 ]; then
	if grep -q "/dev/net/tun\|Operation not permitted\|namespace" "$tmp/out"; then
		echo "SKIP: ibmcast up cannot make TUNs here:"; cat "$tmp/out"; exit 77
	fi
	echo "FAIL: up exit $rc"; cat "$tmp/out"; exit 1
fi
python3 - "$tmp/up.pcap" "$before" "$after" <<'EOF' || fail=1
import struct, sys
d = open(sys.argv[1], "rb").read()
lo, hi = int(sys.argv[2]), int(sys.argv[3])
magic, _, _, _, _, snap, lt = struct.unpack("<IHHiIII", d[:24])
assert magic == 0xA1B23C4D and snap == 64 and lt == 147, (hex(magic), snap, lt)
o, n, cut = 24, 0, 0
while o < len(d):
    sec, ns, incl, orig = struct.unpack("<IIII", d[o:o + 16])
    assert lo - 1 <= sec <= hi + 1, ("not wall-clock time", sec, lo, hi)
    assert incl == min(orig, 64), (incl, orig)
    cut += orig > incl
    o += 16 + incl
    n += 1
assert o == len(d) and n > 0 and cut > 0, (o, len(d), n, cut)
print("ok: %d packets at wall-clock times, %d cut to 64 bytes" % (n, cut))
EOF
exit $fail
