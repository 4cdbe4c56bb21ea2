#!/bin/bash
# OpenSM on a two-level fat tree of 1,152 HCAs (64 leaves of 18 hosts, 18
# spines; 1,234 nodes): SUBNET UP, and the diags agree with the fabric
# (tests/lib/opensm_fabric.sh; ibroute on every 8th switch).
# Arguments: build dir, source dir.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools
osmf_check "fat-tree:leaves=64,hosts=18,spines=18" 8 280 200
exit $fail
