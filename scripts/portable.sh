#!/usr/bin/env bash
# Builds the portable binary: memsight for any Linux with glibc 2.28 or later, needing no shared
# library beyond glibc's own (libc, libm, libpthread, libdl, the loader), then checks that it does;
# or, with `musl`, the static binary: no shared library and no loader at all, for Alpine and any
# Linux whatever its libc.
#
#   scripts/portable.sh [--tools|--prepare] [x86_64|aarch64] [gnu|musl]   (default: x86_64 gnu)
#
# --tools     only zig, cargo-zigbuild and the Rust target
# --prepare   only what the build needs first (the tools and hwloc): scripts/test.sh runs it in
#             the background while the lints run.
#
# hwloc is linked statically: its source is Debian's (the orig tarball of the libhwloc15 this
# project is tested with, from Debian's package pool, checked against a pinned SHA-256), built
# with zig's C compiler for the target and glibc 2.28, without libudev, libxml2 or plugins (sysfs
# and /proc are all memsight reads). memsight itself is built with cargo-zigbuild for
# ARCH-unknown-linux-gnu.2.28. Zig and cargo-zigbuild come from PyPI (`pip install ziglang
# cargo-zigbuild`), installed for the user when missing.
#
# Both carry a GNU build-id (debuggers find separate debug files by it) and name no path of the
# machine that built them (the checkout, cargo's registry and hwloc's build directory remapped).
#
# Output: target/portable/ARCH/memsight or target/portable/ARCH-musl/memsight (stripped), checked
# by scripts/check-elf.sh. The hwloc build is kept under target/portable/hwloc-ARCH[-musl] and reused; cargo builds in target/portable/cargo
# (its own directory, so that it can run beside the tests' cargo, which locks target/).
set -euo pipefail
cd "$(dirname "$0")/.."
# (SOURCE_DATE_EPOCH among others: the same for every build of one commit.)
. scripts/release-common.sh
prepare_only=false
tools_only=false
if [[ ${1:-} == --prepare ]]; then prepare_only=true; shift; fi
if [[ ${1:-} == --tools ]]; then tools_only=true; shift; fi
arch=${1:-x86_64}
libc=${2:-gnu}
case $arch/$libc in
  x86_64/gnu | aarch64/gnu | x86_64/musl | aarch64/musl) ;;
  *) echo "usage: $0 [--tools|--prepare] [x86_64|aarch64] [gnu|musl]" >&2; exit 2 ;;
esac

GLIBC=2.28
out=target/portable
mkdir -p "$out"

# Zig and cargo-zigbuild, from PyPI (pip puts a user install's commands in ~/.local/bin).
export PATH="$PATH:$HOME/.local/bin"
if ! command -v cargo-zigbuild >/dev/null || ! python3 -c 'import ziglang' 2>/dev/null; then
  echo "memsight: installing ziglang and cargo-zigbuild from PyPI (once)" >&2
  python3 -m pip install --quiet --user ziglang cargo-zigbuild \
    || python3 -m pip install --quiet --break-system-packages --user ziglang cargo-zigbuild
fi
zig=$(python3 -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
rustup target list --installed 2>/dev/null | grep -q "^$arch-unknown-linux-$libc\$" \
  || rustup target add "$arch-unknown-linux-$libc"
# What zig and cargo-zigbuild are asked for: glibc's version in the target pins the floor.
if [[ $libc == gnu ]]; then
  zig_target=$arch-linux-gnu.$GLIBC cargo_target=$arch-unknown-linux-gnu.$GLIBC suffix=
else
  zig_target=$arch-linux-musl cargo_target=$arch-unknown-linux-musl suffix=-musl
fi
$tools_only && exit 0

# hwloc, static, for the target's libc (v3: built with its source directory remapped and its
# run-time state directory at /run, not under the build prefix).
prefix=$PWD/$out/hwloc-$arch$suffix-v3
if [[ ! -f $prefix/lib/libhwloc.a ]]; then
  tarball=$(hwloc_tarball)
  src=$(mktemp -d)
  trap 'rm -rf "$src"' EXIT
  tar xjf "$tarball" -C "$src"
  tools=$PWD/$out/zig-$arch$suffix
  mkdir -p "$tools"
  printf '#!/bin/sh\nexec "%s" cc -target %s "$@"\n' "$zig" "$zig_target" >"$tools/cc"
  printf '#!/bin/sh\nexec "%s" ar "$@"\n' "$zig" >"$tools/ar"
  chmod +x "$tools/cc" "$tools/ar"
  echo "memsight: building hwloc $HWLOC_VERSION for $zig_target (once)" >&2
  (
    cd "$src/hwloc-$HWLOC_VERSION"
    ./configure -q CC="$tools/cc" AR="$tools/ar" RANLIB=true --host="$arch-linux-$libc" \
      CFLAGS="-O2 -ffile-prefix-map=$src=/usr/src" \
      --prefix="$prefix" --runstatedir=/run --localstatedir=/var --enable-static --disable-shared --disable-plugins \
      --disable-libudev --disable-libxml2 --disable-pci --disable-opencl --disable-cuda \
      --disable-nvml --disable-rsmi --disable-levelzero --disable-gl --disable-cairo \
      --disable-doxygen --disable-readme
    make -s -j"$(nproc)" -C include install
    make -s -j"$(nproc)" -C hwloc install
  ) >"$prefix.log" 2>&1 || { tail -n 30 "$prefix.log" >&2; echo "memsight: hwloc did not build (log: $prefix.log)" >&2; exit 1; }
  mkdir -p "$prefix/lib/pkgconfig"
  cp "$src/hwloc-$HWLOC_VERSION/hwloc.pc" "$prefix/lib/pkgconfig/hwloc.pc"
fi

$prepare_only && exit 0

# memsight, against that hwloc only (no system pkg-config directory is searched), stripped by the
# linker (no strip tool for the target is needed) and without the debug line tables the release
# profile keeps for profiling a local build.
# A linker or runner chosen for the target elsewhere (scripts/test-aarch64.sh sets gcc's) would
# link against the build machine's libraries: zig's own is used.
registry=${CARGO_HOME:-$HOME/.cargo}/registry/src
flags="--remap-path-prefix=$PWD=/usr/src/memsight --remap-path-prefix=$registry=/usr/src/cargo-registry"
flags+=" -C link-arg=-Wl,--build-id=sha1"
env -u CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER -u CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER \
  -u CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER RUSTFLAGS="$flags" \
  CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig PKG_CONFIG_ALLOW_CROSS=1 \
  CARGO_TARGET_DIR=$PWD/$out/cargo \
  cargo zigbuild --locked --release -q --target "$cargo_target" -p memsight
mkdir -p "$out/$arch$suffix"
bin=$out/$arch$suffix/memsight
# Replaced in one step: another build of the same binary may be copying it at the same time. The
# compilers' version notes (.comment) say nothing a user needs; binutils' objcopy reads only its
# own architecture, so another's needs the cross one (binutils-ARCH-linux-gnu).
objcopy=objcopy
[[ $arch == "$(uname -m)" ]] || objcopy=$arch-linux-gnu-objcopy
command -v "$objcopy" >/dev/null || { echo "memsight: $objcopy is missing: sudo apt-get install binutils-${arch//_/-}-linux-gnu" >&2; exit 1; }
"$objcopy" --remove-section=.comment "$out/cargo/$arch-unknown-linux-$libc/release/memsight" "$bin.$$"
mv -f "$bin.$$" "$bin"

bash scripts/check-elf.sh "$bin" "$arch" "$libc"
echo "$bin"
