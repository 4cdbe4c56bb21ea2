#!/bin/bash
# ibmcastd on OpenSM/ibsim: the access policy. A client run as another
# user (nobody, through setpriv) is refused what the policy does not allow
# it, with the status EACCES and a log line naming the rule file, and gets
# what it allows. SIGHUP reloads the policy: a bad file keeps the old one
# (the log says FILE:LINE and why); a stricter one revokes the members it
# no longer allows (the client is told, the SA follows); a wider one lets
# the refused join through. With the socket's default mode (0660) and
# group, the other user cannot even connect, and is told so.
# Arguments: build directory, source directory.
# shellcheck disable=SC2034
set -u
. "$(dirname "$(realpath "$0")")/lib/daemon_test.sh" "$@"
command -v setpriv >/dev/null 2>&1 ||
	{ echo "SKIP: setpriv (util-linux) not installed"; exit 77; }
[ "$(id -u)" = 0 ] ||
	{ echo "SKIP: running clients as another user needs root"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }
daemon_rerun 150

A=ff12:e001::31          # root's only
B=ff12:e002::1           # nobody may be full or nonmember here
pol=$RUN/policy
cat > "$pol" <<'P'
# root may do anything; nobody only in ff12:e002::/32, full or nonmember
allow user:root
deny user:nobody mgid ff12:e002::99
allow user:nobody mgid ff12:e002::/32 state full,nonmember
allow group:users mgid ff12:e004::/32
P
getent group users >/dev/null || { echo "SKIP: no group users"; exit 77; }

# as_nobody NAME ARGS...: `ibmcast join ARGS` as nobody, in the background
# (without the harness's ASan options: nobody cannot read their file)
as_nobody() {
	local name=$1
	shift
	env -u LD_PRELOAD -u ASAN_OPTIONS setpriv --reuid=nobody --regid=nogroup \
		--clear-groups "$ibmcast" join "$@" > "$name.out" 2> "$name.err" &
	cpid[$name]=$!
}

daemon_start --mode 0666 --policy "$pol" || exit 1
client root --create --qkey 0x1234 "$A" "$B"
wait_for "root joined $A and $B" 10 '[ "$(joined root)" = 2 ]'

as_nobody n1 --qkey 0x1234 "$A"
wait "${cpid[n1]}"; rc=$?; unset "cpid[n1]"
cat n1.out
check "nobody refused $A: EACCES, exit 1" \
	'[ $rc -eq 1 ] && grep -q "^error mgid=$A status=-13 EACCES (Permission denied)$" n1.out'
check "the refusal's log line names the user, the MGID and the policy" \
	'grep -q "refused: pid=[0-9]* uid=65534 port=ibsim0:1 mgid=$A join_state=0x1 pkey=none: no rule of $pol allows it" daemon.log'

as_nobody n0 --qkey 0x1234 ff12:e002::99
wait "${cpid[n0]}"; rc=$?; unset "cpid[n0]"
check "a deny rule refuses nobody ff12:e002::99; the log names FILE:LINE" \
	'[ $rc -eq 1 ] && grep -q "^error mgid=ff12:e002::99 status=-13 EACCES" n0.out &&
	 grep -q "refused: pid=[0-9]* uid=65534 .* mgid=ff12:e002::99 join_state=0x1 pkey=none: denied by $pol:3$" daemon.log'

as_nobody n2 --qkey 0x1234 "$B=sendonly-full"
wait "${cpid[n2]}"; rc=$?; unset "cpid[n2]"
check "nobody refused SendOnlyFullMember in $B (a JoinState the rule lacks)" \
	'[ $rc -eq 1 ] && grep -q "^error mgid=$B status=-13 EACCES" n2.out'

# A supplementary group (SO_PEERGROUPS) is one of the peer's groups.
env -u LD_PRELOAD -u ASAN_OPTIONS setpriv --reuid=nobody --regid=nogroup --groups=users \
	"$ibmcast" join --create --qkey 0x1234 --duration 0.2 ff12:e004::1 > g1.out 2>&1
rc=$?
check "nobody with supplementary group users joins ff12:e004::1 (group rule)" \
	'[ $rc -eq 0 ] && [ "$(joined g1)" = 1 ]'
env -u LD_PRELOAD -u ASAN_OPTIONS setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$ibmcast" join --create --qkey 0x1234 --duration 0.2 ff12:e004::1 > g2.out 2>&1
rc=$?
check "... and without that group is refused" \
	'[ $rc -eq 1 ] && grep -q "^error mgid=ff12:e004::1 status=-13 EACCES" g2.out'

as_nobody n3 --qkey 0x1234 "$B=nonmember"
wait_for "nobody joined $B as NonMember" 10 '[ "$(joined n3)" = 1 ]'
wait_for "saquery: the port holds full and nonmember in $B" 10 \
	'[ "$(sa_member $B)" = 0x3 ]'

# A bad file: the old policy stays.
cp "$pol" "$pol.good"
printf 'allow user:root\nallow user:nobody mgid fe80::1\n' > "$pol"
kill -HUP "$DPID"
wait_for "SIGHUP with a bad file: the log says FILE:LINE and keeps the old policy" 10 \
	'grep -q "policy not reloaded, the old one stays (4 rules): $pol:2: .fe80::1. is not a multicast GID" daemon.log'
check "nobody's member is still joined" \
	'[ "$(sa_member $B)" = 0x3 ] && ! grep -q "^error" n3.out'

# A stricter file: nobody's member is revoked.
printf 'allow user:root\n' > "$pol"
kill -HUP "$DPID"
wait_for "SIGHUP: the stricter policy revokes nobody's member (EACCES)" 10 \
	'grep -q "^error mgid=$B status=-13 EACCES" n3.out'
check "the log counts one member revoked" \
	'grep -q "policy applied: 1 member revoked" daemon.log'
wait_for "saquery: only root's FullMember left in $B" 10 \
	'[ "$(sa_member $B)" = 0x1 ]'
wait "${cpid[n3]}"; unset "cpid[n3]"

# A wider file: the refused join goes through.
printf 'allow user:root\nallow user:nobody\n' > "$pol"
kill -HUP "$DPID"
wait_for "SIGHUP: the policy reloaded" 10 'grep -q "policy $pol reloaded: 2 rules" daemon.log'
as_nobody n4 --qkey 0x1234 "$A=sendonly"
wait_for "nobody now joins $A" 10 '[ "$(joined n4)" = 1 ]'
wait_for "saquery: full and sendonly in $A" 10 '[ "$(sa_member $A)" = 0x5 ]'
kill -TERM "${cpid[n4]}"; wait "${cpid[n4]}"; unset "cpid[n4]"
kill -TERM "${cpid[root]}"; wait "${cpid[root]}"; unset "cpid[root]"
kill -TERM "$DPID"; wait "$DPID"; rc=$?
check "ibmcastd exits 0 on SIGTERM" '[ $rc -eq 0 ]'

# The socket's default mode: only root and the group connect. Also: the
# sd_notify(3) datagrams a Type=notify unit waits for, and the limit of
# connections per uid.
python3 - "$RUN/notify" > notify.txt <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
print("bound", flush=True)
try:
    while True:
        m = s.recv(4096).decode()
        print(m, flush=True)
        if m.startswith("STOPPING"):
            break
except socket.timeout:
    pass
PY
npid=$!
until grep -q bound notify.txt 2>/dev/null; do sleep 0.05; done
NOTIFY_SOCKET=$RUN/notify daemon_start --max-conns-per-uid 2 || exit 1
err=$(env -u LD_PRELOAD -u ASAN_OPTIONS setpriv --reuid=nobody --regid=nogroup --clear-groups \
	"$ibmcast" join "$A" 2>&1 >/dev/null)
rc=$?
echo "$err"
check "mode 0660: nobody cannot connect, and is told why" \
	'[ $rc -eq 1 ] && echo "$err" | grep -q "ibmcastd at $RUN/ibmcastd.sock: Permission denied"'
ls -l "$RUN/ibmcastd.sock"
check "the socket is srw-rw---- root:root" \
	'[ "$(stat -c "%A %U %G" "$RUN/ibmcastd.sock")" = "srw-rw---- root root" ]'
client l1 --create --qkey 0x1234 "$A"
client l2 --create --qkey 0x1234 "$A"
wait_for "two connections of root joined" 10 '[ "$(joined l1)" = 1 ] && [ "$(joined l2)" = 1 ]'
client l3 --create --qkey 0x1234 "$A"
wait_for "a third connection of uid 0 is refused (--max-conns-per-uid 2)" 10 \
	'grep -q "client pid=[0-9]* uid=0 refused: too many connections for this uid" daemon.log'
check "... and that client holds nothing" '[ "$(joined l3)" = 0 ]'
kill -TERM "${cpid[l3]}" "${cpid[l1]}" "${cpid[l2]}"
wait "${cpid[l3]}" "${cpid[l1]}" "${cpid[l2]}"
unset "cpid[l1]" "cpid[l2]" "cpid[l3]"
kill -HUP "$DPID"
wait_for "SIGHUP: default policy read again" 10 \
	'[ "$(grep -c "default policy: root and group 0" daemon.log)" -ge 2 ]'
kill -TERM "$DPID"; wait "$DPID"
wait "$npid"
check "sd_notify: READY=1, RELOADING=1 then READY=1, STOPPING=1" \
	'[ "$(grep -v bound notify.txt | tr "\n" " ")" = "READY=1 RELOADING=1 READY=1 STOPPING=1 " ]' ||
	cat notify.txt
[ $fail = 0 ] || { echo "--- daemon.log"; cat daemon.log; }
exit $fail
