# What the release scripts share (sourced, not run): the glibc the portable binary targets and
# what counts as glibc's own, how qemu-user runs an aarch64 binary here, the workspace version.

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
