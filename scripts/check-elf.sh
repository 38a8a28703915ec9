#!/usr/bin/env bash
# Reads a memsight binary and checks that it runs on any Linux with glibc 2.28 or later:
# built for the named architecture, needing no shared library beyond glibc's own, and using no
# glibc symbol version newer than 2.28; with `musl`, that it is static (no loader, no library).
# Either way: a GNU build-id, and no path of the machine that built it (cargo's registry, the
# checkout, hwloc's build directory).
#
#   scripts/check-elf.sh BINARY x86_64|aarch64 [gnu|musl]
set -euo pipefail
bin=${1:?usage: $0 BINARY x86_64|aarch64 [gnu|musl]}
arch=${2:?usage: $0 BINARY x86_64|aarch64 [gnu|musl]}
libc=${3:-gnu}
. "$(dirname "$0")/release-common.sh"
fail() { echo "memsight: $bin: $*" >&2; exit 1; }
[[ -f $bin ]] || fail "no such file"

machine=$(readelf -h "$bin" | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}')
case $arch in
  x86_64) [[ $machine == *X86-64* ]] ;;
  aarch64) [[ $machine == *AArch64* ]] ;;
  *) false ;;
esac || fail "built for '$machine', not $arch"

readelf -n "$bin" | grep -q "Build ID:" || fail "has no GNU build-id"
paths=$(build_paths_in "$bin")
[[ -z $paths ]] || fail "names build paths: $(tr '\n' ' ' <<<"$paths")"
if [[ $libc == musl ]]; then
  [[ -z $(readelf -d "$bin" 2>/dev/null | grep "(NEEDED)" || true) ]] || fail "needs shared libraries"
  [[ -z $(readelf -l "$bin" | grep "program interpreter" || true) ]] || fail "asks for a loader"
  echo "memsight: $bin: $machine, static (no loader, no shared library)" >&2
  exit 0
fi

# Only glibc's own libraries.
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[[ -n $needed ]] || fail "not dynamically linked against glibc"
for lib in $needed; do
  glibc_library "$lib" || fail "needs $lib, which is not glibc's"
done
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
case $interp in
  /lib64/ld-linux-x86-64.so.2 | /lib/ld-linux-aarch64.so.1) ;;
  *) fail "asks for the loader '$interp'" ;;
esac

# The newest symbol version it binds to; every GLIBC_x.y tag in the dynamic symbol table counts.
versions=$(objdump -T "$bin" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sed 's/GLIBC_//' | sort -uV)
[[ -n $versions ]] || fail "binds to no versioned glibc symbol"
newest=$(tail -n 1 <<<"$versions")
if ! glibc_at_most_floor "$newest"; then
  syms=$(objdump -T "$bin" | grep -F "GLIBC_$newest" | awk '{print $NF}')
  fail "uses GLIBC_$newest symbols ($(tr '\n' ' ' <<<"$syms" | cut -c1-120)), newer than $GLIBC_FLOOR"
fi
echo "memsight: $bin: $machine, needs $(echo $needed | tr ' ' ','), newest symbol GLIBC_$newest" >&2
