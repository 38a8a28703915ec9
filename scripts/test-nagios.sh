#!/usr/bin/env bash
# memsight's shipped Nagios definitions (packaging/examples/nagios-memsight.cfg) in Nagios Core 4
# as sites run it: as the nagios user, the command and the service template as shipped, one host
# and a service that uses the template (testdata/nagios). Each case is one Nagios start and its
# first check, read back from status.dat: a passing result is OK with perfdata, a failing one
# CRITICAL, an interrupted one UNKNOWN, a command line with a typo UNKNOWN, a memsight killed by
# a signal UNKNOWN, and the same crash reported by a shell (exit 139) CRITICAL: never OK.
# It judges stored results (no measuring); scripts/test-launchers.sh makes them.
#
#   scripts/test-nagios.sh MEMSIGHT RESULT DIR
#     DIR holds good.json and bad.json (references RESULT passes and fails), partial.json (RESULT
#     marked interrupted) and crash/memsight (a program that kills itself with SIGSEGV).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/test-nagios.sh MEMSIGHT RESULT DIR"
ms=${1:?$usage} result=${2:?$usage} jd=${3:?$usage}
fail() { echo "test-nagios: FAILED: $*" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "test-nagios: skipping: needs root (Nagios runs as its own user)" >&2; exit 0; }
command -v nagios4 >/dev/null || fail "nagios4 is missing (apt-get install nagios4-core)"
id nagios >/dev/null 2>&1 || fail "no nagios user (apt-get install nagios4-core)"
# Everything under one directory the nagios user can read: the binaries, results and references
# are copied in (the checkout may be private to root).
ng=$(mktemp -d)
nagios=
cleanup() {
  [[ -z $nagios ]] || kill "$nagios" 2>/dev/null || true
  rm -rf "$ng"
}
trap cleanup EXIT
chmod 755 "$ng"
mkdir -p "$ng/cr"
cp "$ms" "$ng/memsight"
cp "$jd/crash/memsight" "$ng/crash"
printf '#!/bin/sh\n"%s" "$@"\n' "$ng/crash" >"$ng/crash-wrapped"
chmod 755 "$ng/crash-wrapped"
cp "$jd/good.json" "$jd/bad.json" "$jd/partial.json" "$ng/"
cp "$result" "$ng/run.json"
sed "s|@NG@|$ng|g" testdata/nagios/nagios.cfg >"$ng/nagios.cfg"

# One case: the command line that replaces the shipped one's. Sets status, state and output.
nagios_case() {
  {
    sed -n '/^define command/,/^}/p;/^define service/,/^}/p' packaging/examples/nagios-memsight.cfg \
      | sed -e "s|/usr/bin/memsight check .*|$1|"
    cat testdata/nagios/objects.cfg
  } >"$ng/objects.cfg"
  grep -qF "$1" "$ng/objects.cfg" || fail "the shipped command line was not found to replace"
  rm -f "$ng/status.dat" "$ng/nagios.log"
  chown -R nagios:nagios "$ng"
  nagios4 -v "$ng/nagios.cfg" >"$ng/verify.out" 2>&1 \
    || { cat "$ng/verify.out" >&2; fail "Nagios refuses the shipped configuration"; }
  nagios4 "$ng/nagios.cfg" >"$ng/run.out" 2>&1 &
  nagios=$!
  status=
  for _ in $(seq 60); do
    status=$(sed -n '/^servicestatus/,/}/p' "$ng/status.dat" 2>/dev/null || true)
    grep -q 'has_been_checked=1' <<<"$status" && break
    sleep 0.5
  done
  kill "$nagios" 2>/dev/null || true
  wait "$nagios" 2>/dev/null || true
  nagios=
  grep -q 'has_been_checked=1' <<<"$status" \
    || fail "Nagios made no check in 30 s (log: $(tail -3 "$ng/nagios.log" 2>/dev/null | tr '\n' ' '))"
  state=$(sed -n 's/^\s*current_state=//p' <<<"$status")
  output=$(sed -n 's/^\s*plugin_output=//p' <<<"$status")
}

# CASE WANT_STATE WANT_OUTPUT_PREFIX DESCRIPTION
expect() {
  nagios_case "$1"
  [[ $state == "$2" && $output == "$3"* ]] || fail "$4: Nagios state $state, '$output' (expected $2, '$3…')"
  echo "  $4: state $state, ${output:0:90}"
}
expect "$ng/memsight check --reference $ng/good.json $ng/run.json --format nagios --no-progress" \
  0 "MEMSIGHT OK" "a passing result"
grep -q "performance_data='" <<<"$status" || fail "Nagios holds no perfdata: $status"
expect "$ng/memsight check --reference $ng/bad.json $ng/run.json --format nagios --no-progress" \
  2 "MEMSIGHT CRITICAL" "a failing result"
expect "$ng/memsight check --reference $ng/good.json $ng/partial.json --format nagios --no-progress" \
  3 "MEMSIGHT UNKNOWN" "an interrupted result"
expect "$ng/memsight check --refrence $ng/good.json $ng/run.json --format nagios --no-progress" \
  3 "MEMSIGHT UNKNOWN" "a command line with a typo"
# Nagios 4 shows a plugin killed by a signal as UNKNOWN, and an exit status outside 0-3 (a
# shell's 128 + 11 for the same crash) as CRITICAL.
expect "$ng/crash check --reference $ng/good.json $ng/run.json --format nagios --no-progress" \
  3 "" "a memsight killed by SIGSEGV"
expect "$ng/crash-wrapped check --reference $ng/good.json $ng/run.json --format nagios --no-progress" \
  2 "" "the same crash through a shell (exit 139)"
