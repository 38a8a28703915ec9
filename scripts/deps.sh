#!/usr/bin/env bash
# Makes sure what memsight needs to build is on this machine: Debian/Ubuntu packages (installed
# with apt when missing and we may), and Rust with rustfmt and clippy. Sourced by run.sh and
# test.sh; exits with a list of exactly what is missing when it cannot install it.
set -euo pipefail

PACKAGES=(build-essential pkg-config libhwloc-dev libsqlite3-dev libudev-dev bzip2)
# Packages only the tests need (test.sh sets them): e.g. chromium for the report's browser test.
# shellcheck disable=SC2206
PACKAGES+=(${MEMSIGHT_TEST_PACKAGES:-})

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]]; then
    echo "memsight: installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    echo "memsight: installing ${missing[*]}" >&2
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "memsight: missing packages: ${missing[*]}" >&2
    echo "  install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

if ! command -v cargo >/dev/null; then
  [[ -f "$HOME/.cargo/env" ]] && . "$HOME/.cargo/env"
fi
if ! command -v cargo >/dev/null; then
  echo "memsight: Rust is missing: install it from https://rustup.rs (stable, 1.89 or newer)" >&2
  exit 1
fi
if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c" >&2
  done
fi
