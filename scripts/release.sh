#!/usr/bin/env bash
# The release artefacts, from a clean clone, into target/dist/:
#   memsight-VERSION-ARCH-linux-gnu.tar.gz    per architecture (x86_64, aarch64): the portable
#                                             binary (any Linux with glibc >= 2.28), man pages,
#                                             completions, docs, examples, systemd units,
#                                             licences, THIRD-PARTY.md, CHANGELOG.md, install.sh
#   memsight-VERSION-ARCH-linux-musl.tar.gz   the same around the static binary (no libc needed:
#                                             Alpine and any Linux)
#   memsight-VERSION.tar.xz                   the source, every crate in vendor/ (offline builds)
#   memsight_VERSION-1.dsc, .debian.tar.xz,   Debian's source package and the .deb built from it
#   memsight_VERSION-1_ARCH.deb, ...          with dpkg-buildpackage (debian/), for this machine's
#                                             architecture, with its -dbgsym, .buildinfo, .changes
#   memsight-VERSION-1.src.rpm, ...ARCH.rpm   the SRPM and the RPM rpmbuild makes from it
#                                             (packaging/rpm/memsight.spec)
#   memsight_VERSION-1_arm64.deb, ...         on x86_64, the arm64 .deb and the aarch64 RPM
#   memsight-VERSION-1.aarch64.rpm            cross-built from that .dsc and SRPM
#                                             (scripts/cross-packages.sh)
#   SHA256SUMS and one ASSET.sha256 per artefact
# The packages build offline from the source tarball against the distribution's hwloc and SQLite;
# the tarballs' binaries link both statically (scripts/portable.sh).
#
#   scripts/release.sh [--arch x86_64|aarch64|all] [--host-packages | --for-tests]
#                      [--check | --check-only]
#
# --host-packages  the .deb and RPM for this machine's architecture only, not the cross-built
#                  ones (about 15 minutes less with their checks).
# --for-tests      what scripts/test.sh --full (CI) makes and checks, to stay within CI's time:
#                  the glibc tarballs and this machine's .deb and RPM. The static (musl)
#                  tarballs, the cross-built packages and the RPM compiled a second time for the
#                  byte-for-byte comparison are left to a release, which is made and checked
#                  with neither option (docs/testing.md gives the times).
# --check        then checks what was made (scripts/check-release.sh, scripts/check-packages.sh):
#                the binaries read with readelf/objdump, the packages' contents, scripts and
#                changelogs, lintian and rpmlint, the SRPM and RPM built a second time and
#                compared byte for byte, the .deb taken through install, its timer's run, a
#                stopped run, the security score and purge in a Debian 12 root booted with
#                systemd-nspawn (scripts/check-systemd.sh), the portable binary run in a Debian 11 root and the static
#                one in a root holding only busybox.
# --check-only   those checks alone, on the artefacts already in target/dist (scripts/test.sh
#                --full builds them in the background beside the tests, then checks them).
set -euo pipefail
cd "$(dirname "$0")/.."
arches=(x86_64 aarch64)
check=false build=true cross=true
libcs=(gnu musl) rebuild=true
usage="usage: $0 [--arch x86_64|aarch64|all] [--host-packages | --for-tests] [--check | --check-only]"
while (($#)); do
  case $1 in
    --arch) [[ ${2:-} ]] || { echo "$usage" >&2; exit 2; }; [[ $2 == all ]] || arches=("$2"); shift 2 ;;
    --host-packages) cross=false; shift ;;
    --for-tests) cross=false libcs=(gnu) rebuild=false; shift ;;
    --check) check=true; shift ;;
    --check-only) check=true build=false; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
# (Cross-built from x86_64 Debian only: Debian's archive carries arm64 beside amd64 at one
# address, where Ubuntu keeps arm64 on another host and adding the architecture breaks apt.)
if $cross && ! { [[ $(uname -m) == x86_64 ]] && grep -qx 'ID=debian' /etc/os-release 2>/dev/null; }; then
  echo "memsight: the arm64 packages are cross-built on x86_64 Debian only: this machine's packages alone" >&2
  cross=false
fi
for a in "${arches[@]}"; do
  [[ $a == x86_64 || $a == aarch64 ]] || { echo "memsight: no such architecture: $a" >&2; exit 2; }
done
. scripts/deps.sh
. scripts/release-common.sh
release_tools
fetch_crates
version=$(workspace_version)
dist=target/dist
# The checks (the Debian roots they run in waited for first, when made in the background).
check_artefacts() {
  [[ -z ${1:-} ]] || wait "$1" || { echo "memsight: the Debian roots could not be made" >&2; exit 1; }
  local only=()
  ((${#libcs[@]} == 2)) || only=(--gnu-only)
  bash scripts/check-release.sh "${only[@]}" "$dist" "${arches[@]}"
  if $rebuild; then bash scripts/check-packages.sh "$dist"; else bash scripts/check-packages.sh --no-rebuild "$dist"; fi
  ! $cross || bash scripts/check-cross-packages.sh "$dist"
}
if ! $build; then
  bash scripts/check-release.sh --prepare
  check_artefacts
  exit 0
fi
rm -rf "$dist"
mkdir -p "$dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The packages' changelogs, Debian's copyright file and the spec's bundled crates are made from
# CHANGELOG.md and Cargo.lock and kept in the repository: a release refuses stale ones.
python3 scripts/changelogs.py --check
python3 scripts/notices.py debian-copyright --check
python3 scripts/notices.py rpm-provides --check

# The Debian 11 and 12 roots the checks run in are made while the binaries build (mostly
# download).
prepare=
if $check; then
  bash scripts/check-release.sh --prepare &
  prepare=$!
fi

# THIRD-PARTY.md: the crates compiled in (cargo-about), hwloc's notice from the source the
# portable binaries link (fetched and checked by portable.sh), SQLite's dedication.
host=$(uname -m)
hostbin=$(bash scripts/portable.sh "$host")
[[ -x $hostbin ]] || { echo "memsight: the $host binary did not build" >&2; exit 1; }
tar xjf "$(hwloc_tarball)" -C "$work" "hwloc-$HWLOC_VERSION/COPYING"
cargo about generate --offline --locked --format json -c packaging/notices/about.toml \
  -m crates/memsight/Cargo.toml >"$work/about.json" 2>"$work/about.log" \
  || { cat "$work/about.log" >&2; echo "memsight: cargo-about failed" >&2; exit 1; }
python3 scripts/notices.py third-party "$work/about.json" "$work/hwloc-$HWLOC_VERSION/COPYING" >"$work/THIRD-PARTY.md"

# The staging tree of one binary: what its tarball holds. Man pages and completions come from
# the CLI definition, the same for every architecture: written by the host's binary.
stage_tree() {
  local bin=$1 dir=$2
  mkdir -p "$dir/man/man1" "$dir/complete" "$dir/doc" "$dir/systemd"
  cp "$bin" "$dir/memsight"
  "$hostbin" manpages "$dir/man/man1" >/dev/null
  "$hostbin" completions bash >"$dir/complete/memsight.bash"
  "$hostbin" completions zsh >"$dir/complete/_memsight"
  "$hostbin" completions fish >"$dir/complete/memsight.fish"
  cp README.md CHANGELOG.md LICENSE LICENSE-MIT LICENSE-APACHE "$work/THIRD-PARTY.md" "$dir/"
  install -m755 packaging/install.sh "$dir/install.sh"
  cp docs/*.md docs/*.png "$dir/doc/"
  cp -r docs/methods docs/reference "$dir/doc/"
  cp -r packaging/examples "$dir/examples"
  cp packaging/systemd/*.service packaging/systemd/*.timer "$dir/systemd/"
}

# One tarball, reproducible: every file dated from the last commit (SOURCE_DATE_EPOCH), owned by
# root, in name order.
make_tarball() {
  local bin=$1 name=$2
  local stage=$work/stage
  rm -rf "$stage"
  stage_tree "$bin" "$stage/$name"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
    -C "$stage" -cf - "$name" | gzip -9n >"$dist/$name.tar.gz"
  rm -rf "$stage"
}

for arch in "${arches[@]}"; do
  for libc in "${libcs[@]}"; do
    # (Assigned first: a failed build inside an argument would not stop the script.)
    bin=$(bash scripts/portable.sh "$arch" "$libc")
    make_tarball "$bin" "memsight-$version-$arch-linux-$libc"
  done
done

# The source tarball, then the distributions' packages built from it.
bash scripts/source-tarball.sh "$dist" "$work/THIRD-PARTY.md" >/dev/null
bash scripts/source-packages.sh "$dist"
! $cross || bash scripts/cross-packages.sh "$dist"

(cd "$dist" && sha256sum -- *.tar.gz *.tar.xz *.dsc *.deb *.rpm >SHA256SUMS)
(cd "$dist" && for f in *.tar.gz *.tar.xz *.dsc *.deb *.rpm; do sha256sum -- "$f" >"$f.sha256"; done)
echo "memsight: release artefacts in $dist:" >&2
ls -1 "$dist" | grep -v '\.sha256$' >&2
! $check || check_artefacts "$prepare"
