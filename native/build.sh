#!/bin/sh
# Builds the native helper with the machine's C compiler: native/build/umbra-helper, from every .c file
# here (umbra-helper.c: shadow branches; sandbox.c, landlock.c, hidden.c, cgroup.c: the sandbox; common.c: shared by both).
set -eu
cd "$(dirname "$0")"
mkdir -p build
tmp="build/umbra-helper.tmp.$$"
trap 'rm -f "$tmp"' EXIT
${CC:-cc} -O2 -Wall -Wextra -Werror -std=c11 -pthread -o "$tmp" umbra-helper.c common.c sandbox.c landlock.c hidden.c cgroup.c
mv -f "$tmp" build/umbra-helper
