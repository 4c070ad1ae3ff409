"""scripts/bench-registry: evicting a dead instance's registry entries by the reverse
index and by a scan, a reconnect storm, and redis-benchmark's HSET rate on the same
server as the baseline."""

import json
import os
import re
import subprocess
import tempfile

from .. import redis_client
from ..processes import ROOT, Group, free_port, wait_until
from . import common


def summary(r, baseline):
    """The lines of the summary of registry_bench's result r."""
    out = []
    for k in ("reverse_index", "scan"):
        e = r[k]
        out.append("%13s: %d of %d entries of the dead instance evicted in %.2f s, Redis CPU %.2f s, "
                   "left %d (registry also holds %d entries of a live instance)"
                   % (e["mode"], e["evicted"], e["devices"], e["seconds"], e["redis_cpu_seconds"],
                      e["left_in_registry"], e["live_devices"]))
    s = r["reconnect_storm"]
    out.append("reconnect storm: %d devices moved in %.2f s = %.0f registrations/s (%.0f registry "
               "ops/s), %d owned by the new instance after"
               % (s["devices"], s["seconds"], s["registrations_per_s"], s["ops_per_s"],
                  s["owned_by_b_after"]))
    out.append("baseline: redis-benchmark HSET, 50 clients: %s" % baseline)
    ri = r["reverse_index"]
    ok = ri["seconds"] < 5 and ri["evicted"] == ri["devices"]
    out.append("bar (DESIGN.md §8: all entries of the dead instance evicted in under 5 s, reverse "
               "index): %s"
               % ("PASS" if ok else "FAIL"))
    return out


def main(a):
    """Runs scripts/bench-registry with its parsed arguments; the exit code."""
    os.chdir(ROOT)
    common.build_release("registry_bench", quiet=True)
    port = free_port()
    tmp = tempfile.mkdtemp()
    procs = Group(tmp)
    with common.stopping(procs, tmp):
        procs.start(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                     "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
        wait_until(lambda: redis_client.ping(port), 5)
        bench = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "hset", "-n", "200000",
                                "-c", "50", "-q"], capture_output=True, text=True).stdout
        m = re.search(r"[0-9.]+ requests per second", bench.replace("\r", ""))
        baseline = m.group(0) if m else ""
        result = subprocess.run([os.path.join(ROOT, "build/release/tests/bench/registry_bench"),
                                 str(port), str(a.devices), str(a.storm)],
                                stdout=subprocess.PIPE, text=True, check=True).stdout
        path = os.path.join(ROOT, "build", "release", "registry_bench.json")
        with open(path, "w") as f:
            f.write(result.rstrip("\n") + "\n")
        with open(path) as f:
            print("\n".join(summary(json.load(f), baseline)), flush=True)
    return 0
