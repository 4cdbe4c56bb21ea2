# Preamble of the ibmcast command-line tests, sourced as
#   . "$(dirname "$(realpath "$0")")/lib/cli.sh" "$@"
# with BUILD SRC as arguments: sets build, src, ib (the built ibmcast),
# tmp (a directory removed on exit) and fail=0, and defines the checks
#   has FILE TEXT      TEXT occurs in $tmp/FILE
#   count FILE TEXT N  TEXT occurs on exactly N lines of $tmp/FILE
# which print FAIL and set fail=1 when they do not hold.
set -u
build=$1
src=$2
ib="$build/ibmcast"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
[ -x "$ib" ] || { echo "no $ib"; exit 1; }
has() { # has FILE TEXT
	grep -qF -- "$2" "$tmp/$1" || { echo "FAIL: '$2' not in $1"; fail=1; }
}
count() { # count FILE TEXT N
	n=$(grep -cF -- "$2" "$tmp/$1")
	[ "$n" -eq "$3" ] || { echo "FAIL: '$2' $n times in $1, expected $3"; fail=1; }
}
