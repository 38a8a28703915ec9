#!/bin/sh
# Installs memsight from this unpacked release tarball, or removes it again:
#
#   sudo ./install.sh [--prefix DIR] [--uninstall]        (default prefix: /usr/local)
#
# The binary in PREFIX/bin, man pages, bash/zsh/fish completions, the examples the units and
# Slurm use in PREFIX/share/memsight, documentation in PREFIX/share/doc/memsight, and the systemd
# units in PREFIX/lib/systemd/system with their ExecStart naming PREFIX/bin/memsight. The metrics
# timer is installed, not enabled. --uninstall stops and disables the timer, then removes all of
# it, with what the timer left (its state and node_exporter's textfile). DESTDIR is honoured.
set -eu
prefix=/usr/local
uninstall=false
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 2; }
                  prefix=$2; shift 2 ;;
        --uninstall) uninstall=true; shift ;;
        *) echo "usage: install.sh [--prefix DIR] [--uninstall]" >&2; exit 2 ;;
    esac
done
case $prefix in /*) ;; *) echo "install.sh: the prefix must be an absolute path: $prefix" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
root=${DESTDIR:-}$prefix
units="memsight-metrics.service memsight-metrics.timer"

if $uninstall; then
    if [ -z "${DESTDIR:-}" ] && command -v systemctl >/dev/null 2>&1; then
        systemctl disable --now memsight-metrics.timer >/dev/null 2>&1 || true
    fi
    rm -f "$root/bin/memsight" "$root"/share/man/man1/memsight.1 "$root"/share/man/man1/memsight-*.1 \
        "$root/share/bash-completion/completions/memsight" "$root/share/zsh/site-functions/_memsight" \
        "$root/share/fish/vendor_completions.d/memsight.fish"
    for u in $units; do rm -f "$root/lib/systemd/system/$u"; done
    rm -rf "$root/share/memsight" "$root/share/doc/memsight"
    if [ -z "${DESTDIR:-}" ]; then
        rm -rf /var/lib/private/memsight /var/lib/memsight
        rm -f /var/lib/prometheus/node-exporter/memsight-run.prom \
            /var/lib/prometheus/node-exporter/.memsight-run.prom.tmp \
            /var/lib/systemd/timers/stamp-memsight-metrics.timer
        ! command -v systemctl >/dev/null 2>&1 || systemctl daemon-reload >/dev/null 2>&1 || true
    fi
    echo "memsight removed from $prefix"
    exit 0
fi

install -Dm755 "$here/memsight" "$root/bin/memsight"
install -d "$root/share/man/man1" "$root/share/bash-completion/completions" \
    "$root/share/zsh/site-functions" "$root/share/fish/vendor_completions.d" \
    "$root/share/memsight" "$root/share/doc/memsight" "$root/lib/systemd/system"
install -m644 "$here"/man/man1/*.1 "$root/share/man/man1/"
install -m644 "$here/complete/memsight.bash" "$root/share/bash-completion/completions/memsight"
install -m644 "$here/complete/_memsight" "$root/share/zsh/site-functions/_memsight"
install -m644 "$here/complete/memsight.fish" "$root/share/fish/vendor_completions.d/memsight.fish"
cp -R "$here/examples/." "$root/share/memsight/"
cp -R "$here/doc/." "$here/README.md" "$here/CHANGELOG.md" "$here/LICENSE" "$here/LICENSE-MIT" \
    "$here/LICENSE-APACHE" "$here/THIRD-PARTY.md" "$root/share/doc/memsight/"
# The units name the binary where it was installed, and the examples where they were.
for u in $units; do
    sed -e "s|/usr/bin/memsight|$prefix/bin/memsight|g" -e "s|/usr/share/memsight|$prefix/share/memsight|g" \
        "$here/systemd/$u" >"$root/lib/systemd/system/$u"
    chmod 644 "$root/lib/systemd/system/$u"
done
sed -i -e "s|/usr/share/memsight|$prefix/share/memsight|g" \
    -e "s|^memsight=\${MEMSIGHT:-memsight}|memsight=\${MEMSIGHT:-$prefix/bin/memsight}|" "$root/share/memsight/slurm-healthcheck.sh"
sed -i "s|/usr/bin/memsight|$prefix/bin/memsight|g" "$root/share/memsight/nhc-memsight.conf" "$root/share/memsight/nagios-memsight.cfg"
# The alerts' runbook_url names the runbook where it was installed.
sed -i "s|/usr/share/memsight|$prefix/share/memsight|g" "$root/share/memsight/prometheus/memsight-alerts.yml" \
    "$root/share/memsight/prometheus/memsight-alerts.test.yml"
case $prefix in
    /usr | /usr/local) ;;
    *) echo "install.sh: systemd does not look for units in $prefix/lib/systemd/system; link them into /etc/systemd/system to use them" >&2 ;;
esac
[ -n "${DESTDIR:-}" ] || ! command -v systemctl >/dev/null 2>&1 || systemctl daemon-reload >/dev/null 2>&1 || true
echo "memsight installed in $prefix; the metrics timer is installed, not enabled (systemctl enable --now memsight-metrics.timer)"
