#!/usr/bin/env bash
# Checks the cross-built arm64 .deb and aarch64 RPM (scripts/cross-packages.sh) as
# check-packages.sh checks the build machine's:
#   - architecture: the packages' fields and the binary's ELF machine are AArch64;
#   - contents: binary, man pages, completions, units, examples, licences; a GNU build-id, no
#     build path; the RPM provides the spec's bundled crates;
#   - lintian (--fail-on error,warning) on the arm64 .changes and rpmlint on the aarch64 RPM, with
#     the same overrides as the build machine's packages;
#   - in an arm64 Debian 12 root (debootstrap, its programs run by qemu-user-static through
#     binfmt_misc): the .deb installs with dpkg, `memsight --version` and `memsight env` run.
#
#   scripts/check-cross-packages.sh DIST
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-common.sh
dist=$(realpath "${1:?usage: $0 DIST}")
version=$(workspace_version)
deb=$dist/memsight_${version}-1_arm64.deb
changes=$dist/memsight_${version}-1_arm64.changes
rpmf=$dist/memsight-$version-1.aarch64.rpm
fail() { echo "memsight: cross package check: $*" >&2; exit 1; }
say() { echo "memsight: cross package check: $*" >&2; }
scratch_with_mounts
for f in "$deb" "$changes" "$rpmf"; do [[ -f $f ]] || fail "no $f (scripts/cross-packages.sh makes it)"; done

# The binary at $1 is an AArch64 executable with a build-id, naming no build path.
check_binary() {
  local bin=$1 what=$2 paths
  readelf -h "$bin" | grep -q "Machine:.*AArch64" || fail "$what's binary is not AArch64"
  readelf -n "$bin" | grep -q "Build ID:" || fail "$what's binary has no GNU build-id"
  paths=$(build_paths_in "$bin" /root/ /home/)
  [[ -z $paths ]] || fail "$what's binary names build paths: $paths"
}

check_deb() {
  [[ $(dpkg-deb -f "$deb" Architecture) == arm64 ]] || fail "$deb is not arm64"
  [[ $(dpkg-deb -f "$deb" Version) == "$version-1" ]] || fail "$deb is not version $version-1"
  # (Linked against the arm64 libraries: the dependencies name them as for amd64.)
  dpkg-deb -f "$deb" Depends | grep -q "libhwloc15" || fail "$deb does not depend on libhwloc15"
  local d=$work/deb f
  mkdir -p "$d"
  dpkg-deb -x "$deb" "$d"
  for f in usr/bin/memsight usr/share/man/man1/memsight.1.gz usr/share/man/man1/memsight-run.1.gz \
    usr/share/bash-completion/completions/memsight usr/share/zsh/vendor-completions/_memsight \
    usr/share/fish/vendor_completions.d/memsight.fish lib/systemd/system/memsight-metrics.timer \
    usr/share/memsight/slurm-healthcheck.sh usr/share/doc/memsight/copyright; do
    [[ -e $d/$f ]] || fail "$deb lacks /$f"
  done
  # (The man pages and completions the qemu-run binary wrote are not empty.)
  [[ -s $d/usr/share/bash-completion/completions/memsight ]] || fail "$deb's bash completion is empty"
  check_binary "$d/usr/bin/memsight" "the arm64 .deb"
}

check_rpm() {
  [[ $(rpm -qp --qf '%{ARCH}' "$rpmf" 2>/dev/null) == aarch64 ]] || fail "$rpmf is not aarch64"
  [[ $(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$rpmf" 2>/dev/null) == "$version-1" ]] || fail "$rpmf is not $version-1"
  local list provided listed f
  list=$(rpm -qpl "$rpmf" 2>/dev/null)
  for f in /usr/bin/memsight /usr/share/man/man1/memsight.1.gz /usr/share/zsh/site-functions/_memsight \
    /usr/share/licenses/memsight/THIRD-PARTY.md /usr/lib/systemd/system/memsight-metrics.timer; do
    grep -qx "$f" <<<"$list" || fail "$rpmf lacks $f"
  done
  provided=$(rpm -qp --provides "$rpmf" 2>/dev/null | grep '^bundled(crate(' | sort || true)
  listed=$(sed -n 's/^Provides: *\(bundled(crate(.*\)$/\1/p' "$packaging_spec" | sort)
  [[ -n $listed && $provided == "$listed" ]] || fail "$rpmf does not provide the spec's bundled crates"
  mkdir -p "$work/rpm"
  (cd "$work/rpm" && rpm2cpio "$rpmf" | cpio -id --quiet)
  check_binary "$work/rpm/usr/bin/memsight" "the aarch64 RPM"
}

check_linters() {
  lintian --fail-on error,warning "$changes" >"$work/lintian.log" 2>&1 \
    || { cat "$work/lintian.log" >&2; fail "lintian"; }
  rpmlint -s -c packaging/rpm/rpmlint.toml "$rpmf" >"$work/rpmlint.log" 2>&1 \
    || { cat "$work/rpmlint.log" >&2; fail "rpmlint"; }
  say "lintian: $(grep -c . "$work/lintian.log" || true) lines of notes, no error or warning; rpmlint: $(tail -n 1 "$work/rpmlint.log")"
}

# binfmt_misc mounted and qemu-user-static's aarch64 handler enabled (its F flag opens the
# emulator when registered, so the root's programs run inside the chroot): false when this
# kernel or container cannot.
arm64_programs_run() {
  [[ -e /proc/sys/fs/binfmt_misc/status ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || return 1
  [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || return 1
  grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64
}

# The arm64 Debian 12 root, made once (about 5 minutes under emulation) and kept.
check_in_root() {
  [[ $(id -u) == 0 ]] || { say "skipping the arm64 root: needs root"; return 0; }
  arm64_programs_run || fail "binfmt_misc cannot run arm64 programs here (mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; update-binfmts --enable qemu-aarch64)"
  local root=$PWD/target/release-check/bookworm-arm64
  if [[ ! -f $root/.memsight-complete ]]; then
    # (An interrupted debootstrap may have left /proc mounted inside.)
    umount -l "$root/proc" "$root/sys" 2>/dev/null || true
    rm -rf --one-file-system "$root"
    mkdir -p "$(dirname "$root")"
    say "making an arm64 Debian 12 root (debootstrap under qemu, once)"
    debootstrap --arch=arm64 --variant=minbase --include=libhwloc15,libsqlite3-0,libudev1 \
      bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 \
      || { tail -n 20 "$root.log" >&2; fail "debootstrap --arch=arm64 failed (log: $root.log)"; }
    touch "$root/.memsight-complete"
  fi
  rm -rf "$root/tmp/memsight-check"
  mkdir -p "$root/tmp/memsight-check"
  cp "$deb" "$root/tmp/memsight-check/"
  bind_proc_sys "$root"
  local in=(chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
  [[ $("${in[@]}" dpkg --print-architecture) == arm64 ]] || fail "the root is not arm64"
  "${in[@]}" dpkg -i "/tmp/memsight-check/$(basename "$deb")" >"$work/dpkg.log" 2>&1 \
    || { cat "$work/dpkg.log" >&2; fail "the arm64 .deb does not install in the arm64 root"; }
  grep -q "^memsight $version" <<<"$("${in[@]}" memsight --version)" || fail "the installed memsight does not run"
  "${in[@]}" memsight --json env >"$work/env.json" || fail "the installed memsight does not run env"
  python3 - "$work/env.json" <<'PY' || fail "memsight env in the arm64 root does not read as AArch64"
import json, sys
cpu = json.load(open(sys.argv[1]))["environment"]["cpu"]
assert cpu["architecture"] == "aarch64" and cpu["features"]["neon"], cpu
PY
  "${in[@]}" dpkg -P memsight >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -P in the arm64 root"; }
  rm -rf "$root/tmp/memsight-check"
  say "arm64 Debian 12 root: the .deb installed, memsight env ran (aarch64, NEON) under qemu, purged"
}

check_deb
check_rpm
check_linters
check_in_root
say "cross-built packages checked: memsight_$version-1_arm64.deb and memsight-$version-1.aarch64.rpm"
