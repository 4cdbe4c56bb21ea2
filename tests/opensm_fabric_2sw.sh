#!/bin/bash
# OpenSM on the embedded fabric built from ibsim's two-switch example
# (examples/ibsim-2sw.net): SUBNET UP, and ibnetdiscover, saquery,
# ibroute, smpquery and perfquery agree with the net file and with the
# fabric (tests/lib/opensm_fabric.sh). Arguments: build dir, source dir.
set -u
# shellcheck source-path=SCRIPTDIR source=lib/opensm_fabric.sh
. "$(dirname "$(realpath "$0")")/lib/opensm_fabric.sh" "$@"
osmf_tools
osmf_check "$src/examples/ibsim-2sw.net" 1 120 60
exit $fail
