#!/bin/bash
# `ibmcast join` and `ibmcast mcast show` without a fabric: help, usage
# errors (exit 2), a missing port (exit 1), and show reading listings from
# control sockets (a fake server speaking the protocol of mcast_ctl.h) and
# removing a stale one. Arguments: build directory, source directory.
# shellcheck disable=SC2034
set -u
build=$(realpath "${1:?build directory}")
ibmcast=$build/ibmcast
[ -x "$ibmcast" ] || { echo "no $ibmcast"; exit 1; }
fail=0
check() { # check DESCRIPTION SHELL-CONDITION
	if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
usage() { # usage ARGS...: exits 2 with a message naming the command
	local err rc cmd=$1
	err=$("$ibmcast" "$@" 2>&1 >/dev/null)
	rc=$?
	check "exit 2: ibmcast $*" '[ $rc -eq 2 ] && echo "$err" | grep -q "^ibmcast $cmd: "'
}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

out=$("$ibmcast" join --help)
check "join --help" '[ $? -eq 0 ] && echo "$out" | grep -q "^usage: ibmcast join "'
out=$("$ibmcast" mcast --help)
check "mcast --help lists show" '[ $? -eq 0 ] && echo "$out" | grep -q "^  show "'
out=$("$ibmcast" mcast show --help)
check "mcast show --help" '[ $? -eq 0 ] && echo "$out" | grep -q "^usage: ibmcast mcast show "'
check "join --help says no QP is attached" 'echo "$("$ibmcast" join --help)" | grep -q "no QP is attached"'

usage join
usage join fe80::1
usage join ff12::zz
usage join ff12::1=bogus
usage join --state 0 ff12::1
usage join --state 16 ff12::1
usage join --mtu 3000 ff12::1
usage join --rate 1 ff12::1
usage join --audit -1 ff12::1
usage join --watch sometimes ff12::1
usage join --qkey 0x100000000 ff12::1
usage join --bogus ff12::1
usage join --port
"$ibmcast" mcast > /dev/null 2>&1
check "exit 2: ibmcast mcast" '[ $? -eq 2 ]'
usage mcast show extra
usage mcast show --all --device mlx5_0
usage mcast show --port 300

# No umad port here (unless there is hardware): exit 1 with a reason.
if [ ! -d /sys/class/infiniband_mad ] && [ -z "${LD_PRELOAD:-}" ]; then
	err=$("$ibmcast" join --no-ctl ff12::1 2>&1 >/dev/null)
	rc=$?
	check "join without a port: exit 1" '[ $rc -eq 1 ] && echo "$err" | grep -q "cannot open"'
	"$ibmcast" mcast show --run-dir "$dir" > /dev/null 2>&1
	rc=$?
	check "mcast show without a port: exit 1" '[ $rc -eq 1 ]'
fi

out=$("$ibmcast" mcast show --all --json --run-dir "$dir/none")
check "no run directory, no daemon: an empty listing" '[ $? -eq 0 ] && [ "$out" = "{\"daemon\":null,\"processes\":[]}" ]'

if ! command -v python3 >/dev/null 2>&1; then
	echo "python3 missing: control socket checks not run"
	exit $fail
fi
# A stale socket (no one listening) and a fake `ibmcast join`.
python3 - "$dir/0000000000100003-1.sock" <<-'EOF'
	import socket, sys
	s = socket.socket(socket.AF_UNIX)
	s.bind(sys.argv[1])
	EOF
check "stale socket made" '[ -S "$dir/0000000000100003-1.sock" ]'
python3 - "$dir/0000000000100005-77.sock" <<-'EOF' &
	import os, socket, sys
	s = socket.socket(socket.AF_UNIX)
	# Listening before the name appears: show takes a socket that
	# refuses connections for a stale one and removes it.
	s.bind(sys.argv[1] + ".tmp")
	s.listen(4)
	os.rename(sys.argv[1] + ".tmp", sys.argv[1])
	s.settimeout(20)
	for _ in range(2):
	    c, _ = s.accept()
	    c.sendall(b"ibmcast-mcast 1\n"
	              b"port ibsim0 1 fe80::10:5 4 1 77 poll\n"
	              b"group ff12:e001::1 49153 9 9 2 1 4660 65535 4 3 0 0 0 0 0\n"
	              b"group ff12:e001::2 49154 2 3 1 0 4660 65535 4 3 0 0 0 0 0\n"
	              b"end\n")
	    c.close()
	EOF
server=$!
for _ in $(seq 100); do [ -S "$dir/0000000000100005-77.sock" ] && break; sleep 0.05; done
out=$("$ibmcast" mcast show --all --run-dir "$dir")
rc=$?
echo "$out"
check "show --all: exit 0" '[ $rc -eq 0 ]'
check "show --all: the process's port" \
	'echo "$out" | grep -q "^port device=ibsim0 port=1 gid=fe80::10:5 lid=4 sm_lid=1 pid=77 watch=poll groups=2$"'
check "show --all: a joined group" \
	'echo "$out" | grep -q "^  group ff12:e001::1 mlid=0xc001 join_state=0x9 wanted=0x9 members=2 joined qkey=0x00001234 "'
check "show --all: a pending group" \
	'echo "$out" | grep -q "^  group ff12:e001::2 mlid=0xc002 join_state=0x2 wanted=0x3 members=1 pending "'
check "the stale socket is removed" '[ ! -e "$dir/0000000000100003-1.sock" ]'
out=$("$ibmcast" mcast show --all --json --run-dir "$dir")
echo "$out"
n=$(echo "$out" | python3 -c 'import json, sys
p = json.load(sys.stdin)["processes"]
print(len(p), p[0]["pid"], p[0]["groups"][1]["wanted"], p[0]["groups"][0]["is_joined"])')
check "show --all --json parses" '[ "$n" = "1 77 3 True" ]'
wait $server
exit $fail
