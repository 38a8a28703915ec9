#!/bin/sh
# Slurm HealthCheckProgram: judge this node with memsight; drain it on anything but a PASS, with
# memsight's one line (ASCII) and its exit status as the reason, and resume it when it passes
# again, if memsight was what drained it. In slurm.conf:
#   HealthCheckProgram=/usr/share/memsight/slurm-healthcheck.sh
#   HealthCheckInterval=21600
#   HealthCheckNodeState=IDLE      # measure only on idle nodes: jobs would disturb it and it them
# MEMSIGHT_REFERENCE overrides the reference (default /etc/memsight/node-reference.toml);
# MEMSIGHT_RESULT judges a stored result instead of measuring; MEMSIGHT names the binary (default:
# memsight from PATH; install.sh writes the one it installed).
# It fails closed: memsight check's 1 (FAIL) and 3 (INCOMPLETE) drain the node, and so does
# every other status: 2 (a reference with an error in it, a file that is not there), a crash
# (139), a panic (101), an OOM kill (137), a missing binary (127). A health check that could not
# judge the node has not found it healthy. Slurm kills a HealthCheckProgram after 60 s, so the
# measurement is fitted to MEMSIGHT_TIME_BUDGET (default 45s, `memsight check --time-budget`):
# the check measures only what the reference needs, and leaves its studies and matrices out
# first; a node on which latency and bandwidth alone are predicted to take longer is refused
# before they measure (exit 2) and drained with that reason. 15 s are left as a margin: latency
# and bandwidth, once started, are not stopped.
reference=${MEMSIGHT_REFERENCE:-/etc/memsight/node-reference.toml}
node=${SLURMD_NODENAME:-$(hostname -s)}
memsight=${MEMSIGHT:-memsight}
budget=${MEMSIGHT_TIME_BUDGET:-45s}
line=$("$memsight" check --quiet --no-progress --reference "$reference" --format line --time-budget "$budget" ${MEMSIGHT_RESULT:+"$MEMSIGHT_RESULT"} 2>&1)
status=$?
# The State= field alone (a reason may hold the word DRAIN too).
state() {
    printf '%s\n' "$1" | tr ' ' '\n' | sed -n 's/^State=//p' | head -n 1
}
if [ "$status" -eq 0 ]; then
    # Resume only a node memsight drained (its reason starts with "memsight:"), never one an
    # administrator or another check drained.
    info=$(scontrol show node "$node" 2>/dev/null)
    case $(state "$info") in
        *DRAIN*) case $info in
            *"Reason=memsight:"*) scontrol update NodeName="$node" State=RESUME ;;
        esac ;;
    esac
    exit 0
fi
# memsight's own words after what happened (none when it said nothing).
said=${line#memsight: }
[ -z "$said" ] || said=": $said"
case $status in
    1|3) why=$line ;;
    2) why="memsight: cannot judge the node (configuration)$said" ;;
    126|127) why="memsight: not run ($memsight)$said" ;;
    *) if [ "$status" -gt 128 ]; then
           why="memsight: killed by signal $((status - 128))$said"
       else
           why="memsight: failed$said"
       fi ;;
esac
# Slurm keeps a reason in one line: ASCII, printable, short; the status is added after the line
# is cut short, so that a long line cannot cut it off.
why=$(printf '%s' "$why" | LC_ALL=C tr -cd '\40-\176' | head -c 180)
scontrol update NodeName="$node" State=DRAIN Reason="$why [exit $status]"
printf '%s\n' "$line" >&2
exit "$status"
