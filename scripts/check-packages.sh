#!/usr/bin/env bash
# Checks the distributions' packages built from source (scripts/source-packages.sh), as their
# reviewers would (scripts/release.sh --check runs it):
#   - versions: Cargo.toml's, the .dsc's, the .deb's, the SRPM's and the RPM's, and the latest
#     entry of each package's changelog, agree;
#   - contents: binary, man pages, completions, units, the examples under /usr/share/memsight,
#     the licences, THIRD-PARTY.md and the changelog; the unit handling in the maintainer
#     scripts and RPM scriptlets; the binary has a GNU build-id and names no build path, and runs;
#   - lintian (--fail-on error,warning) on the .changes and rpmlint on the SRPM and RPM, each with
#     its overrides (debian/*lintian-overrides, packaging/rpm/rpmlint.toml), every one justified;
#   - the SRPM and RPM built again, compiled afresh, are byte-identical to the first;
#   - in a Debian 12 root booted with systemd-nspawn: the .deb installs and runs, its timer runs
#     the service as a dynamic user, node_exporter serves the textfile, a stopped run exports
#     complete 0, the security score is at most 2.0, and a purge leaves nothing
#     (scripts/check-systemd.sh).
#
#   scripts/check-packages.sh [--no-rebuild] DIST   (--no-rebuild: without the second compile,
#                                                   as scripts/test.sh --full checks them)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-common.sh
rebuild=true
[[ ${1:-} != --no-rebuild ]] || { rebuild=false; shift; }
dist=$(realpath "${1:?usage: $0 [--no-rebuild] DIST}")
version=$(workspace_version)
arch=$(uname -m)
debarch=$(dpkg --print-architecture)
deb=$dist/memsight_${version}-1_$debarch.deb
rpmf=$dist/memsight-$version-1.$arch.rpm
srpm=$dist/memsight-$version-1.src.rpm
dsc=$dist/memsight_$version-1.dsc
fail() { echo "memsight: package check: $*" >&2; exit 1; }
say() { echo "memsight: package check: $*" >&2; }
scratch_with_mounts
for f in "$deb" "$rpmf" "$srpm" "$dsc"; do [[ -f $f ]] || fail "no $f"; done

check_versions() {
  [[ $(sed -n 's/^Version: //p' "$dsc") == "$version-1" ]] || fail "$dsc is not version $version-1"
  [[ $(dpkg-deb -f "$deb" Version) == "$version-1" ]] || fail "$deb is not version $version-1"
  [[ $(rpm -qp --qf '%{VERSION}-%{RELEASE}' "$rpmf" 2>/dev/null) == "$version-1" ]] || fail "$rpmf is not $version-1"
  [[ $(rpm -qp --qf '%{SOURCERPM}' "$rpmf" 2>/dev/null) == "$(basename "$srpm")" ]] || fail "$rpmf names another SRPM"
  local top
  top=$(rpm -qp --changelog "$rpmf" 2>/dev/null | head -n 1)
  [[ $top == *" - $version-1" ]] || fail "the RPM's latest changelog entry is '$top'"
  mkdir -p "$work/deb"
  dpkg-deb -x "$deb" "$work/deb"
  top=$(zcat "$work/deb/usr/share/doc/memsight/changelog.Debian.gz" | head -n 1)
  [[ $top == "memsight ($version-1) "* ]] || fail "the .deb's latest changelog entry is '$top'"
}

check_contents() {
  local d=$work/deb f
  for f in usr/bin/memsight usr/share/man/man1/memsight.1.gz usr/share/man/man1/memsight-run.1.gz \
    usr/share/bash-completion/completions/memsight usr/share/zsh/vendor-completions/_memsight \
    usr/share/fish/vendor_completions.d/memsight.fish lib/systemd/system/memsight-metrics.service \
    lib/systemd/system/memsight-metrics.timer usr/share/memsight/slurm-healthcheck.sh \
    usr/share/memsight/node-reference.toml usr/share/memsight/prometheus/memsight-alerts.yml \
    usr/share/doc/memsight/copyright usr/share/doc/memsight/changelog.gz usr/share/doc/memsight/NOTICE.txt; do
    [[ -e $d/$f ]] || fail "$deb lacks /$f"
  done
  # (dh_compress compresses documents over 4 KiB.)
  for f in THIRD-PARTY.md trust.md; do
    compgen -G "$d/usr/share/doc/memsight/$f*" >/dev/null || fail "$deb lacks /usr/share/doc/memsight/$f"
  done
  [[ -x $d/usr/share/memsight/slurm-healthcheck.sh ]] || fail "$deb: the Slurm health check is not executable"
  local scripts
  scripts=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./prerm ./postrm ./postinst)
  grep -q "deb-systemd-helper purge 'memsight-metrics.timer'" <<<"$scripts" || fail "$deb does not forget its timer on purge"
  grep -q "deb-systemd-invoke stop memsight-metrics.timer" <<<"$scripts" || fail "$deb does not stop its timer on removal"
  local list
  list=$(rpm -qpl "$rpmf" 2>/dev/null)
  for f in /usr/bin/memsight /usr/share/man/man1/memsight.1.gz /usr/share/zsh/site-functions/_memsight \
    /usr/share/licenses/memsight/LICENSE-MIT /usr/share/licenses/memsight/LICENSE-APACHE \
    /usr/share/licenses/memsight/THIRD-PARTY.md /usr/share/doc/memsight/CHANGELOG.md \
    /usr/share/memsight/slurm-healthcheck.sh /usr/lib/systemd/system/memsight-metrics.timer; do
    grep -qx "$f" <<<"$list" || fail "$rpmf lacks $f"
  done
  # (Fedora's bundling rule: each crate compiled in is a Provides with its version, as
  # notices.py wrote them into the spec; a list rpm dropped or mangled would hide the package
  # from a crate's advisory.)
  local provided listed
  provided=$(rpm -qp --provides "$rpmf" 2>/dev/null | grep '^bundled(crate(' | sort || true)
  listed=$(sed -n 's/^Provides: *\(bundled(crate(.*\)$/\1/p' "$packaging_spec" | sort)
  [[ -n $listed && $provided == "$listed" ]] || fail "$rpmf does not provide the spec's bundled crates"
  scripts=$(rpm -qp --scripts "$rpmf" 2>/dev/null)
  grep -qE "disable --now|systemd-update-helper" <<<"$scripts" || fail "$rpmf does not disable its timer on removal"
  grep -q "memsight-run.prom" <<<"$scripts" || fail "$rpmf leaves the textfile behind on removal"
  local bin=$d/usr/bin/memsight
  readelf -n "$bin" | grep -q "Build ID:" || fail "the .deb's binary has no GNU build-id"
  local paths
  paths=$(build_paths_in "$bin" /root/ /home/)
  [[ -z $paths ]] || fail "the .deb's binary names build paths: $paths"
  grep -q "^memsight $version" <<<"$("$bin" --version)" || fail "the .deb's binary does not run here"
}

# lintian and rpmlint: anything left after the overrides fails (for lintian, warnings too).
check_linters() {
  lintian --fail-on error,warning \
    "$dist/memsight_${version}-1_$debarch.changes" >"$work/lintian.log" 2>&1 \
    || { cat "$work/lintian.log" >&2; fail "lintian"; }
  rpmlint -s -c packaging/rpm/rpmlint.toml "$srpm" "$rpmf" >"$work/rpmlint.log" 2>&1 \
    || { cat "$work/rpmlint.log" >&2; fail "rpmlint"; }
  say "lintian: $(grep -c . "$work/lintian.log" || true) lines of notes, no error or warning; rpmlint: $(tail -n 1 "$work/rpmlint.log")"
}

# The SRPM and the RPM again, the same way (rpmbuild -ba: a rebuild from the SRPM would lack the
# SRPM's digest in its header) at the same place, but compiled afresh in a scratch cargo target
# directory: the same bytes. When they differ, whether the files differ too (payload digest;
# every file's digest, size, mode, owner and date) says where to look: the compile or the header.
check_rpm_reproducible() {
  local build
  build=$(source_build_dir)
  rm -rf "$build/rpm/RPMS" "$build/rpm/SRPMS"
  mkdir -p "$build/rpm/SOURCES"
  cp "$dist/memsight-$version.tar.xz" "$build/rpm/SOURCES/"
  MEMSIGHT_CARGO_TARGET_DIR=$work/cargo rpm_build -ba "$packaging_spec" >"$work/rebuild.log" 2>&1 \
    || { tail -n 30 "$work/rebuild.log" >&2; fail "the RPM does not build again"; }
  local a b
  for a in "$srpm" "$rpmf"; do
    case $a in *.src.rpm) b=$build/rpm/SRPMS/$(basename "$a") ;; *) b=$build/rpm/RPMS/$arch/$(basename "$a") ;; esac
    cmp -s "$a" "$b" && continue
    if [[ $(rpm -qp --qf '%{PAYLOADDIGEST}' "$a" 2>/dev/null) == $(rpm -qp --qf '%{PAYLOADDIGEST}' "$b" 2>/dev/null) ]] \
      && [[ $(rpm -qp --dump "$a" 2>/dev/null) == $(rpm -qp --dump "$b" 2>/dev/null) ]]; then
      fail "two builds of $(basename "$a") hold the same files but differ in the header (diff the output of rpm -qp --xml)"
    fi
    fail "two builds of $(basename "$a") hold different files (rpm -qp --dump shows which)"
  done
  say "the SRPM and the RPM built a second time, compiled afresh: byte-identical"
}

# In a Debian 12 root booted with systemd-nspawn (check-release.sh --prepare makes it, with
# systemd, dbus and node_exporter): install, the timer's run as the dynamic user, the textfile
# node_exporter serves, a stopped run's export, the security score, purge, and nothing left
# (scripts/check-systemd.sh).
check_lifecycle() {
  [[ $(id -u) == 0 ]] && command -v debootstrap >/dev/null || { say "skipping the Debian 12 root: needs root and debootstrap"; return 0; }
  local root=$PWD/target/release-check/bookworm
  [[ -f $root/.memsight-complete ]] || fail "no Debian 12 root (scripts/check-release.sh --prepare)"
  [[ $debarch == amd64 ]] || { say "the Debian 12 root is amd64: lifecycle not checked on $debarch"; return 0; }
  bash scripts/check-systemd.sh "$deb" "$root" || fail "the .deb under systemd failed (above)"
}

check_versions
check_contents
check_linters
if $rebuild; then check_rpm_reproducible; else say "the RPM's second compile (reproducibility) is a release's: scripts/release.sh --check"; fi
check_lifecycle
say "source packages checked: .dsc/.deb and SRPM/RPM $version-1"
