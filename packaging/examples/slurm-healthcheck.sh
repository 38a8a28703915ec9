#!/bin/sh
# Slurm HealthCheckProgram: judge this node with memsight; drain it on FAIL or INCOMPLETE, with
# memsight's one line (ASCII) as the reason, and resume it when it passes again, if memsight was
# what drained it. In slurm.conf:
#   HealthCheckProgram=/usr/share/memsight/slurm-healthcheck.sh
#   HealthCheckInterval=21600
#   HealthCheckNodeState=IDLE      # measure only on idle nodes: jobs would disturb it and it them
# MEMSIGHT_REFERENCE overrides the reference (default /etc/memsight/node-reference.toml);
# MEMSIGHT_RESULT judges a stored result instead of measuring; MEMSIGHT names the binary (default:
# memsight from PATH; install.sh writes the one it installed).
# Exit status: memsight check's (0 PASS, 1 FAIL, 3 INCOMPLETE or a system error); 2 (bad input: a
# reference with an error in it, a file that is not there) is reported and drains nothing: it
# is the configuration that is wrong.
reference=${MEMSIGHT_REFERENCE:-/etc/memsight/node-reference.toml}
node=${SLURMD_NODENAME:-$(hostname -s)}
memsight=${MEMSIGHT:-memsight}
line=$("$memsight" check --quiet --no-progress --reference "$reference" --format line ${MEMSIGHT_RESULT:+"$MEMSIGHT_RESULT"} 2>&1)
status=$?
case $status in
    0)
        # Resume only a node memsight drained (its reason starts with "memsight:"), never one an
        # administrator or another check drained.
        info=$(scontrol show node "$node" 2>/dev/null)
        case $info in
            *State=*DRAIN*) case $info in
                *"Reason=memsight:"*) scontrol update NodeName="$node" State=RESUME ;;
            esac ;;
        esac
        ;;
    1|3)
        scontrol update NodeName="$node" State=DRAIN Reason="$(printf '%s' "$line" | LC_ALL=C tr -cd '\40-\176' | head -c 200)"
        ;;
    *)
        printf '%s\n' "$line" >&2
        ;;
esac
exit "$status"
