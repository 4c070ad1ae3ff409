"""The fault-injection run of a tgw cluster (scripts/chaos): run.py starts and drives
it, faults.py injects and ends the faults, checks.py judges what was observed,
report.py prints it."""

import json
import shutil
import signal
import sys

from ..processes import find_tgw
from .faults import CLUSTER_FAULT_KINDS, FAULT_KINDS, HA_FAULT_KINDS
from .report import print_report
from .run import Chaos


def main(args):
    """Runs scripts/chaos with its parsed arguments; the exit code: 0 no violation,
    1 a violation, 2 a setup error, 130 interrupted."""
    if args.short:
        args.duration, args.faults, args.devices, args.command_rate = 45, 12, 40, 1.5
    if args.redis_ha and args.redis_cluster:
        sys.exit("chaos: --redis-ha and --redis-cluster are two different stores; choose one")
    if getattr(args, "tls", False) and not (args.redis_ha or args.redis_cluster):
        sys.exit("chaos: --tls runs the --redis-ha or --redis-cluster store over TLS; add one")
    kinds = HA_FAULT_KINDS if args.redis_ha else CLUSTER_FAULT_KINDS if args.redis_cluster \
        else FAULT_KINDS
    if args.kinds is None:
        args.kinds = ",".join(kinds)
    if args.ack_replicas is None:
        args.ack_replicas = args.replicas if args.redis_ha else 1 if args.redis_cluster else 0
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in args.kinds if k not in kinds]
    if unknown or not args.kinds:
        sys.exit(f"chaos: unknown fault kinds {unknown}; choose from {','.join(kinds)}")
    if args.instances < 2:
        sys.exit("chaos: --instances must be at least 2 (a device needs somewhere to go)")
    args.tgw = find_tgw(args.tgw)
    if not args.tgw:
        print("chaos: no tgw binary; build first or pass --tgw", file=sys.stderr)
        return 2
    for tool in ("redis-server",):
        if shutil.which(tool) is None:
            print(f"chaos: {tool} not found (scripts/setup installs it)", file=sys.stderr)
            return 2

    # SIGTERM (ctest's timeout, a CI cancel) ends the run through the same cleanup.
    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)

    chaos = Chaos(args)
    try:
        chaos.start()
        chaos.run()
        report = chaos.finish()
    except KeyboardInterrupt:
        print("chaos: interrupted; processes stopped, logs in " + chaos.workdir, file=sys.stderr)
        return 130
    finally:
        chaos.cleanup()

    print_report(report)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(report, f, indent=2)
    if report["violations"]:
        print("VIOLATIONS:\n  " + "\n  ".join(report["violations"]))
        print(f"  logs kept in {chaos.workdir}")
        return 1
    if args.keep_workdir:
        print(f"chaos: logs kept in {chaos.workdir}")
    else:
        shutil.rmtree(chaos.workdir, ignore_errors=True)
    print("chaos: no violations")
    return 0
