"""The soak of `tgw node` (scripts/node-soak): a cluster of nodes on a private
redis-server under kills, restarts and pauses, then the ledger: every message id
handled or in the error list exactly once, one emitter per period, epochs that never
go back."""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from .processes import find_tgw, rss_kib, spawn
from .servers import RedisServer

PERIOD_MS = 500  # the emit period the "two emitters in one period" check uses


class Node:
    count = 0

    def __init__(self, args, port, logdir, node_id=None):
        Node.count += 1
        self.id = node_id or f"soak-{Node.count}"
        self.paused_until = 0.0
        self.rss = []
        log = open(os.path.join(logdir, f"{self.id}.log"), "ab")
        self.proc = spawn(
            [args.tgw, "node", "--rport", str(port), "--id", self.id, "--interval", "0",
             "--work-ms", str(args.work_ms), "--error-rate", str(args.error_rate),
             "--record-handled", "--max-messages", str(args.messages),
             "--log-level", "warn"], stdout=log, stderr=log)

    def alive(self):
        return self.proc.poll() is None

    def paused(self):
        return time.monotonic() < self.paused_until


def parse_message(m):
    """(id, emitter, epoch, emit time in ms) of a message "id:emitter:epoch:ts"."""
    ident, emitter, epoch, ts = m.split(":")
    return int(ident), emitter, int(epoch), int(ts)


def ledger(handled, errors, emitted):
    """What the nodes' records say of the `emitted` message ids. handled: message ->
    times handled (nodes:handled); errors: the error list's JSON entries. Returns
    the ids missing, the messages and ids counted more than once, the periods in
    which two emitters emitted and how often the epoch went back."""
    seen = {}
    twice = []
    for msg, count in handled.items():
        ident = parse_message(msg)[0]
        seen[ident] = seen.get(ident, 0) + int(count)
        if int(count) != 1:
            twice.append(msg)
    for e in errors:
        ident = parse_message(json.loads(e)["message"])[0]
        seen[ident] = seen.get(ident, 0) + 1
    for ident, c in seen.items():
        if c != 1:
            twice.append(str(ident))
    missing = [i for i in range(1, emitted + 1) if i not in seen]

    # Two emitters in one period, and epochs going back, from the messages themselves.
    msgs = sorted(parse_message(m) for m in handled)
    msgs += [parse_message(json.loads(e)["message"]) for e in errors]
    msgs.sort()
    periods = {}
    epoch_back = 0
    last_epoch = 0
    for ident, emitter, epoch, ts in msgs:
        periods.setdefault(ts // PERIOD_MS, set()).add(emitter)
        if epoch < last_epoch:
            epoch_back += 1
        last_epoch = max(last_epoch, epoch)
    two_emitters = sum(1 for s in periods.values() if len(s) > 1)
    return missing, twice, two_emitters, epoch_back


def violations_of(report, messages, missing, twice):
    out = []
    if report.get("emitted", 0) < messages:
        out.append(f"only {report.get('emitted')} of {messages} messages emitted in time")
    if report.get("missing"):
        out.append(f"{report['missing']} message ids neither handled nor in the error list "
                   f"(first: {missing[:5]})")
    if report.get("handled_more_than_once"):
        out.append(f"{report['handled_more_than_once']} messages counted more than once "
                   f"(first: {twice[:5]})")
    if report.get("periods_with_two_emitters"):
        out.append(f"{report['periods_with_two_emitters']} periods with two emitters")
    if report.get("epoch_went_back"):
        out.append(f"epoch went back {report['epoch_went_back']} times")
    return out


def number(r, *command):
    return int(r.execute_command(*command) or 0)


def main(args):
    """Runs scripts/node-soak with its parsed arguments; the exit code."""
    if args.short:
        args.nodes, args.messages, args.fault_every, args.seconds = 6, 250_000, 1.5, 240
    args.tgw = find_tgw(args.tgw)
    if not args.tgw:
        sys.exit("node-soak: no tgw binary; build first or pass --tgw")
    if shutil.which("redis-server") is None:
        sys.exit("node-soak: redis-server not found (scripts/setup installs it)")
    rng = random.Random(args.seed)

    workdir = tempfile.mkdtemp(prefix="tgw-node-soak-")
    server = RedisServer(workdir, os.path.join(workdir, "redis.log"))
    if not server.start():
        sys.exit(f"node-soak: redis-server did not start (see {server.log})")
    port = server.port
    r = server.client()

    nodes = [Node(args, port, workdir) for _ in range(args.nodes)]
    retired = []
    faults = {"kill": 0, "kill_emitter": 0, "restart_same_id": 0, "pause": 0}
    longest_gap_ms, gap_start = 0, None
    start = time.monotonic()
    next_fault = start + 2 + rng.expovariate(1 / args.fault_every)
    last_rss = 0.0
    emitted = 0
    report = {}
    missing, twice, rss = [], [], {}
    try:
        while time.monotonic() - start < args.seconds:
            now = time.monotonic()
            emitted = number(r, "GET", "nodes:seq")
            # Is anybody alive holding the lease?
            holder = r.get("nodes:emitter") or ""
            live = any(n.id == holder and n.alive() and not n.paused() for n in nodes)
            if live or emitted >= args.messages:
                if gap_start is not None:
                    longest_gap_ms = max(longest_gap_ms, (now - gap_start) * 1000)
                    gap_start = None
            elif gap_start is None:
                gap_start = now
            for n in nodes:
                if n.paused_until and now >= n.paused_until:
                    n.proc.send_signal(signal.SIGCONT)
                    n.paused_until = 0.0
            if now - last_rss >= 1.0:
                last_rss = now
                for n in nodes:
                    if n.alive():
                        kib = rss_kib(n.proc.pid)
                        if kib:
                            n.rss.append((round(now - start, 1), kib))
            if emitted < args.messages and now >= next_fault:
                next_fault = now + rng.expovariate(1 / args.fault_every)
                kind = rng.choice(["kill", "kill_emitter", "pause", "restart_same_id"])
                candidates = [n for n in nodes if n.alive() and not n.paused()]
                if kind == "kill_emitter":
                    candidates = [n for n in candidates if n.id == holder] or candidates
                if candidates:
                    victim = rng.choice(candidates)
                    if kind == "pause":
                        victim.proc.send_signal(signal.SIGSTOP)
                        victim.paused_until = now + rng.uniform(1.5, 3.0)
                    else:
                        victim.proc.kill()
                        victim.proc.wait()
                        nodes.remove(victim)
                        retired.append(victim)
                        same = kind == "restart_same_id"
                        nodes.append(Node(args, port, workdir, victim.id if same else None))
                    faults[kind] += 1
            if emitted >= args.messages:
                pending = number(r, "LLEN", "nodes:queue")
                in_hand = sum(number(r, "LLEN", f"nodes:processing:{n.id}")
                              for n in nodes + retired)
                done = number(r, "HLEN", "nodes:handled") + number(r, "LLEN", "nodes:errors")
                if pending == 0 and in_hand == 0 and done >= args.messages:
                    break
            time.sleep(0.05)
        elapsed = time.monotonic() - start
        for n in nodes:
            if n.paused_until:
                n.proc.send_signal(signal.SIGCONT)

        # The ledger: handled counts per message and the error list.
        handled = r.hgetall("nodes:handled")
        errors = r.lrange("nodes:errors", 0, -1)
        missing, twice, two_emitters, epoch_back = ledger(handled, errors, emitted)

        long_lived = [n for n in nodes if len(n.rss) >= 2]
        rss = {n.id: {"first_kib": n.rss[0][1], "last_kib": n.rss[-1][1],
                      "max_kib": max(k for _, k in n.rss), "samples": len(n.rss)}
               for n in long_lived}
        report = {
            "nodes": args.nodes, "messages_target": args.messages, "emitted": emitted,
            "seconds": round(elapsed, 1), "messages_per_s": round(emitted / elapsed),
            "faults": faults, "handled": len(handled), "errors": len(errors),
            "missing": len(missing), "handled_more_than_once": len(twice),
            "epoch_went_back": epoch_back,
            "periods_with_two_emitters": two_emitters, "period_ms": PERIOD_MS,
            "longest_without_live_emitter_ms": round(longest_gap_ms),
            "rss": rss, "workdir": workdir, "seed": args.seed,
        }
    finally:
        for n in nodes:
            if n.alive():
                n.proc.send_signal(signal.SIGCONT)
                n.proc.terminate()
        for n in nodes:
            try:
                n.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                n.proc.kill()
        server.stop_all()

    violations = violations_of(report, args.messages, missing, twice)
    report["violations"] = violations

    print(f"node soak: {report['nodes']} nodes, {report['emitted']} messages in {report['seconds']} s "
          f"({report['messages_per_s']}/s), faults {report['faults']}")
    print(f"  handled {report['handled']}, errors {report['errors']}, missing {report['missing']}, "
          f"more than once {report['handled_more_than_once']}")
    print(f"  periods ({PERIOD_MS} ms) with two emitters: {report['periods_with_two_emitters']}; "
          f"epoch went back: {report['epoch_went_back']}; "
          f"longest without a live emitter: {report['longest_without_live_emitter_ms']} ms")
    for ident, s in sorted(rss.items()):
        print(f"  rss {ident}: first {s['first_kib']} KiB, last {s['last_kib']} KiB, "
              f"max {s['max_kib']} KiB over {s['samples']} samples")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    if violations:
        print("VIOLATIONS:\n  " + "\n  ".join(violations))
        print(f"  logs kept in {workdir}")
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print("node soak: no violations")
    return 0
