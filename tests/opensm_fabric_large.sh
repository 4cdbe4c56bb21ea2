#!/bin/bash
# OpenSM on a three-level fat tree of 10,368 HCAs (32 pods of 18 leaves of
# 18 hosts, 18 aggregation switches per pod, 324 spines; 11,844 nodes, past
# ibsim's 2,048): SUBNET UP, and the diags agree with the fabric
# (tests/lib/opensm_fabric.sh; ibroute on every 100th switch). Takes
# minutes: CTest label opensm-fabric-large, and skipped unless
# IMC_TEST_LARGE=1 (IMC_TEST_LARGE=1 ctest -L opensm-fabric-large).
# Arguments: build dir, source dir.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
if [ "${IMC_TEST_LARGE:-}" != 1 ]; then
	echo "SKIP: 10,368 HCAs take minutes; set IMC_TEST_LARGE=1 to run"
	exit 77
fi
osmf_tools
osmf_check "fat-tree:pods=32,leaves=18,hosts=18,aggs=18,spines=324" 100 1700 1200
exit $fail
