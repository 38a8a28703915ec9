#!/usr/bin/env bash
# Checks the tarballs (scripts/release.sh --check runs it; scripts/check-packages.sh checks the
# distributions' packages):
#   - each binary read with readelf/objdump (scripts/check-elf.sh): architecture, only glibc's
#     libraries and no symbol newer than GLIBC_2.28 (or, for musl, no library and no loader), a
#     GNU build-id, no build path; SHA256SUMS and every ASSET.sha256 verify;
#   - each tarball's contents: licences, THIRD-PARTY.md, CHANGELOG.md, install.sh, man pages,
#     completions, examples, units; install.sh installs into a scratch prefix with the units
#     naming the binary it installed, and --uninstall removes all of it;
#   - the x86_64 portable binary runs `env`, `latency --max-size 4MiB` and `run --quick` in a
#     Debian 11 root (glibc 2.31, made with debootstrap from Debian's packages);
#   - the static binary runs `env` and `latency --max-size 4MiB` in a root holding nothing but
#     it and Debian's busybox-static (no libc at all), and the aarch64 one under qemu-user;
#   - the portable binary reads recorded hwloc topologies as the build it is compared with does.
#
#   scripts/check-release.sh --prepare            make (or reuse) the Debian 11 and 12 roots
#   scripts/check-release.sh [--gnu-only] DIST ARCH...   check the tarballs in DIST (--gnu-only:
#                                                        the glibc ones alone, as test.sh --full
#                                                        makes them)
#
# The roots need root (debootstrap, chroot); without it those parts are skipped, said. They are
# kept in target/release-check/{bullseye,bookworm} and reused (about 240 and 330 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD/target/release-check/bullseye
MIRROR=http://deb.debian.org/debian
fail() { echo "memsight: release check: $*" >&2; exit 1; }
say() { echo "memsight: release check: $*" >&2; }

can_chroot() { [[ $(id -u) == 0 ]] && command -v debootstrap >/dev/null; }

# One root, made once: DIR SUITE [PACKAGES].
make_root() {
  local dir=$1 suite=$2 include=${3:-}
  # (The marker holds the packages asked for: a root made for fewer is made again.)
  [[ -f $dir/.memsight-complete && $(cat "$dir/.memsight-complete") == "$include" ]] && return 0
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  debootstrap --variant=minbase ${include:+--include=$include} "$suite" "$dir" "$MIRROR" >"$dir.log" 2>&1 \
    || { tail -n 20 "$dir.log" >&2; fail "debootstrap of $suite failed (log: $dir.log)"; }
  echo "$include" >"$dir/.memsight-complete"
}

# Debian 11 runs the portable binary; Debian 12, with systemd, dbus, node_exporter and the
# libraries the .deb links, is booted with systemd-nspawn and takes the .deb through install,
# the timer's run, a stopped run, removal and purge (check-systemd.sh).
prepare() {
  can_chroot || { say "skipping the Debian roots: needs root and debootstrap"; return 0; }
  # (One after the other: two debootstraps at once fail to find their packages.)
  make_root "$root_dir" bullseye
  make_root "$(dirname "$root_dir")/bookworm" bookworm systemd,dbus,prometheus-node-exporter,libhwloc15,libsqlite3-0
}

if [[ ${1:-} == --prepare ]]; then
  prepare
  exit 0
fi
static=true
[[ ${1:-} != --gnu-only ]] || { static=false; shift; }
dist=$(realpath "${1:?usage: $0 --prepare | [--gnu-only] DIST ARCH...}")
shift
(($#)) || fail "name the architectures to check"
. scripts/release-common.sh
version=$(workspace_version)
scratch_with_mounts

(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"

tar_files=(memsight LICENSE LICENSE-MIT LICENSE-APACHE THIRD-PARTY.md CHANGELOG.md README.md install.sh man/man1/memsight.1 man/man1/memsight-run.1
  complete/memsight.bash complete/_memsight complete/memsight.fish doc/trust.md
  doc/distributions.md doc/methods/latency.md doc/reference/jedec-ddr.md
  examples/node-reference.toml systemd/memsight-metrics.service systemd/memsight-metrics.timer)

check_tarball() {
  local arch=$1 libc=$2 name=memsight-$version-$1-linux-$2
  local tgz=$dist/$name.tar.gz
  [[ -f $tgz ]] || fail "no $tgz"
  mkdir -p "$work/tar-$arch-$libc"
  tar xzf "$tgz" -C "$work/tar-$arch-$libc"
  local dir=$work/tar-$arch-$libc/$name
  for f in "${tar_files[@]}"; do [[ -f $dir/$f ]] || fail "$tgz lacks $name/$f"; done
  [[ -x $dir/memsight && -x $dir/install.sh ]] || fail "$tgz: memsight or install.sh is not executable"
  grep -q "hwloc" "$dir/THIRD-PARTY.md" || fail "$tgz: THIRD-PARTY.md lacks hwloc's notice"
  bash scripts/check-elf.sh "$dir/memsight" "$arch" "$libc"
  grep -q '^\.TH memsight' "$dir/man/man1/memsight.1" || fail "$tgz: the man page does not render"
  bash -n "$dir/complete/memsight.bash" || fail "$tgz: the bash completion does not parse"
}

# install.sh into a scratch prefix (DESTDIR): the units name the binary where it went, the
# examples are where the Slurm script says; --uninstall leaves nothing.
check_install_script() {
  local dir=$work/tar-x86_64-gnu/memsight-$version-x86_64-linux-gnu dest=$work/destdir
  DESTDIR=$dest sh "$dir/install.sh" --prefix /opt/memsight >/dev/null
  [[ -x $dest/opt/memsight/bin/memsight ]] || fail "install.sh installed no binary"
  grep -q "^ExecStart=/opt/memsight/bin/memsight " "$dest/opt/memsight/lib/systemd/system/memsight-metrics.service" \
    || fail "install.sh's unit does not run the binary it installed"
  ! grep -q "/usr/bin/memsight" "$dest/opt/memsight/lib/systemd/system/memsight-metrics.service" \
    || fail "install.sh's unit still names /usr/bin/memsight"
  [[ -x $dest/opt/memsight/share/memsight/slurm-healthcheck.sh && -f $dest/opt/memsight/share/doc/memsight/THIRD-PARTY.md ]] \
    || fail "install.sh did not install the examples and notices"
  DESTDIR=$dest sh "$dir/install.sh" --prefix /opt/memsight --uninstall >/dev/null
  local left
  left=$(find "$dest" -type f -o -type l)
  [[ -z $left ]] || fail "install.sh --uninstall left: $left"
}

# The portable binary against a build of this checkout (the tests' own, when there) on recorded
# topologies: the same machine read the same way (hwloc built without libxml2 reads XML with its
# own parser; most of these files were written by hwloc 3, which memsight reads as they are).
check_same_results() {
  local bin=$1 ref=${MEMSIGHT_REFERENCE_BIN:-${CARGO_TARGET_DIR:-target}/debug/memsight}
  [[ -x $ref ]] || { say "no build to compare the portable binary with ($ref): skipped"; return 0; }
  local x
  for x in cxlmem+dax.v2 16amd64-4distances 64intel64-heteromem memorysidecaches; do
    local xml=testdata/hwloc/xml/$x.xml
    for b in "$bin" "$ref"; do
      "$b" --json --topology-xml "$xml" env | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["environment"]["topology"], sort_keys=True))'
      "$b" --json tiers --plan --topology-xml "$xml" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["results"]["plan"], sort_keys=True))'
    done >"$work/$x.out"
    local n
    n=$(sort -u "$work/$x.out" | wc -l)
    # Each binary printed two lines (topology, tiers plan); the same results give two unique.
    ((n == 2)) || fail "the portable binary reads $x.xml differently from $ref"
  done
  # And this machine, read live.
  for b in "$bin" "$ref"; do
    "$b" --json env | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["environment"]["topology"], sort_keys=True))'
  done >"$work/live.out"
  (($(sort -u "$work/live.out" | wc -l) == 1)) || fail "the portable binary reads this machine differently from $ref"
  say "the portable binary reads recorded topologies and this machine as $ref does"
}

# In the Debian 11 root: the portable binary measures.
check_old_userland() {
  can_chroot || { say "skipping the Debian 11 root: needs root and debootstrap"; return 0; }
  prepare
  local name=memsight-$version-x86_64-linux-gnu
  local glibc
  glibc=$(chroot "$root_dir" ldd --version)
  glibc=$(sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p' <<<"$glibc")
  rm -rf "$root_dir/tmp/memsight-check"
  mkdir -p "$root_dir/tmp/memsight-check"
  tar xzf "$dist/$name.tar.gz" -C "$root_dir/tmp/memsight-check"
  bind_proc_sys "$root_dir"
  local in=(chroot "$root_dir" env -i PATH=/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin HOME=/root LANG=C.UTF-8)
  local bin=/tmp/memsight-check/$name/memsight
  "${in[@]}" "$bin" --json env >"$work/env.json" || fail "env failed in the Debian 11 root"
  "${in[@]}" "$bin" --json --no-progress latency --max-size 4MiB >"$work/latency.json" \
    || fail "latency failed in the Debian 11 root"
  "${in[@]}" "$bin" --no-progress run --quick --no-history --out /tmp/memsight-check/run >/dev/null \
    || fail "run --quick failed in the Debian 11 root"
  cp "$root_dir/tmp/memsight-check/run/run.json" "$work/run.json"
  python3 - "$work" x86_64 <<'PY'
import json, sys
d, arch = sys.argv[1], sys.argv[2]
env = json.load(open(f"{d}/env.json"))["environment"]
assert env["cpu"]["architecture"] == arch, env["cpu"]["architecture"]
lat = json.load(open(f"{d}/latency.json"))["results"]["ladders"][0]
assert lat["main"]["points"], "no latency points"
run = json.load(open(f"{d}/run.json"))
assert run["complete"], "run --quick did not complete"
PY
  rm -rf "$root_dir/tmp/memsight-check"
  say "x86_64: the portable binary ran env, latency and run --quick in Debian 11 (glibc $glibc)"
}

# An aarch64 binary (WHAT, BIN) run under qemu-user on an x86_64 machine: `env` must say aarch64.
# (A static binary ignores the libc qemu_aarch64 points the loader at.)
env_under_qemu() {
  local what=$1 bin=$2
  command -v qemu-aarch64 >/dev/null || { say "no qemu-aarch64: the $what was read, not run"; return 0; }
  local qemu
  read -ra qemu <<<"$(qemu_aarch64)"
  "${qemu[@]}" "$bin" --json env | python3 -c 'import json,sys; a=json.load(sys.stdin)["environment"]["cpu"]["architecture"]; assert a == "aarch64", a' \
    || fail "the $what does not run under qemu"
  say "the $what ran env under qemu-user"
}

# The static binary in a root with nothing but it and busybox (no libc, no loader, no /lib):
# env and a latency ladder (their JSON read outside: the root has no Python).
check_static() {
  local arch=$1 bin=$work/tar-$1-musl/memsight-$version-$1-linux-musl/memsight
  if [[ $arch == "$(uname -m)" ]]; then
    can_chroot || { say "skipping the busybox root: needs root"; return 0; }
    [[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 || fail "no static /bin/busybox (busybox-static)"
    local root=$work/busybox-root
    mkdir -p "$root/bin" "$root/tmp"
    cp /bin/busybox "$root/bin/busybox"
    ln -s busybox "$root/bin/sh"
    cp "$bin" "$root/bin/memsight"
    bind_proc_sys "$root"
    [[ -z $(find "$root" -path "$root/proc" -prune -o -path "$root/sys" -prune -o -name '*.so*' -print) ]] || fail "the busybox root holds a library"
    chroot "$root" /bin/memsight --json env >"$work/static-env.json" || fail "the static binary's env failed in a root without libc"
    chroot "$root" /bin/memsight --json --no-progress latency --max-size 4MiB >"$work/static-latency.json" \
      || fail "the static binary's latency failed in a root without libc"
    python3 - "$work" "$arch" <<'PY'
import json, sys
d, arch = sys.argv[1], sys.argv[2]
assert json.load(open(f"{d}/static-env.json"))["environment"]["cpu"]["architecture"] == arch
assert json.load(open(f"{d}/static-latency.json"))["results"]["ladders"][0]["main"]["points"]
PY
    say "$arch: the static binary ran env and latency --max-size 4MiB in a root holding only busybox"
  elif [[ $arch == aarch64 ]]; then
    env_under_qemu "static aarch64 binary" "$bin"
  fi
}

(cd "$dist" && cat ./*.sha256 | sha256sum --quiet -c -) || fail "a per-asset checksum does not verify"
for arch in "$@"; do
  check_tarball "$arch" gnu
  ! $static || check_tarball "$arch" musl
  bin=$work/tar-$arch-gnu/memsight-$version-$arch-linux-gnu/memsight
  if [[ $arch == "$(uname -m)" ]]; then
    grep -q "^memsight $version" <<<"$("$bin" --version)" || fail "$bin does not run here"
    check_same_results "$bin"
  elif [[ $arch == aarch64 ]]; then
    env_under_qemu "portable aarch64 binary" "$bin"
  fi
  if $static; then
    check_static "$arch"
    say "$arch: the glibc and static tarballs checked"
  else
    say "$arch: the glibc tarball checked (the static one is a release's: scripts/release.sh --check)"
  fi
done
if [[ " $* " == *" x86_64 "* ]]; then
  check_install_script
  check_old_userland
fi
