#!/usr/bin/env bash
# Checks the release artefacts (scripts/release.sh --check runs it):
#   - each binary read with readelf/objdump (scripts/check-elf.sh): architecture, only glibc's
#     libraries, no symbol newer than GLIBC_2.28; the tarball, the .deb and the RPM hold the
#     same binary; SHA256SUMS verifies;
#   - the tarball's, the .deb's and the RPM's contents; the .deb's Depends and Suggests; the RPM's
#     Requires (glibc only), Recommends and scriptlets (none), inspected with Debian's rpm;
#   - the x86_64 tarball's binary runs `env`, `latency --max-size 4MiB` and `run --quick` in a
#     Debian 11 root (glibc 2.31, made with debootstrap from Debian's packages), where the .deb
#     also installs with dpkg and the RPM's binary starts;
#   - the portable binary reads recorded hwloc topologies as the build it is compared with does;
#   - the aarch64 tarball's binary starts under qemu-user (scripts/test-aarch64.sh runs the
#     same build on a smoke set there).
#
#   scripts/check-release.sh --prepare            make (or reuse) the Debian 11 root
#   scripts/check-release.sh DIST ARCH...         check the artefacts in DIST
#
# The Debian 11 root needs root (debootstrap, chroot); without it that part is skipped, said.
# It is kept in target/release-check/bullseye and reused (about 240 MB, a minute to make).
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$PWD/target/release-check/bullseye
MIRROR=http://deb.debian.org/debian
fail() { echo "memsight: release check: $*" >&2; exit 1; }
say() { echo "memsight: release check: $*" >&2; }

can_chroot() { [[ $(id -u) == 0 ]] && command -v debootstrap >/dev/null; }

prepare() {
  can_chroot || { say "skipping the Debian 11 root: needs root and debootstrap"; return 0; }
  [[ -f $root_dir/.memsight-complete ]] && return 0
  rm -rf "$root_dir"
  mkdir -p "$(dirname "$root_dir")"
  local log=$root_dir.log
  debootstrap --variant=minbase bullseye "$root_dir" "$MIRROR" >"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; fail "debootstrap of Debian 11 failed (log: $log)"; }
  touch "$root_dir/.memsight-complete"
}

if [[ ${1:-} == --prepare ]]; then
  prepare
  exit 0
fi
dist=$(realpath "${1:?usage: $0 --prepare | DIST ARCH...}")
shift
(($#)) || fail "name the architectures to check"
. scripts/release-common.sh
version=$(workspace_version)
work=$(mktemp -d)
mounted=()
cleanup() {
  for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"

# What every package ships, relative to its root (the .deb's paths; the RPM differs only in
# where zsh completions and the licence go, as Fedora and RHEL place them).
deb_files=(usr/bin/memsight usr/share/man/man1/memsight.1.gz usr/share/man/man1/memsight-run.1.gz
  usr/share/bash-completion/completions/memsight usr/share/zsh/vendor-completions/_memsight
  usr/share/fish/vendor_completions.d/memsight.fish usr/share/doc/memsight/copyright
  usr/share/doc/memsight/README.md usr/share/doc/memsight/CHANGELOG.md usr/share/doc/memsight/trust.md
  usr/share/doc/memsight/methods/latency.md usr/share/doc/memsight/reference/jedec-ddr.md
  usr/share/doc/memsight/operations.md usr/share/doc/memsight/examples/node-reference.toml
  usr/lib/systemd/system/memsight-metrics.service usr/lib/systemd/system/memsight-metrics.timer)
rpm_files=(/usr/bin/memsight /usr/share/man/man1/memsight.1.gz /usr/share/man/man1/memsight-run.1.gz
  /usr/share/bash-completion/completions/memsight /usr/share/zsh/site-functions/_memsight
  /usr/share/fish/vendor_completions.d/memsight.fish /usr/share/licenses/memsight/LICENSE
  /usr/share/licenses/memsight/LICENSE-MIT /usr/share/licenses/memsight/LICENSE-APACHE
  /usr/share/doc/memsight/README.md /usr/share/doc/memsight/CHANGELOG.md /usr/share/doc/memsight/trust.md
  /usr/share/doc/memsight/methods/latency.md /usr/share/doc/memsight/reference/jedec-ddr.md
  /usr/share/doc/memsight/examples/node-reference.toml
  /usr/lib/systemd/system/memsight-metrics.service /usr/lib/systemd/system/memsight-metrics.timer)
tar_files=(memsight LICENSE LICENSE-MIT LICENSE-APACHE CHANGELOG.md README.md man/man1/memsight.1 man/man1/memsight-run.1
  complete/memsight.bash complete/_memsight complete/memsight.fish doc/trust.md
  doc/distributions.md doc/methods/latency.md doc/reference/jedec-ddr.md
  examples/node-reference.toml systemd/memsight-metrics.service systemd/memsight-metrics.timer)

check_tarball() {
  local arch=$1 name=memsight-$version-$1-linux-gnu
  local tgz=$dist/$name.tar.gz
  [[ -f $tgz ]] || fail "no $tgz"
  mkdir -p "$work/tar-$arch"
  tar xzf "$tgz" -C "$work/tar-$arch"
  local dir=$work/tar-$arch/$name
  for f in "${tar_files[@]}"; do [[ -f $dir/$f ]] || fail "$tgz lacks $name/$f"; done
  [[ -x $dir/memsight ]] || fail "$tgz: memsight is not executable"
  bash scripts/check-elf.sh "$dir/memsight" "$arch"
  grep -q '^\.TH memsight' "$dir/man/man1/memsight.1" || fail "$tgz: the man page does not render"
  bash -n "$dir/complete/memsight.bash" || fail "$tgz: the bash completion does not parse"
}

check_deb() {
  local arch=$1 debarch
  case $arch in x86_64) debarch=amd64 ;; aarch64) debarch=arm64 ;; esac
  local deb=$dist/memsight_${version}-1_$debarch.deb
  [[ -f $deb ]] || fail "no $deb"
  local contents info
  contents=$(dpkg-deb -c "$deb")
  for f in "${deb_files[@]}"; do grep -q " \./$f\$" <<<"$contents" || fail "$deb lacks /$f"; done
  info=$(dpkg-deb -I "$deb")
  grep -q "^ Architecture: $debarch\$" <<<"$info" || fail "$deb is not for $debarch"
  # Nothing beyond glibc 2.28: that is what the binary needs (check-elf.sh).
  [[ $(sed -n 's/^ Depends: //p' <<<"$info") == "libc6 (>= 2.28)" ]] \
    || fail "$deb depends on $(sed -n 's/^ Depends: //p' <<<"$info"), not only libc6 (>= 2.28)"
  grep -q "^ Suggests:.*libpmemobj" <<<"$info" || fail "$deb does not suggest PMDK"
  # The systemd timer is installed, not enabled: no maintainer script turns it on.
  ! grep -qE "postinst|preinst|prerm|postrm" <<<"$info" || fail "$deb has maintainer scripts"
  mkdir -p "$work/deb-$arch"
  dpkg-deb -x "$deb" "$work/deb-$arch"
  cmp -s "$work/deb-$arch/usr/bin/memsight" "$work/tar-$arch/memsight-$version-$arch-linux-gnu/memsight" \
    || fail "$deb holds another binary than the tarball"
  # (Output is captured before it is searched: `grep -q` leaving a pipe early would end the
  # writer with SIGPIPE, which pipefail turns into a failure.)
  grep -q 'noise' <<<"$(zcat "$work/deb-$arch/usr/share/man/man1/memsight-compare.1.gz")" \
    || fail "$deb: memsight-compare(1) does not render"
  grep -q "complete -c memsight" "$work/deb-$arch/usr/share/fish/vendor_completions.d/memsight.fish"
  grep -q "#compdef memsight" "$work/deb-$arch/usr/share/zsh/vendor-completions/_memsight"
  if command -v systemd-analyze >/dev/null; then
    local u out
    for u in memsight-metrics.service memsight-metrics.timer; do
      # The unit's syntax; "not found" for /usr/bin/memsight outside the root is expected.
      out=$(systemd-analyze verify --root="$work/deb-$arch" "$work/deb-$arch/usr/lib/systemd/system/$u" 2>&1 || true)
      ! grep -qiE "unknown (key|section)|failed to parse|invalid" <<<"$out" || fail "$u does not parse: $out"
    done
  fi
}

check_rpm() {
  local arch=$1
  local rpmf=$dist/memsight-${version}-1.$arch.rpm
  [[ -f $rpmf ]] || fail "no $rpmf"
  [[ $(rpm -qp --qf '%{ARCH}' "$rpmf" 2>/dev/null) == "$arch" ]] || fail "$rpmf is not for $arch"
  local list req
  list=$(rpm -qpl "$rpmf" 2>/dev/null)
  for f in "${rpm_files[@]}"; do grep -qx "$f" <<<"$list" || fail "$rpmf lacks $f"; done
  # Requires: rpm's own features and glibc's libraries only, none newer than the floor
  # ("libc.so.6(GLIBC_2.17)(64bit)": the library is the part before the first parenthesis).
  req=$(rpm -qpR "$rpmf" 2>/dev/null)
  while read -r r; do
    [[ $r == rpmlib\(* || $r == "rtld(GNU_HASH)" ]] || glibc_library "${r%%(*}" \
      || fail "$rpmf requires '$r', which glibc does not provide"
    if [[ $r =~ GLIBC_([0-9.]+) ]]; then
      glibc_at_most_floor "${BASH_REMATCH[1]}" || fail "$rpmf requires $r, newer than glibc $GLIBC_FLOOR"
    fi
  done <<<"$req"
  [[ -z $(rpm -qp --scripts "$rpmf" 2>/dev/null) ]] || fail "$rpmf has scriptlets"
  local rec
  rec=$(rpm -qp --recommends "$rpmf" 2>/dev/null)
  for p in gperftools-libs jemalloc libpmemobj; do grep -qx "$p" <<<"$rec" || fail "$rpmf does not recommend $p"; done
  mkdir -p "$work/rpm-$arch"
  (cd "$work/rpm-$arch" && rpm2cpio "$rpmf" | cpio -idm --quiet)
  cmp -s "$work/rpm-$arch/usr/bin/memsight" "$work/tar-$arch/memsight-$version-$arch-linux-gnu/memsight" \
    || fail "$rpmf holds another binary than the tarball"
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

# In the Debian 11 root: the tarball's binary measures, the .deb installs, the RPM's binary starts.
check_old_userland() {
  can_chroot || { say "skipping the Debian 11 root: needs root and debootstrap"; return 0; }
  prepare
  local arch=x86_64 name=memsight-$version-x86_64-linux-gnu
  local glibc
  glibc=$(chroot "$root_dir" ldd --version)
  glibc=$(sed -n '1s/.* \([0-9][0-9]*\.[0-9][0-9]*\)$/\1/p' <<<"$glibc")
  rm -rf "$root_dir/tmp/memsight-check"
  mkdir -p "$root_dir/tmp/memsight-check"
  tar xzf "$dist/$name.tar.gz" -C "$root_dir/tmp/memsight-check"
  cp "$dist/memsight_${version}-1_amd64.deb" "$root_dir/tmp/memsight-check/"
  cp "$work/rpm-x86_64/usr/bin/memsight" "$root_dir/tmp/memsight-check/memsight-rpm"
  for m in proc sys; do
    mount --bind "/$m" "$root_dir/$m"
    mounted+=("$root_dir/$m")
  done
  local in=(chroot "$root_dir" env -i PATH=/usr/local/sbin:/usr/sbin:/sbin:/usr/bin:/bin HOME=/root LANG=C.UTF-8)
  local bin=/tmp/memsight-check/$name/memsight
  "${in[@]}" "$bin" --json env >"$work/env.json" || fail "env failed in the Debian 11 root"
  "${in[@]}" "$bin" --json --no-progress latency --max-size 4MiB >"$work/latency.json" \
    || fail "latency failed in the Debian 11 root"
  "${in[@]}" "$bin" --no-progress run --quick --no-history --out /tmp/memsight-check/run >/dev/null \
    || fail "run --quick failed in the Debian 11 root"
  cp "$root_dir/tmp/memsight-check/run/run.json" "$work/run.json"
  python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
env = json.load(open(f"{d}/env.json"))["environment"]
assert env["cpu"]["architecture"] == "x86_64", env["cpu"]["architecture"]
lat = json.load(open(f"{d}/latency.json"))["results"]["ladders"][0]
assert lat["main"]["points"], "no latency points"
run = json.load(open(f"{d}/run.json"))
assert run["complete"], "run --quick did not complete"
PY
  # The .deb installs with dpkg (its Depends met by Debian 11's libc6) and its binary runs.
  "${in[@]}" dpkg -i "/tmp/memsight-check/memsight_${version}-1_amd64.deb" >"$work/dpkg.log" 2>&1 \
    || { cat "$work/dpkg.log" >&2; fail "the .deb does not install on Debian 11"; }
  grep -q "^memsight $version" <<<"$("${in[@]}" memsight --version)" || fail "the installed .deb does not run"
  "${in[@]}" dpkg --purge memsight >/dev/null 2>&1
  grep -q "^memsight " <<<"$("${in[@]}" /tmp/memsight-check/memsight-rpm --version)" \
    || fail "the RPM's binary does not run on Debian 11"
  rm -rf "$root_dir/tmp/memsight-check"
  say "x86_64: the tarball's binary ran env, latency and run --quick, the .deb installed and the RPM's binary started in Debian 11 (glibc $glibc)"
}

for arch in "$@"; do
  check_tarball "$arch"
  check_deb "$arch"
  check_rpm "$arch"
  bin=$work/tar-$arch/memsight-$version-$arch-linux-gnu/memsight
  if [[ $arch == "$(uname -m)" ]]; then
    grep -q "^memsight $version" <<<"$("$bin" --version)" || fail "$bin does not run here"
    check_same_results "$bin"
  elif [[ $arch == aarch64 ]]; then
    if command -v qemu-aarch64 >/dev/null; then
      read -ra qemu <<<"$(qemu_aarch64)"
      "${qemu[@]}" "$bin" --json env | python3 -c 'import json,sys; a=json.load(sys.stdin)["environment"]["cpu"]["architecture"]; assert a == "aarch64", a' \
        || fail "the aarch64 binary does not run under qemu"
    else
      say "no qemu-aarch64: the aarch64 binary was read, not run"
    fi
  fi
  say "$arch: tarball, .deb and RPM checked"
done
[[ " $* " != *" x86_64 "* ]] || check_old_userland
