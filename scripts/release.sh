#!/usr/bin/env bash
# The release artefacts, from a clean clone, into target/dist/:
#   memsight-VERSION-ARCH-linux-gnu.tar.gz   per architecture (x86_64, aarch64): the portable
#                                            binary (any Linux with glibc >= 2.28), man pages,
#                                            bash/zsh/fish completions, docs, examples, systemd
#                                            units, licence
#   memsight-VERSION-1.ARCH.rpm              RHEL, Rocky, Alma, Fedora, SLES (rpmbuild)
#   memsight_VERSION-1_ARCH.deb              Debian, Ubuntu (dpkg-deb)
#   SHA256SUMS
# Every package holds the same portable binary (scripts/portable.sh) and requires nothing beyond
# glibc; the allocators and PMDK that the studies load at run time are recommended, not required.
#
#   scripts/release.sh [--arch x86_64|aarch64|all] [--check]
#
# --check   then checks what was made (scripts/check-release.sh): the binaries read with
#           readelf/objdump, the packages' contents, dependencies and scripts, and the x86_64
#           binary and packages run in a Debian 11 root (glibc 2.31).
set -euo pipefail
cd "$(dirname "$0")/.."
arches=(x86_64 aarch64)
check=false
while (($#)); do
  case $1 in
    --arch) [[ $2 == all ]] || arches=("$2"); shift 2 ;;
    --check) check=true; shift ;;
    *) echo "usage: $0 [--arch x86_64|aarch64|all] [--check]" >&2; exit 2 ;;
  esac
done
for a in "${arches[@]}"; do
  [[ $a == x86_64 || $a == aarch64 ]] || { echo "memsight: no such architecture: $a" >&2; exit 2; }
done
. scripts/deps.sh
for tool in rpmbuild dpkg-deb; do
  command -v $tool >/dev/null || { echo "memsight: $tool is missing: sudo apt-get install rpm dpkg-dev" >&2; exit 1; }
done

. scripts/release-common.sh
version=$(workspace_version)
url=$(grep -m 1 '^repository = ' Cargo.toml | sed 's/^repository = "\(.*\)"$/\1/')
dist=target/dist
rm -rf "$dist"
mkdir -p "$dist"
# Reproducible archives: every file dated from the last commit (SOURCE_DATE_EPOCH, set in
# release-common.sh), owned by root.

# The staging tree of one architecture: what the tarball holds, and what the packages take.
# Man pages and completions come from the CLI definition, the same for every architecture:
# written by GEN, a binary that runs here.
stage_tree() {
  local gen=$1 bin=$2 dir=$3
  mkdir -p "$dir/man/man1" "$dir/complete" "$dir/doc" "$dir/systemd"
  cp "$bin" "$dir/memsight"
  "$gen" manpages "$dir/man/man1" >/dev/null
  "$gen" completions bash >"$dir/complete/memsight.bash"
  "$gen" completions zsh >"$dir/complete/_memsight"
  "$gen" completions fish >"$dir/complete/memsight.fish"
  cp README.md CHANGELOG.md LICENSE LICENSE-MIT LICENSE-APACHE "$dir/"
  cp docs/*.md docs/*.png "$dir/doc/"
  cp -r docs/methods docs/reference "$dir/doc/"
  cp -r packaging/examples "$dir/examples"
  cp packaging/systemd/*.service packaging/systemd/*.timer "$dir/systemd/"
}

# The .deb, with dpkg-deb around the staging tree: Debian's paths, the control file from
# packaging/deb/control, a machine-readable copyright file, no maintainer scripts (the metrics
# timer is installed, never enabled by installing).
make_deb() {
  local dir=$1 arch=$2 debarch root
  case $arch in x86_64) debarch=amd64 ;; aarch64) debarch=arm64 ;; esac
  root=$(mktemp -d)/memsight
  local doc=$root/usr/share/doc/memsight
  install -Dm755 "$dir/memsight" "$root/usr/bin/memsight"
  install -d "$root/usr/share/man/man1" "$doc" "$root/usr/lib/systemd/system"
  for m in "$dir"/man/man1/*.1; do gzip -9nc "$m" >"$root/usr/share/man/man1/$(basename "$m").gz"; done
  install -Dm644 "$dir/complete/memsight.bash" "$root/usr/share/bash-completion/completions/memsight"
  install -Dm644 "$dir/complete/_memsight" "$root/usr/share/zsh/vendor-completions/_memsight"
  install -Dm644 "$dir/complete/memsight.fish" "$root/usr/share/fish/vendor_completions.d/memsight.fish"
  cp -r "$dir/README.md" "$dir/CHANGELOG.md" "$dir"/doc/* "$dir/examples" "$doc/"
  install -m644 "$dir"/systemd/* "$root/usr/lib/systemd/system/"
  {
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: memsight"
    echo "Source: $url"
    echo
    echo "Files: *"
    echo "Copyright: 2026 memsight developers"
    echo "License: MIT or Apache-2.0"
    echo
    echo "License: MIT"
    sed -e 's/^$/./' -e 's/^/ /' "$dir/LICENSE-MIT"
    echo
    echo "License: Apache-2.0"
    echo " On Debian systems, the complete text of the Apache License, Version 2.0, is in"
    echo " /usr/share/common-licenses/Apache-2.0."
  } >"$doc/copyright"
  chmod -R u+rwX,go+rX,go-w "$root"
  install -d "$root/DEBIAN"
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$debarch/" -e "s|@URL@|$url|" \
    -e "s/@SIZE@/$(du -sk --apparent-size "$root/usr" | cut -f1)/" packaging/deb/control >"$root/DEBIAN/control"
  find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
  dpkg-deb --root-owner-group -Zxz --build "$root" "$dist/memsight_${version}-1_$debarch.deb" >/dev/null
  rm -rf "$(dirname "$root")"
}

# The RPM, with rpmbuild in a scratch top directory, around the staging tree.
make_rpm() {
  local dir=$1 arch=$2 top
  top=$(mktemp -d)
  rpmbuild -bb --quiet --target "$arch-linux" \
    --define "_topdir $top" --define "_sourcedir $dir" \
    --define "memsight_version $version" \
    --define "memsight_url $url" \
    --define "source_date_epoch_from_changelog 0" --define "use_source_date_epoch_as_buildtime 1" \
    packaging/rpm/memsight.spec >"$top/build.log" 2>&1 \
    || { cat "$top/build.log" >&2; rm -rf "$top"; echo "memsight: rpmbuild failed" >&2; exit 1; }
  find "$top/RPMS" -name '*.rpm' -exec cp {} "$dist/" \;
  rm -rf "$top"
}

# The Debian 11 root the checks run in is made while the binaries build (it is mostly download).
prepare=
if $check; then
  bash scripts/check-release.sh --prepare &
  prepare=$!
fi

host=$(uname -m)
hostbin=
for arch in "${arches[@]}"; do
  bin=$(bash scripts/portable.sh "$arch")
  [[ $arch != "$host" ]] || hostbin=$bin
  # The host's binary writes the pages (asked for once, only when this architecture is not it).
  [[ -n $hostbin ]] || hostbin=$(bash scripts/portable.sh "$host")
  gen=$hostbin
  name=memsight-$version-$arch-linux-gnu
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  stage_tree "$gen" "$bin" "$stage/$name"

  # The tarball.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$stage" -cf - "$name" | gzip -9n >"$dist/$name.tar.gz"

  make_deb "$stage/$name" "$arch"
  make_rpm "$stage/$name" "$arch"
  rm -rf "$stage"
  trap - EXIT
done

(cd "$dist" && sha256sum -- *.tar.gz *.rpm *.deb >SHA256SUMS)
echo "memsight: release artefacts in $dist:" >&2
ls -1 "$dist" >&2
if $check; then
  [[ -z $prepare ]] || wait "$prepare" || { echo "memsight: the Debian 11 root could not be made" >&2; exit 1; }
  bash scripts/check-release.sh "$dist" "${arches[@]}"
fi
