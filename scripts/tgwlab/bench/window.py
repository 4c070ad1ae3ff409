"""A measured window of a gateway run: a snapshot at each end (the gateway's counters,
XLEN of the telemetry stream, CPU ticks of the gateway, its threads and its peers, the
machine's CPU, the gateway's RSS and open files), what changed between them, and the
simulator's ACK latency over the window from its --progress-log lines."""

import json
import math
import os
import time

from .. import metrics, redis_client
from ..processes import TICK, cpu_ticks, open_files, rss_kib


class Gone(Exception):
    """The process a snapshot reads is gone, or its metrics do not answer."""


def threads(pid):
    """{tid: [thread name, CPU ticks]} of a process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        t = cpu_ticks(f"{pid}/task/{tid}")
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if t is not None:
            out[tid] = [name, t]
    return out


def machine():
    """(all, idle + iowait) ticks of the machine since boot."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v[:8]), v[3] + v[4]


def snapshot(metrics_port, redis_port, gateway, others):
    """The state at one end of a window. others: [(name, pid)] whose CPU is read too."""
    values = metrics.scrape(metrics_port, timeout=5)
    if values is None:
        raise Gone(f"no metrics from 127.0.0.1:{metrics_port}")
    s = {"t": time.monotonic(), "metrics": metrics.totals(values)}
    r = redis_client.client(redis_port)
    try:
        s["xlen"] = r.xlen("telemetry:records")
    finally:
        r.close()
    s["gateway_ticks"] = cpu_ticks(gateway)
    if s["gateway_ticks"] is None:
        raise Gone(f"the gateway (pid {gateway}) is gone")
    s["gateway_threads"] = threads(gateway)
    s["other_ticks"] = {name: cpu_ticks(pid) for name, pid in others}
    s["machine"] = machine()
    s["rss_kib"] = rss_kib(gateway) or 0
    s["fds"] = open_files(gateway)
    return s


def window(a, b):
    """What changed from snapshot a to snapshot b: rates, CPU % (100 = one core) of the
    gateway, its threads, its peers, the rest of the machine."""
    dt = b["t"] - a["t"]
    pct = lambda d: round(100.0 * d / TICK / dt, 1) if d is not None else None
    diff = lambda x, y: x - y if x is not None and y is not None else None
    tot = b["machine"][0] - a["machine"][0]
    idle = b["machine"][1] - a["machine"][1]
    ncpu = os.cpu_count() or 1
    delta = {k: b["metrics"][k] - a["metrics"].get(k, 0) for k in b["metrics"]}
    cpu = {"gateway": pct(b["gateway_ticks"] - a["gateway_ticks"])}
    cpu.update({k: pct(diff(b["other_ticks"][k], a["other_ticks"][k])) for k in b["other_ticks"]})
    cpu["machine_busy"] = round(100.0 * ncpu * (tot - idle) / tot, 1) if tot else 0.0
    cpu["others"] = round(cpu["machine_busy"] - sum(v or 0 for k, v in cpu.items() if k != "machine_busy"), 1)
    thr = sorted(([n, pct(v - a["gateway_threads"].get(t, [n, 0])[1])]
                  for t, (n, v) in b["gateway_threads"].items()), key=lambda x: -x[1])
    return {
        "seconds": round(dt, 3),
        "gateway_records_per_s": round(delta.get("teltonika_records_persisted_total", 0) / dt, 1),
        "gateway_acks_per_s": round(delta.get("teltonika_acks_total", 0) / dt, 1),
        "xlen_records_per_s": round((b["xlen"] - a["xlen"]) / dt, 1),
        "metric_deltas": delta,
        "cpu_percent": cpu,
        "gateway_threads_cpu_percent": thr,
        "gateway_rss_kib": b["rss_kib"],
        "gateway_fds": b["fds"],
    }


def percentile_ms(hist, q):
    """hist: {bucket's highest value in us: count}, as `tgw simulate --progress-log`
    writes it; the q-quantile in ms."""
    total = sum(hist.values())
    if total == 0:
        return math.nan
    rank, seen = max(1, math.ceil(q * total)), 0
    for upper in sorted(hist):
        seen += hist[upper]
        if seen >= rank:
            return upper / 1000.0
    return max(hist) / 1000.0


def progress(path, t_from, t_to):
    """The simulator's seconds in (t_from, t_to]: one JSON line a second from
    `tgw simulate --progress-log`, each with that second's ACK latency histogram, so
    the window's percentiles come from their sum."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if t_from < j["t"] <= t_to:
                rows.append(j)
    if not rows:
        return {}
    med = lambda xs: sorted(xs)[len(xs) // 2]
    hist = {}
    for r in rows:
        for upper, count in r["ack_latency_us"].items():
            hist[int(upper)] = hist.get(int(upper), 0) + count
    rec = [r["records_per_s"] for r in rows]
    return {"seconds": len(rows),
            "records_per_s": round(sum(rec) / len(rec), 1),
            "records_per_s_min": min(rec), "records_per_s_max": max(rec),
            "acks": sum(hist.values()),
            "ack_p50_ms": percentile_ms(hist, 0.50),
            "ack_p99_ms": percentile_ms(hist, 0.99),
            "ack_p999_ms": percentile_ms(hist, 0.999),
            "ack_max_ms": max(r["ack_max_us"] for r in rows) / 1000.0,
            "ack_p99_ms_worst_second": max(r["ack_p99_ms"] for r in rows),
            "ack_p99_ms_median_second": med([r["ack_p99_ms"] for r in rows]),
            "connected_min": int(min(r["connected"] for r in rows)),
            "errors_in_window": int(rows[-1]["errors"] - rows[0]["errors"])}
