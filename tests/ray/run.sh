#!/usr/bin/env bash
# Runs tests/ray in a private network namespace where the only interface is
# loopback: Ray's servers bind every interface they see, and must see only
# 127.0.0.1. Without namespaces the test says why it does not run.
# Usage: run.sh PYTHON [pytest args]
set -u
py=$1
shift
here=$(dirname "$0")
if unshare -rn true 2>/dev/null; then
  exec unshare -rn sh -c 'ip link set lo up && VINFER_RAY_LOOPBACK_ONLY=1 exec "$@"' sh "$py" -m pytest -q -rs -p no:cacheprovider "$here" "$@"
fi
exec "$py" -m pytest -q -rs -p no:cacheprovider "$here" "$@"
