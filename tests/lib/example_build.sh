# Sourced by the tests that build programs against an installed ibmcast
# the way an application does. Arguments of the sourcing script: build
# directory, source directory. Sets build, src, cc (the build's C
# compiler) and san (the sanitizer flags a sanitized build's libraries
# need in the program linking them).
build=$(realpath "${1:?build directory}")
src=$(realpath "${2:?source directory}")
san=
grep -q '^IMC_SANITIZE:BOOL=ON$' "$build/CMakeCache.txt" 2>/dev/null &&
	san="-fsanitize=address,undefined"
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cc=${cc:-${CC:-cc}}
