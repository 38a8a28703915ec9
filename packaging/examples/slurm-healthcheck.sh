#!/bin/sh
# Slurm HealthCheckProgram: judge this node with memsight and drain it, with memsight's one line
# as the reason, when a check fails. In slurm.conf:
#   HealthCheckProgram=/usr/share/doc/memsight/examples/slurm-healthcheck.sh
#   HealthCheckInterval=21600
#   HealthCheckNodeState=IDLE      # measure only on idle nodes: jobs would disturb it and it them
# MEMSIGHT_REFERENCE overrides the reference (default /etc/memsight/node-reference.toml);
# MEMSIGHT_RESULT judges a stored result instead of measuring.
reference=${MEMSIGHT_REFERENCE:-/etc/memsight/node-reference.toml}
node=${SLURMD_NODENAME:-$(hostname -s)}
line=$(memsight check --quiet --no-progress --reference "$reference" --format line ${MEMSIGHT_RESULT:+"$MEMSIGHT_RESULT"} 2>&1)
status=$?
if [ "$status" -ne 0 ]; then
    scontrol update NodeName="$node" State=DRAIN Reason="$(printf '%s' "$line" | head -c 200)"
fi
exit "$status"
