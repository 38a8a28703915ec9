#!/usr/bin/env bash
# The .deb under a real systemd: a throwaway copy of a Debian 12 root (check-release.sh --prepare
# makes it, with systemd, dbus and prometheus-node-exporter) booted with `systemd-nspawn -b`, its
# own network namespace holding only loopback. In it, as an administrator would:
#   - the .deb installs; the timer is enabled and started and, through a runtime drop-in that
#     fires it two seconds after it starts (its own schedule, every 6 hours, moved to 2099 so that
#     no second run starts during the check; an empty On…= resets every trigger, so it comes
#     first), runs the service;
#   - the service runs as its dynamic user (a UID of systemd's dynamic range, no passwd entry);
#   - node_exporter, scraped inside the container, serves the textfile whole: every memsight
#     sample of the file, no textfile scrape error, memsight_result_complete 1;
#   - a run stopped part way (`systemctl stop`, SIGTERM) still exports, marked complete 0;
#   - `systemd-analyze security` scores the service at most 2.0;
#   - `dpkg --purge` leaves nothing: no file named memsight, no dangling unit link, no timer stamp.
#
#   scripts/check-systemd.sh DEB ROOT
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/check-systemd.sh DEB ROOT"
deb=$(realpath "${1:?$usage}")
root=$(realpath "${2:?$usage}")
fail() { echo "memsight: systemd check: $*" >&2; exit 1; }
say() { echo "memsight: systemd check: $*" >&2; }
[[ $(id -u) == 0 ]] || fail "needs root (systemd-nspawn)"
command -v systemd-nspawn >/dev/null || fail "systemd-nspawn is missing (apt-get install systemd-container)"
command -v curl >/dev/null || fail "curl is missing (apt-get install curl)"
[[ -x $root/lib/systemd/systemd && -x $root/usr/bin/prometheus-node-exporter ]] \
  || fail "$root has no systemd or node_exporter (scripts/check-release.sh --prepare makes it)"
work=$(mktemp -d)
machine=memsight-check-$$
nspawn= init=
cleanup() {
  if [[ -n $nspawn ]] && kill -0 "$nspawn" 2>/dev/null; then
    # SIGTERM asks the container's systemd to power off; a container that does not stop is
    # killed whole (its PID 1, which takes its PID namespace with it, then nspawn), and the
    # throwaway copy of the root nspawn would have removed goes too.
    kill -TERM "$nspawn" 2>/dev/null || true
    for _ in $(seq 60); do kill -0 "$nspawn" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$nspawn" 2>/dev/null; then
      [[ -z $init ]] || kill -KILL "$init" 2>/dev/null || true
      kill -KILL "$nspawn" 2>/dev/null || true
      sleep 1
      rm -rf "$(dirname "$root")/.#machine.$(basename "$root")"* 2>/dev/null || true
    fi
  fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/deb"
cp "$deb" "$work/deb/"
# --ephemeral: the root is copied and the copy removed at exit, so every check starts from the
# same root. --register=no --keep-unit: the host need not run systemd itself (a CI container).
systemd-nspawn -q --register=no --keep-unit --ephemeral --private-network -M "$machine" -D "$root" \
  --bind-ro="$work/deb:/run/memsight-check" -b --console=passive >"$work/nspawn.log" 2>&1 &
nspawn=$!
# (Copying the root for --ephemeral takes seconds on a file system without snapshots.)
for _ in $(seq 240); do
  # (The child is nspawn's own until it has set the namespaces up and run the root's systemd.)
  init=$(pgrep -P "$nspawn" -x systemd | head -n 1) && [[ -n $init ]] && break
  kill -0 "$nspawn" 2>/dev/null || fail "systemd-nspawn did not boot the root: $(tail -3 "$work/nspawn.log" | tr '\n' ' ')"
  sleep 0.5
done
[[ -n $init ]] || fail "the container's systemd did not start within 2 minutes"
in=(nsenter -t "$init" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SYSTEMD_PAGER= TERM=dumb)
# Until the container's systemd has opened its bus, systemctl fails at once ("Failed to connect
# to bus") and prints no state: asked again until it answers, for at most 2 minutes.
state=
deadline=$((SECONDS + 120))
while [[ -z $state ]] && ((SECONDS < deadline)); do
  state=$(timeout 120 "${in[@]}" systemctl is-system-running --wait 2>/dev/null || true)
  [[ -n $state ]] || sleep 0.5
done
case $state in
  running) ;;
  degraded) say "the container booted degraded: $("${in[@]}" systemctl --failed --plain --no-legend | tr '\n' ' ')" ;;
  *) fail "the container's systemd did not come up (state: ${state:-none})" ;;
esac
unit=memsight-metrics.service
show() { "${in[@]}" systemctl show -p "$1" --value "$unit"; }

install_and_fire() {
  "${in[@]}" dpkg -i "/run/memsight-check/$(basename "$deb")" >"$work/dpkg.log" 2>&1 \
    || { cat "$work/dpkg.log" >&2; fail "the .deb does not install"; }
  local want
  want=$(dpkg-deb -f "$deb" Version)
  grep -q "^memsight ${want%-*}" <<<"$("${in[@]}" memsight --version)" || fail "the installed memsight does not run"
  "${in[@]}" memsight --json env >/dev/null || fail "the installed memsight does not run env"
  "${in[@]}" sh -ec 'mkdir -p /run/systemd/system/memsight-metrics.timer.d
    printf "[Timer]\nOnCalendar=\nOnCalendar=2099-01-01\nOnActiveSec=2s\nRandomizedDelaySec=0\n" >/run/systemd/system/memsight-metrics.timer.d/now.conf
    systemctl daemon-reload
    systemctl enable --now memsight-metrics.timer' >"$work/enable.log" 2>&1 \
    || { cat "$work/enable.log" >&2; fail "systemctl enable --now memsight-metrics.timer"; }
  [[ $("${in[@]}" systemctl is-enabled memsight-metrics.timer) == enabled ]] || fail "the timer is not enabled"
  [[ $("${in[@]}" systemctl is-active memsight-metrics.timer) == active ]] || fail "the timer is not active"
}

# The PID of the service's running measurement, once the timer (or a start) has started it.
main_pid() {
  local pid
  for _ in $(seq 200); do
    pid=$(show MainPID)
    [[ $pid =~ ^[1-9][0-9]*$ ]] && { echo "$pid"; return 0; }
    sleep 0.1
  done
  return 1
}

wait_inactive() {
  for _ in $(seq 900); do
    case $(show ActiveState) in inactive | failed) return 0 ;; esac
    sleep 0.2
  done
  fail "the service did not finish within 3 minutes"
}

# The dynamic user: a UID in systemd's dynamic range (61184-65519) that /etc/passwd does not hold.
check_dynamic_user() {
  local pid=$1 uid=
  # (Until it runs memsight, the process is systemd's fork, still root: read it once it does.)
  for _ in $(seq 100); do
    [[ $("${in[@]}" cat "/proc/$pid/comm" 2>/dev/null) == memsight ]] && break
    sleep 0.05
  done
  uid=$("${in[@]}" awk '/^Uid:/ {print $2}' "/proc/$pid/status") \
    || fail "the measurement ended before its UID was read: $(show Result), exit $(show ExecMainStatus)"
  [[ $uid =~ ^[0-9]+$ ]] && ((uid >= 61184 && uid <= 65519)) || fail "the measurement runs as UID ${uid:-?}, not a dynamic user"
  ! "${in[@]}" grep -q ":$uid:" /etc/passwd || fail "UID $uid is in /etc/passwd: not a dynamic user"
  say "the timer started the service; its measurement runs as dynamic UID $uid"
}

# node_exporter's view: every memsight sample of the file, no scrape error; $1 is the
# memsight_result_complete value expected.
check_scrape() {
  local want=$1 file=$work/memsight-run.prom scrape=$work/scrape.txt in_file served
  "${in[@]}" cat /var/lib/prometheus/node-exporter/memsight-run.prom >"$file" \
    || fail "no memsight-run.prom in node_exporter's textfile directory"
  for _ in $(seq 50); do
    nsenter -t "$init" -n curl -fsS http://127.0.0.1:9100/metrics >"$scrape" 2>/dev/null && break
    sleep 0.2
  done
  grep -q '^node_textfile_scrape_error 0$' "$scrape" || fail "node_exporter's textfile scrape failed: $(grep '^node_textfile_scrape_error' "$scrape")"
  in_file=$(grep -c '^memsight_' "$file" || true)
  served=$(grep -c '^memsight_' "$scrape" || true)
  ((in_file > 0 && in_file == served)) || fail "node_exporter serves $served memsight samples of the file's $in_file"
  grep -Eq "^memsight_result_complete(\{[^}]*\})? $want\$" "$scrape" \
    || fail "node_exporter does not serve memsight_result_complete $want: $(grep '^memsight_result_complete' "$scrape")"
  say "node_exporter serves the textfile whole: $served memsight samples, memsight_result_complete $want"
}

check_stopped_run_exports() {
  "${in[@]}" systemctl start --no-block "$unit"
  main_pid >/dev/null || fail "a started service never ran"
  # Part way: past the start, inside the measurement.
  sleep 2
  [[ $(show ActiveState) == activating ]] || fail "the run ended before it could be stopped"
  # (systemctl warns that the timer can start it again: it is the timer's to do.)
  "${in[@]}" systemctl stop "$unit" 2>"$work/stop.log" || { cat "$work/stop.log" >&2; fail "systemctl stop"; }
  [[ $(show ExecMainStatus) == 130 ]] || say "the stopped run exited $(show ExecMainStatus)"
  check_scrape 0
  say "a run stopped part way exported its partial result, marked complete 0"
}

check_security() {
  local score
  score=$("${in[@]}" systemd-analyze security --no-pager "$unit" 2>&1 | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' || true)
  [[ -n $score ]] || fail "systemd-analyze security gave no score"
  awk -v s="$score" 'BEGIN {exit !(s <= 2.0)}' || fail "systemd-analyze security scores $score (more than 2.0)"
  say "systemd-analyze security: exposure $score"
}

# Removal first, as the chroot check before this one did: the program and the units go and the
# timer stops; then the purge.
check_purge() {
  "${in[@]}" dpkg --remove memsight >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --remove"; }
  "${in[@]}" sh -c '! test -e /usr/bin/memsight && ! test -e /lib/systemd/system/memsight-metrics.timer' \
    || fail "removal left the program or its units"
  [[ $("${in[@]}" systemctl is-active memsight-metrics.timer || true) != active ]] || fail "the timer still runs after removal"
  "${in[@]}" dpkg --purge memsight >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --purge"; }
  local left
  left=$("${in[@]}" find / -xdev -name '*memsight*' -not -path '/tmp/*' -not -path /.memsight-complete) \
    || fail "could not search the root after the purge"
  left+=$("${in[@]}" find /etc/systemd /lib/systemd /usr/lib/systemd /var/lib/systemd -xtype l) \
    || fail "could not search the unit directories after the purge"
  [[ -z $left ]] || fail "purging left: $(tr '\n' ' ' <<<"$left")"
  say "removed (program, units and timer gone), then purged: nothing left (no file named memsight, no dangling unit link, no timer stamp)"
}

install_and_fire
pid=$(main_pid) || fail "the timer did not start the service within 20 s"
check_dynamic_user "$pid"
wait_inactive
[[ $(show Result) == success ]] || fail "the timer's run failed: $(show Result), exit $(show ExecMainStatus)"
check_scrape 1
check_stopped_run_exports
check_security
check_purge
say "the .deb under systemd (Debian 12, systemd-nspawn): timer, dynamic user, textfile, stop, security, purge"
