#!/usr/bin/env bash
# The source tarball the distribution packages build from, offline:
#   memsight-VERSION.tar.xz    memsight's tracked files (debian/ left out: Debian adds it as its
#                              own tarball), every crate it compiles in vendor/ with
#                              .cargo/config.toml pointing cargo there, and THIRD-PARTY.md
#
#   scripts/source-tarball.sh OUTDIR THIRD-PARTY.md
#
# vendor/ holds the crates for Linux only (cargo-vendor-filterer: crates for other systems
# become empty stubs, which cargo never compiles here), about 200 MB instead of 320 MB.
# Reproducible: the files dated from SOURCE_DATE_EPOCH (release-common.sh), sorted, owned by
# root, compressed with one xz thread.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-common.sh
out=${1:?usage: $0 OUTDIR THIRD-PARTY.md}
notice=${2:?usage: $0 OUTDIR THIRD-PARTY.md}
# (Where release.sh installs it, when run on its own.)
export PATH="${MEMSIGHT_TOOLS_ROOT:-$HOME/.local}/bin:$PATH"
cargo vendor-filterer --version >/dev/null 2>&1 \
  || { echo "memsight: cargo-vendor-filterer is missing: cargo install --locked --root ~/.local cargo-vendor-filterer@0.5.18 (scripts/release.sh installs it)" >&2; exit 1; }
fetch_crates
version=$(workspace_version)
name=memsight-$version
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/.cargo"
# The tracked files as they are in the working tree (a release is made from a clean checkout).
git ls-files -z | grep -zv '^debian/' | xargs -0 cp --parents -t "$stage/$name"
cp "$notice" "$stage/$name/THIRD-PARTY.md"
cargo vendor-filterer --offline --versioned-dirs \
  --platform=x86_64-unknown-linux-gnu --platform=aarch64-unknown-linux-gnu \
  --platform=x86_64-unknown-linux-musl --platform=aarch64-unknown-linux-musl \
  "$stage/$name/vendor" >/dev/null 2>"$stage/vendor.log" \
  || { cat "$stage/vendor.log" >&2; echo "memsight: vendoring the crates failed" >&2; exit 1; }
cat >"$stage/$name/.cargo/config.toml" <<'TOML'
# Every crate from vendor/ (scripts/source-tarball.sh), never from the network.
[source.crates-io]
replace-with = "vendored-sources"

[source.vendored-sources]
directory = "vendor"

[net]
offline = true
TOML
mkdir -p "$out"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
  --mode=u+rwX,go+rX,go-w -C "$stage" -cf - "$name" | xz -T1 -6 >"$out/$name.tar.xz.part"
mv -f "$out/$name.tar.xz.part" "$out/$name.tar.xz"
echo "$out/$name.tar.xz"
