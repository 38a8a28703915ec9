#!/usr/bin/env bash
# The arm64 .deb and the aarch64 RPM, cross-built on an x86_64 machine from the source packages
# scripts/source-packages.sh made (the .dsc and the SRPM in DIST), the way each distribution
# cross-builds: dpkg-buildpackage -a arm64 with Debian's crossbuild-essential-arm64 and the arm64
# -dev packages installed beside the build machine's (multiarch), and rpmbuild --rebuild --target
# aarch64 with the same cross gcc and libraries. The built binary writes the man pages and
# completions and is smoke-tested under qemu-user-static (debian/rules and the spec say how).
#
#   scripts/cross-packages.sh DIST
#
# scripts/release.sh runs it; scripts/check-cross-packages.sh checks what it made.
#
# Needs root for the packages it installs (or the apt-get line it prints) and for the root's
# chroot. The compile shares the host build's cargo directory and build path (its build scripts
# and proc macros are the build machine's either way); the RPM's compile finds the .deb's.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-common.sh
dist=$(realpath "${1:?usage: $0 DIST}")
version=$(workspace_version)
fail() { echo "memsight: cross packages: $*" >&2; exit 1; }
say() { echo "memsight: cross packages: $*" >&2; }
[[ $(uname -m) == x86_64 ]] || fail "cross-builds from x86_64 only (this is $(uname -m))"
srpm=$dist/memsight-$version-1.src.rpm
dsc=$dist/memsight_$version-1.dsc

# What the cross builds need: the arm64 architecture added to dpkg, the cross toolchain, the
# arm64 libraries memsight links with their pkg-config (pkgconf:arm64), qemu-user-static (with binfmt-support, which registers it for
# the arm64 root's programs), debootstrap for that root, and Rust's aarch64 standard library.
cross_tools() {
  local p missing=() pkgs=(crossbuild-essential-arm64 qemu-user-static binfmt-support debootstrap
    pkgconf:arm64 libhwloc-dev:arm64 libsqlite3-dev:arm64 libudev-dev:arm64)
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    [[ $(id -u) == 0 ]] || fail "missing packages: sudo dpkg --add-architecture arm64 && sudo apt-get update && sudo apt-get install ${missing[*]}"
    say "installing ${missing[*]}"
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  rustup target list --installed 2>/dev/null | grep -qx aarch64-unknown-linux-gnu \
    || rustup target add aarch64-unknown-linux-gnu >&2
}

# The build directory the host's packages were built at (their compiled crates' paths match).
build=$(source_build_dir)
cargo_dir=$(source_cargo_dir)

build_deb() {
  rm -rf "$build/memsight-$version"
  mkdir -p "$build"
  dpkg-source -x "$dsc" "$build/memsight-$version" >"$build/cross-deb.log" 2>&1 \
    || fail "dpkg-source -x $dsc failed (log: $build/cross-deb.log)"
  # (-B: the architecture's binary packages only, the source package being the host build's;
  # -d: the toolchain is rustup's, newer than Debian 12's cargo.)
  (cd "$build/memsight-$version" && CARGO_TARGET_DIR=$cargo_dir dpkg-buildpackage -a arm64 -Pcross -B -us -uc -d) \
    >>"$build/cross-deb.log" 2>&1 || { tail -n 40 "$build/cross-deb.log" >&2; fail "dpkg-buildpackage -a arm64 failed (log: $build/cross-deb.log)"; }
  rm -rf "$build/memsight-$version"
  cp "$build"/memsight_"$version"-1_arm64.* "$build"/memsight-dbgsym_"$version"-1_arm64.deb "$dist/"
}

build_rpm() {
  rm -rf "$build/rpm/RPMS/aarch64"
  mkdir -p "$build/rpm/SOURCES"
  MEMSIGHT_RPM_STRIP=aarch64-linux-gnu-strip MEMSIGHT_CARGO_TARGET_DIR=$cargo_dir \
    rpm_build --rebuild --target aarch64 "$srpm" >"$build/cross-rpm.log" 2>&1 \
    || { tail -n 40 "$build/cross-rpm.log" >&2; fail "rpmbuild --rebuild --target aarch64 failed (log: $build/cross-rpm.log)"; }
  cp "$build"/rpm/RPMS/aarch64/memsight-"$version"-1.aarch64.rpm "$dist/"
}

for f in "$dsc" "$srpm"; do [[ -f $f ]] || fail "no $f (scripts/source-packages.sh makes it)"; done
cross_tools
build_deb
build_rpm
say "built memsight_${version}-1_arm64.deb and memsight-$version-1.aarch64.rpm"
