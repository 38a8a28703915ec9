#!/usr/bin/env bash
# Builds the portable binary: memsight for any Linux with glibc 2.28 or later, needing no shared
# library beyond glibc's own (libc, libm, libpthread, libdl, the loader), then checks that it does.
#
#   scripts/portable.sh [x86_64|aarch64]     (default: x86_64)
#
# hwloc is linked statically: its source is Debian's (the orig tarball of the libhwloc15 this
# project is tested with, from Debian's package pool, checked against a pinned SHA-256), built
# with zig's C compiler for the target and glibc 2.28, without libudev, libxml2 or plugins (sysfs
# and /proc are all memsight reads). memsight itself is built with cargo-zigbuild for
# ARCH-unknown-linux-gnu.2.28. Zig and cargo-zigbuild come from PyPI (`pip install ziglang
# cargo-zigbuild`), installed for the user when missing.
#
# Output: target/portable/ARCH/memsight (stripped). The hwloc build is kept under
# target/portable/hwloc-ARCH and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-x86_64}
case $arch in
  x86_64 | aarch64) ;;
  *) echo "usage: $0 [x86_64|aarch64]" >&2; exit 2 ;;
esac

HWLOC_VERSION=2.9.0
HWLOC_URL=http://deb.debian.org/debian/pool/main/h/hwloc/hwloc_${HWLOC_VERSION}.orig.tar.bz2
HWLOC_SHA256=b3fb1a43a14d8fbcd8e976de5ede2ea7ce1d768ed173adb33c7ceaaf098dc970
GLIBC=2.28
out=target/portable
mkdir -p "$out"

# Zig and cargo-zigbuild, from PyPI.
if ! command -v cargo-zigbuild >/dev/null || ! python3 -c 'import ziglang' 2>/dev/null; then
  echo "memsight: installing ziglang and cargo-zigbuild from PyPI (once)" >&2
  python3 -m pip install --quiet --user ziglang cargo-zigbuild \
    || python3 -m pip install --quiet --break-system-packages --user ziglang cargo-zigbuild
  export PATH="$HOME/.local/bin:$PATH"
fi
zig=$(python3 -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
rustup target list --installed 2>/dev/null | grep -q "^$arch-unknown-linux-gnu\$" \
  || rustup target add "$arch-unknown-linux-gnu"

# hwloc, static, for the target's glibc.
prefix=$PWD/$out/hwloc-$arch
if [[ ! -f $prefix/lib/libhwloc.a ]]; then
  tarball=$out/hwloc_${HWLOC_VERSION}.orig.tar.bz2
  [[ -f $tarball ]] || curl -fsSL --retry 3 -o "$tarball" "$HWLOC_URL"
  echo "$HWLOC_SHA256  $tarball" | sha256sum -c --quiet - \
    || { echo "memsight: $tarball does not match its pinned SHA-256" >&2; rm -f "$tarball"; exit 1; }
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  tar xjf "$tarball" -C "$src"
  tools=$PWD/$out/zig-$arch
  mkdir -p "$tools"
  printf '#!/bin/sh\nexec "%s" cc -target %s-linux-gnu.%s "$@"\n' "$zig" "$arch" "$GLIBC" >"$tools/cc"
  printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$tools/ar"
  chmod +x "$tools/cc" "$tools/ar"
  echo "memsight: building hwloc $HWLOC_VERSION for $arch, glibc $GLIBC (once)" >&2
  (
    cd "$src/hwloc-$HWLOC_VERSION"
    ./configure -q CC="$tools/cc" AR="$tools/ar" RANLIB=true --host="$arch-linux-gnu" \
      --prefix="$prefix" --enable-static --disable-shared --disable-plugins \
      --disable-libudev --disable-libxml2 --disable-pci --disable-opencl --disable-cuda \
      --disable-nvml --disable-rsmi --disable-levelzero --disable-gl --disable-cairo \
      --disable-doxygen --disable-readme >/dev/null
    make -s -j"$(nproc)" -C include install >/dev/null
    make -s -j"$(nproc)" -C hwloc install >/dev/null
  )
  mkdir -p "$prefix/lib/pkgconfig"
  cp "$src/hwloc-$HWLOC_VERSION/hwloc.pc" "$prefix/lib/pkgconfig/hwloc.pc"
fi

# memsight, against that hwloc only (no system pkg-config directory is searched).
PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_ALLOW_CROSS=1 \
  cargo zigbuild --locked --release -q --target "$arch-unknown-linux-gnu.$GLIBC" -p memsight
mkdir -p "$out/$arch"
bin=$out/$arch/memsight
case $arch in
  x86_64) strip=strip ;;
  aarch64) strip=aarch64-linux-gnu-strip; command -v $strip >/dev/null || strip=true ;;
esac
built=${CARGO_TARGET_DIR:-target}/$arch-unknown-linux-gnu/release/memsight
$strip -o "$bin" "$built" 2>/dev/null || cp "$built" "$bin"

# The checks: right architecture, needed libraries only glibc's, no symbol newer than 2.28.
machine=$(readelf -h "$bin" | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}')
case $arch in
  x86_64) [[ $machine == *X86-64* ]] ;;
  aarch64) [[ $machine == *AArch64* ]] ;;
esac || { echo "memsight: $bin is for '$machine', not $arch" >&2; exit 1; }
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for lib in $needed; do
  case $lib in
    libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-x86-64.so.2 | ld-linux-aarch64.so.1) ;;
    *) echo "memsight: $bin needs $lib, which is not glibc's" >&2; exit 1 ;;
  esac
done
newest=$(objdump -T "$bin" | grep -oE 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sed 's/GLIBC_//' | sort -V | tail -n 1)
if [[ $(printf '%s\n%s\n' "$newest" "$GLIBC" | sort -V | tail -n 1) != "$GLIBC" ]]; then
  echo "memsight: $bin uses GLIBC_$newest symbols, newer than $GLIBC" >&2
  exit 1
fi
echo "memsight: $bin: $machine, needs $(echo $needed | tr ' ' ','), newest symbol GLIBC_$newest" >&2
echo "$bin"
