#!/usr/bin/env bash
# Builds the Debian package: target/debian/memsight_VERSION-1_ARCH.deb (cargo-deb), with the
# binary in /usr/bin, man pages and bash/zsh/fish completions generated from the CLI definition.
#   scripts/package.sh           build it
#   scripts/package.sh --check   build it, then check it: contents (dpkg-deb -c), declared
#                                dependencies (dpkg-deb -I), and the binary unpacked into a
#                                scratch root runs with only the system's libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh

# cargo-deb: a pinned version, installed into the user's cargo bin directory when missing.
CARGO_DEB_VERSION=3.8.0
if ! cargo deb --version 2>/dev/null | grep -q "$CARGO_DEB_VERSION"; then
  echo "memsight: installing cargo-deb $CARGO_DEB_VERSION (once)" >&2
  cargo install --locked --quiet cargo-deb --version "$CARGO_DEB_VERSION"
fi
command -v dpkg-shlibdeps >/dev/null || {
  echo "memsight: dpkg-shlibdeps is missing: sudo apt-get install dpkg-dev" >&2
  exit 1
}

cargo build --locked --release -p memsight
bin=target/release/memsight
assets=target/release/assets
rm -rf "$assets"
mkdir -p "$assets/completions"
"$bin" manpages "$assets/man" >/dev/null
gzip -9n "$assets"/man/*.1
"$bin" completions bash >"$assets/completions/memsight.bash"
"$bin" completions zsh >"$assets/completions/_memsight"
"$bin" completions fish >"$assets/completions/memsight.fish"
deb=$(cargo deb --locked --no-build --strip -p memsight | tail -n 1)
[[ -f "$deb" ]] || { echo "memsight: cargo deb wrote no package" >&2; exit 1; }
echo "$deb"
[[ "${1:-}" == "--check" ]] || exit 0

# The package holds what it says.
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/memsight ./usr/share/man/man1/memsight.1.gz ./usr/share/man/man1/memsight-run.1.gz \
  ./usr/share/bash-completion/completions/memsight ./usr/share/zsh/vendor-completions/_memsight \
  ./usr/share/fish/vendor_completions.d/memsight.fish ./usr/share/doc/memsight/copyright \
  ./usr/share/doc/memsight/README.md ./usr/share/doc/memsight/trust.md \
  ./usr/share/doc/memsight/methods/latency.md ./usr/share/doc/memsight/reference/jedec-ddr.md \
  ./usr/share/doc/memsight/operations.md ./usr/share/doc/memsight/examples/node-reference.toml \
  ./usr/lib/systemd/system/memsight-metrics.service ./usr/lib/systemd/system/memsight-metrics.timer; do
  grep -q " $f\$" <<<"$contents" || { echo "memsight: $deb lacks $f" >&2; exit 1; }
done
info=$(dpkg-deb -I "$deb")
grep -q "^ Depends:.*libhwloc" <<<"$info" || { echo "memsight: $deb does not depend on libhwloc" >&2; exit 1; }
grep -q "^ Suggests:.*libpmemobj" <<<"$info" || { echo "memsight: $deb does not suggest PMDK" >&2; exit 1; }

# Unpacked into a scratch root, the binary runs without the build tree or a Rust toolchain, its
# man page renders and the completions parse.
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"
env -i PATH=/usr/bin:/bin HOME="$root" "$root/usr/bin/memsight" --version | grep -q "^memsight "
env -i PATH=/usr/bin:/bin HOME="$root" "$root/usr/bin/memsight" schema >/dev/null
zcat "$root/usr/share/man/man1/memsight.1.gz" | grep -q '^\.TH memsight'
zcat "$root/usr/share/man/man1/memsight-compare.1.gz" | grep -q 'noise'
bash -n "$root/usr/share/bash-completion/completions/memsight"
grep -q "complete -c memsight" "$root/usr/share/fish/vendor_completions.d/memsight.fish"
grep -q "#compdef memsight" "$root/usr/share/zsh/vendor-completions/_memsight"
# The systemd units are installed, not enabled (no maintainer script turns them on), and parse.
if dpkg-deb -I "$deb" | grep -q "postinst"; then
  echo "memsight: $deb has a postinst: the timer must not be enabled by installing" >&2; exit 1
fi
if command -v systemd-analyze >/dev/null; then
  for u in memsight-metrics.service memsight-metrics.timer; do
    # Checks the unit's syntax; "not found" for /usr/bin/memsight outside the root is expected.
    out=$(systemd-analyze verify --root="$root" "$root/usr/lib/systemd/system/$u" 2>&1 || true)
    if grep -qiE "unknown (key|section)|failed to parse|invalid" <<<"$out"; then
      echo "memsight: $u does not parse: $out" >&2; exit 1
    fi
  done
fi
# The example reference a package user starts from is one memsight reads.
out=$(env -i PATH=/usr/bin:/bin HOME="$root" "$root/usr/bin/memsight" check --reference \
  "$root/usr/share/doc/memsight/examples/node-reference.toml" --format line /dev/null 2>&1 || true)
grep -q "not a regular file" <<<"$out" \
  || { echo "memsight: the example reference is not read: $out" >&2; exit 1; }
echo "memsight: $deb checked: binary, man pages, completions, dependencies, systemd units"
