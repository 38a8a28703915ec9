# What the release scripts share (sourced, not run): the glibc the portable binary targets and
# what counts as glibc's own, how qemu-user runs an aarch64 binary here, the workspace version,
# the hwloc source the portable binaries link, the tools a release is made with.

# The oldest glibc the portable binary runs on.
GLIBC_FLOOR=2.28

# Whether library $1 is one of glibc's own: the loaders, libc, libm, libpthread, libdl, librt
# (merged into libc since 2.34, still separate files on 2.28).
glibc_library() {
  case $1 in
    libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2 | librt.so.1 | ld-linux-x86-64.so.2 | ld-linux-aarch64.so.1) ;;
    *) return 1 ;;
  esac
}

# Whether glibc version $1 (e.g. 2.17) is no newer than the floor.
glibc_at_most_floor() {
  [[ $(printf '%s\n%s\n' "$1" "$GLIBC_FLOOR" | sort -V | tail -n 1) == "$GLIBC_FLOOR" ]]
}

# The command that runs an aarch64 binary here: against Debian's arm64 libc where it is
# installed (multiarch), else against the cross toolchain's copy. Mixing the two (the cross
# loader finding the multiarch libc through ld.so.cache) hangs threaded programs.
qemu_aarch64() {
  if [[ -e /lib/ld-linux-aarch64.so.1 ]]; then
    echo "qemu-aarch64"
  else
    echo "qemu-aarch64 -L /usr/aarch64-linux-gnu"
  fi
}

# The workspace's version, from Cargo.toml.
workspace_version() {
  grep -m 1 '^version = ' Cargo.toml | sed 's/^version = "\(.*\)"$/\1/'
}

# One date for everything built from this checkout: the last commit's (else Cargo.lock's, in a
# source tree without git). Archives are dated from it, and the C code some dependencies compile
# (the bundled SQLite) reads it, so cargo rebuilds them whenever it changes: a build that left it
# unset and one that set it would rebuild each other's binaries.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || stat -c %Y Cargo.lock)}
export SOURCE_DATE_EPOCH

# The hwloc release the portable and static binaries link: Debian's orig tarball of the
# libhwloc15 this project is tested with, checked against a pinned SHA-256 (portable.sh).
HWLOC_VERSION=2.9.0
HWLOC_URL=http://deb.debian.org/debian/pool/main/h/hwloc/hwloc_${HWLOC_VERSION}.orig.tar.bz2
HWLOC_SHA256=b3fb1a43a14d8fbcd8e976de5ede2ea7ce1d768ed173adb33c7ceaaf098dc970
# Its path, downloaded first when missing (under a name of its own, then renamed: both
# architectures' builds may fetch it at once).
hwloc_tarball() {
  local tarball=target/portable/hwloc_${HWLOC_VERSION}.orig.tar.bz2
  mkdir -p target/portable
  if [[ ! -f $tarball ]]; then
    curl -fsSL --retry 3 -o "$tarball.$$" "$HWLOC_URL" && mv -f "$tarball.$$" "$tarball"
  fi
  echo "$HWLOC_SHA256  $tarball" | sha256sum -c --quiet - \
    || { echo "memsight: $tarball does not match its pinned SHA-256" >&2; rm -f "$tarball"; return 1; }
  echo "$tarball"
}

# The tools a release is made with, installed when missing: Debian's packaging tools and linters,
# and two cargo subcommands at the versions this project was released with.
release_tools() {
  local p missing=()
  # (And the other architecture's objcopy, which portable.sh strips that binary with.)
  local other=aarch64
  [[ $(uname -m) != aarch64 ]] || other=x86-64
  for p in rpm cpio debhelper dpkg-dev fakeroot lintian rpmlint busybox-static debootstrap systemd-container curl "binutils-$other-linux-gnu"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    [[ $(id -u) == 0 ]] || { echo "memsight: missing packages: sudo apt-get install ${missing[*]}" >&2; exit 1; }
    echo "memsight: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  # (Installed for the user beside zig and cargo-zigbuild, not into cargo's home: they are
  # tools, like those, and CI's cargo home starts empty every run.)
  local root=${MEMSIGHT_TOOLS_ROOT:-$HOME/.local}
  export PATH="$root/bin:$PATH"
  cargo about --version 2>/dev/null | grep -q "^cargo-about 0.9.3$" \
    || cargo install --quiet --locked --root "$root" cargo-about@0.9.3 --features cli
  cargo vendor-filterer --version 2>/dev/null | grep -q "0.5.18" \
    || cargo install --quiet --locked --root "$root" cargo-vendor-filterer@0.5.18
}

# Every crate of Cargo.lock, for every target, in cargo's cache: the release's offline steps (the
# notices, the vendored source) read them, and a machine that only built memsight for its own
# target has not downloaded the crates other targets use. One line on failure, never cargo's
# whole output.
fetch_crates() {
  local log
  log=$(mktemp)
  if ! cargo fetch --locked >/dev/null 2>"$log"; then
    echo "memsight: cannot download the crates of Cargo.lock ($(grep -m 1 '^error' "$log" || tail -n 1 "$log")): run \`cargo fetch --locked\` where crates.io is reachable" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
}

# Where the distributions' packages are built from the source tarball, and the cargo target
# directory their builds share (scripts/source-packages.sh).
source_build_dir() { echo "$PWD/target/source-build"; }
source_cargo_dir() { echo "$PWD/target/source-build-cargo"; }
packaging_spec=packaging/rpm/memsight.spec

# rpmbuild ARGS... with this project's settings: sources in its rpm/SOURCES, the build unpacked
# in source_build_dir (the path the .deb was built at), results under its rpm/, compiled in
# source_cargo_dir unless MEMSIGHT_CARGO_TARGET_DIR names another directory; reproducible
# (every file and the build time clamped to SOURCE_DATE_EPOCH, no build host name); without
# checking build dependencies (rustup's toolchain); with packaging/rpm's fallbacks for the
# systemd macros where systemd-rpm-macros is not installed; and the binary stripped whole (on
# Fedora the debuginfo step does that, moving the symbols into -debuginfo; Debian's rpm has none
# and its own strip step keeps the symbol table), by MEMSIGHT_RPM_STRIP when set (a cross build's
# binary needs its target's strip).
rpm_build() {
  local build fallback=() strip=${MEMSIGHT_RPM_STRIP:-/usr/bin/strip} cross=()
  # (A cross build's other ELF steps too: the static-archive and comment-note strips.)
  [[ -z ${MEMSIGHT_RPM_STRIP:-} ]] || cross=(--define "__strip $strip" --define "__objdump ${strip%strip}objdump")
  build=$(source_build_dir)
  # (Each fallback as a --define: rpmbuild --target reads the macro files again for the target
  # and forgets what --load added.)
  local name body
  if [[ $(rpm --eval '%{?systemd_post:yes}') != yes ]]; then
    while read -r name body; do
      [[ $name == %* ]] && fallback+=(--define "${name#%} $body")
    done <packaging/rpm/macros.systemd-fallback
  fi
  MEMSIGHT_CARGO_TARGET_DIR=${MEMSIGHT_CARGO_TARGET_DIR:-$(source_cargo_dir)} rpmbuild "${fallback[@]}" "${cross[@]}" --nodeps --quiet \
    --define "_topdir $build/rpm" --define "_sourcedir $build/rpm/SOURCES" --define "_builddir $build" \
    --define "packager $(sed -n 's/^Maintainer: //p' debian/control)" \
    --define "__brp_strip $strip --strip-unneeded --remove-section=.comment %{buildroot}/usr/bin/memsight" \
    --define "_buildhost reproducible" --define "source_date_epoch_from_changelog 0" \
    --define "use_source_date_epoch_as_buildtime 1" --define "clamp_mtime_to_source_date_epoch 1" \
    "$@"
}

# A scratch directory ($work) and the bind mounts made into roots ($mounted), both undone when
# the script exits, however it exits.
scratch_with_mounts() {
  work=$(mktemp -d)
  mounted=()
  trap 'for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done; rm -rf "$work"' EXIT
}

# /proc and /sys of this machine inside root $1 (recorded for scratch_with_mounts to undo).
bind_proc_sys() {
  local m
  for m in proc sys; do
    mkdir -p "$1/$m"
    mount --bind "/$m" "$1/$m"
    mounted+=("$1/$m")
  done
}

# The first paths of the build machine binary $1 names, if any: this checkout (which holds the
# packages' build directory), cargo's home and registry, and any further fixed strings given.
# (Captured before grep reads it: grep leaving a pipe early would end strings with SIGPIPE.)
build_paths_in() {
  local bin=$1 top s
  shift
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  s=$(strings -n 8 "$bin")
  local pats=(-e "$top/" -e "${CARGO_HOME:-$HOME/.cargo}/" -e "/.cargo/registry/")
  for p in "$@"; do pats+=(-e "$p"); done
  grep -F "${pats[@]}" <<<"$s" | head -n 3 || true
}
