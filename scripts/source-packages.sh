#!/usr/bin/env bash
# Debian's and the RPM distributions' packages, built from the source tarball in DIST the way
# each distribution builds: dpkg-buildpackage with debian/ (.dsc, .debian.tar.xz, .deb, -dbgsym,
# .buildinfo, .changes) and rpmbuild -ba with packaging/rpm/memsight.spec (SRPM and RPM), both
# offline, for this machine's architecture. scripts/release.sh runs it.
#
#   scripts/source-packages.sh DIST
#
# The Rust toolchain is rustup's (the packages name cargo and rustc >= 1.89 among their build
# dependencies, newer than Debian 12's), so dpkg-buildpackage runs with -d and rpmbuild with
# --nodeps; Debian's libhwloc-dev and libsqlite3-dev are linked. Both builds unpack the source
# at one path and share one cargo target directory: the RPM's compile finds the .deb's done
# (same source, same flags), so the code is compiled once. `release.sh --check` builds the SRPM
# and RPM again, compiled afresh, and compares them byte for byte (scripts/check-packages.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-common.sh
dist=$(realpath "${1:?usage: $0 DIST}")
version=$(workspace_version)
src=$dist/memsight-$version.tar.xz
[[ -f $src ]] || { echo "memsight: no source tarball $src" >&2; exit 1; }
build=$(source_build_dir)
rm -rf "$build"
mkdir -p "$build"
fail() { tail -n 40 "$1" >&2; echo "memsight: $2 (log: $1)" >&2; exit 1; }

# Debian: the orig tarball is the source tarball under Debian's name; debian/ goes in as the
# packaging's own tarball (3.0 (quilt)).
cp "$src" "$build/memsight_$version.orig.tar.xz"
tar xJf "$src" -C "$build"
cp -r debian "$build/memsight-$version/"
cargo_dir=$(source_cargo_dir)
(cd "$build/memsight-$version" && CARGO_TARGET_DIR=$cargo_dir dpkg-buildpackage -us -uc -d) \
  >"$build/deb.log" 2>&1 || fail "$build/deb.log" "dpkg-buildpackage failed"
rm -rf "$build/memsight-$version"
cp "$build/memsight_$version.orig.tar.xz" "$build"/memsight_"$version"-1?* "$build"/memsight-dbgsym_"$version"-1_*.deb "$dist/"

# The SRPM and the RPM.
mkdir -p "$build/rpm/SOURCES"
cp "$src" "$build/rpm/SOURCES/"
rpm_build -ba "$packaging_spec" >"$build/rpm.log" 2>&1 || fail "$build/rpm.log" "rpmbuild failed"
cp "$build"/rpm/SRPMS/*.src.rpm "$build"/rpm/RPMS/*/*.rpm "$dist/"
