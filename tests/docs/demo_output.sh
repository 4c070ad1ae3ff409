#!/usr/bin/env bash
# Runs scripts/demo with the arguments given and holds its output to what the README
# promises a newcomer: the devices as `tgw devices` lists them, and a device's records as
# `tgw telemetry tail --names` prints them, IO elements named, never raw Redis replies
# (epoch milliseconds, coordinates times 10^7).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=$("$here/scripts/demo" "$@")
printf '%s\n' "$out"
fail() { echo "demo_output: $1" >&2; exit 1; }
grep -q '^== tgw devices' <<< "$out" || fail "no tgw devices section"
grep -Eq '^  IMEI +INSTANCE' <<< "$out" || fail "no tgw devices table header"
grep -Eq '^  35[0-9]{13} ' <<< "$out" || fail "no device row in the tgw devices table"
grep -q '^== tgw telemetry tail' <<< "$out" || fail "no tgw telemetry tail section"
grep -Eq 'ignition' <<< "$out" || fail "no IO element named in the records (--names)"
if grep -Eq 'XREVRANGE|HGETALL|^  (lat|lon)[[:space:]]' <<< "$out"; then
  fail "raw Redis output in the demo"
fi
echo "demo_output: the demo shows tgw devices and tgw telemetry tail --names"
