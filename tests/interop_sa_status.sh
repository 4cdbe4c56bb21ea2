#!/bin/bash
# Interop with OpenSM on ibsim: the MCMemberRecord requests of the table
# "What OpenSM answered" in opensm-ibsim.md (the reference notes), sent
# raw through `ibmcast sa send`, get the statuses, methods and records
# OpenSM was seen to give. Arguments: build directory, source directory.
set -u
. "$(dirname "$(realpath "$0")")/lib/ibsim_test.sh" "$@"

if [ -z "${IBSIM_HARNESS_DIR:-}" ]; then
	[ -x "$ibmcast" ] || { echo "no $ibmcast"; exit 1; }
	# Bad usage is found before any port is opened: exit 2, fabric or not.
	for args in "send --method get --data 123" "send --method get --data zz" \
		"send --method frob" "send" "send --method get x" "join" \
		"join not-a-gid" "query a b" "leave ff12::1 --state half" \
		"frob ff12::1" "join ff12::1 --qkey 0x100000000" \
		"send --method get --dlid 0xc000"; do
		# shellcheck disable=SC2086
		"$ibmcast" sa $args 2>/dev/null
		rc=$?
		if [ $rc -ne 2 ]; then
			echo "FAIL 'ibmcast sa $args' exits $rc, want 2"
			exit 1
		fi
	done
	echo "ok   usage errors exit 2"
fi
# OpenSM on Hca1, clients on Hca2 and Hca3.
ibsim_rerun 90 3

n=0
last=
# expect HOST STATUS METHOD CHECKS -- ARGS...: runs `ibmcast sa send ARGS`
# on HOST; the answer must have STATUS and METHOD, and the first record
# the field=value pairs of CHECKS (space separated, may be empty).
expect() {
	local host=$1 status=$2 method=$3 checks=$4 got rec kv
	shift 5
	n=$((n + 1))
	last=$(SIM_HOST=$host "$ibmcast" sa send "$@" 2>&1)
	got=$(echo "$last" | sed -n 's/^status \(0x[0-9a-f]*\) .*/\1/p')
	rec=$(echo "$last" | grep -m1 '^record ')
	local bad=
	[ "$got" = "$status" ] || bad="status $got, want $status"
	echo "$last" | grep -q "^method $method " || bad="$bad; method, want $method"
	for kv in $checks; do
		case " $rec " in
		*" $kv "*) ;;
		*) bad="$bad; want $kv" ;;
		esac
	done
	if [ -z "$bad" ]; then
		echo "ok   $n: $host $* -> $status"
	else
		echo "FAIL $n: $host $*: $bad"
		echo "$last" | sed 's/^/     /'
		fail=1
	fi
}
field() { echo "$last" | sed -n "s/^record .*\<$1=\([^ ]*\).*/\1/p"; }

MASK_CREATE="qkey=0x11,tclass=0,pkey=0xffff,sl=0,flow_label=0"
GET=0x81 DEL=0x95

# Create with MGID 0 and Q_Key, TClass, P_Key, SL, FlowLabel: OpenSM
# assigns ff12:a01b:<prefix>::<counter> and the first free MLID.
expect Hca2 0x0000 $GET "qkey=0x00000011 mlid=0xc001 join_state=0x1" -- \
	--method set --record mgid=0,port_gid=self,$MASK_CREATE,join_state=1
G=$(field mgid)
P2=$(field port_gid)
case $G in ff12:a01b:fe80:*) echo "ok   assigned MGID $G" ;;
*) echo "FAIL assigned MGID '$G'"; fail=1 ;; esac

# Creating without one of those components: INSUF_COMPS.
expect Hca2 0x0600 $GET "" -- --method set \
	--record mgid=ff12:1234::99,port_gid=self,qkey=0x11,tclass=0,pkey=0xffff,flow_label=0,join_state=1
# Set without JoinState, or without PortGID: INSUF_COMPS.
expect Hca2 0x0600 $GET "" -- --method set --record mgid=$G,port_gid=self
expect Hca2 0x0600 $GET "" -- --method set --record mgid=$G,join_state=1
# Delete without JoinState: INSUF_COMPS.
expect Hca2 0x0600 $DEL "" -- --method delete --record mgid=$G,port_gid=self
# Q_Key differing from the group's: REQ_INVALID.
expect Hca3 0x0200 $GET "" -- --method set \
	--record mgid=$G,port_gid=self,qkey=0x22,join_state=1
# JoinState 0; NonMember creating a group: REQ_INVALID.
expect Hca3 0x0200 $GET "" -- --method set \
	--record mgid=$G,port_gid=self,join_state=0
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=ff12:1234::98,port_gid=self,$MASK_CREATE,join_state=2
# MTU exactly 4096 (code 5) on a 2048 port: REQ_INVALID.
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=ff12:1234::97,port_gid=self,$MASK_CREATE,mtu_sel=2,mtu=5,join_state=1
# Reserved MGID flag bits; the SA's signature with link-local scope.
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=ff32:1234::96,port_gid=self,$MASK_CREATE,join_state=1
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=ff12:a01b::95,port_gid=self,$MASK_CREATE,join_state=1
# IPoIB-signed MGID whose Q_Key differs from the broadcast group's.
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=ff12:401b:ffff::94,port_gid=self,qkey=0x1234,tclass=0,pkey=0xffff,sl=0,flow_label=0,join_state=1
# Unknown port GID: REQ_INVALID; another subnet prefix: INVALID_GID.
expect Hca2 0x0200 $GET "" -- --method set \
	--record mgid=$G,port_gid=fe80::dead:beef,join_state=1
expect Hca2 0x0500 $GET "" -- --method set \
	--record mgid=$G,port_gid=fe81::${P2#fe80::},join_state=1
# Hca3 joins send-only full; its GID is in the answer.
expect Hca3 0x0000 $GET "join_state=0x8 mlid=0xc001" -- --method set \
	--record mgid=$G,port_gid=self,join_state=8
P3=$(field port_gid)
# A proxy join for Hca1's existing port, from Hca2.
P1=fe80::${P2#fe80::}
P1=${P1%:*}:1
expect Hca2 0x0000 $GET "port_gid=$P1 join_state=0x1" -- --method set \
	--record mgid=$G,port_gid=$P1,join_state=1,proxy_join=1
# Repeated joins OR the JoinState: 1, 8, 2 -> 0xB.
expect Hca2 0x0000 $GET "join_state=0x9" -- --method set \
	--record mgid=$G,port_gid=self,join_state=8
expect Hca2 0x0000 $GET "join_state=0xb" -- --method set \
	--record mgid=$G,port_gid=self,join_state=2
# Delete: DeleteResp with the JoinState left.
expect Hca2 0x0000 $DEL "port_gid=$P2 join_state=0x3" -- --method delete \
	--record mgid=$G,port_gid=self,join_state=8
# Delete of bits not held, and of a group that does not exist.
expect Hca3 0x0200 $DEL "" -- --method delete \
	--record mgid=$G,port_gid=self,join_state=2
expect Hca2 0x0200 $DEL "" -- --method delete \
	--record mgid=ff12:1234::42,port_gid=self,join_state=1
# Get of a missing group: NO_RECORDS; GetTable without a match: an empty
# SUCCESS; GetMulti: method/attribute not supported.
expect Hca2 0x0300 $GET "" -- --method get --record mgid=ff12:1234::42
expect Hca2 0x0000 0x92 "" -- --method gettable --record mgid=ff12:1234::42
echo "$last" | grep -q '^records 0$' || { echo "FAIL empty table: $last"; fail=1; }
expect Hca2 0x000c 0x94 "" -- --method getmulti --record mgid=ff12:1234::42
# The group lives while a full member (Hca2, Hca1 by proxy, Hca3 as
# send-only full) is left; then it is gone.
expect Hca2 0x0000 $GET "mgid=$G mlid=0xc001 qkey=0x00000011" -- \
	--method get --record mgid=$G
expect Hca2 0x0000 $DEL "join_state=0x0" -- --method delete \
	--record mgid=$G,port_gid=self,join_state=3
expect Hca2 0x0000 $DEL "join_state=0x0" -- --method delete \
	--record mgid=$G,port_gid=$P1,join_state=1
expect Hca3 0x0000 $DEL "port_gid=$P3 join_state=0x0" -- --method delete \
	--record mgid=$G,port_gid=self,join_state=8
expect Hca2 0x0300 $GET "" -- --method get --record mgid=$G
# The raw path also speaks ClassPortInfo: OpenSM's SA, class version 2.
expect Hca2 0x0000 $GET "base_version=1 class_version=2" -- \
	--method get --attr cpi
# The same Get of a missing group with the record given as raw bytes.
expect Hca2 0x0300 $GET "mgid=ff12:1234::42" -- --method get --comp-mask 1 \
	--data ff121234000000000000000000000042
# A request with an explicit ComponentMask that omits PortGID.
expect Hca2 0x0600 $GET "" -- --method set --comp-mask 0x10001 \
	--record mgid=$G,port_gid=self,join_state=1

exit $fail
