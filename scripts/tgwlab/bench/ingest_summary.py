"""The summary of scripts/bench-ingest: the runs' table against the XADD and FCALL
ceilings of the same run, CPU per run, the 1-core to 2-core ratio, the cost of
--ack-replicas or TLS, idle memory per device, and the bars of DESIGN.md §8 and §9 (each
names its section); summary.json beside the raw files."""

import json
import math
import os
import re


def summarize(out, date, ncpu, cpu, load, devices, seconds, ack_replicas, tls_runs):
    """Prints the summary of the runs whose files are in `out` and writes
    out/summary.json."""

    def J(name):
        p = os.path.join(out, name)
        return json.load(open(p)) if os.path.exists(p) else None

    m = re.search(r"([\d.]+) requests per second", open(os.path.join(out, "xadd-baseline.log")).read())
    xadd = float(m.group(1)) if m else math.nan
    f0 = lambda x: f"{x:,.0f}"
    f2 = lambda x: f"{x:,.2f}"
    def rate(name):
        p = os.path.join(out, name)
        m = re.search(r"([\d.]+) requests per second", open(p).read()) if os.path.exists(p) else None
        return float(m.group(1)) if m else math.nan
    # Packets per second: each call carries 16 packets.
    fcall = {1: 16 * rate("fcall1-baseline.log"), 10: 16 * rate("fcall10-baseline.log")}
    summary = {"date": date, "nproc": int(ncpu), "cpu": cpu, "load_average_at_start": load,
               "devices": devices, "window_seconds": int(seconds), "xadd_per_s": xadd,
               "fcall_persist_batch_packets_per_s": {"1": fcall[1], "10": fcall[10]}, "runs": {}}
    # The saturated runs' bars are DESIGN.md §8's records/s at 10,000 devices.
    runs = [("sat1", "1 record a packet, as fast as ACKs allow", "all", 25000, 1),
            ("sat10", "10 records a packet, as fast as ACKs allow", "all", 100000, 10),
            ("paced1", "1 record a packet, paced to 25,000 records/s", "all", None, 1),
            ("paced10", "10 records a packet, paced to 100,000 records/s", "all", None, 10),
            ("core1", "1 record a packet, gateway on 1 core", "0", None, 1),
            ("core2", "1 record a packet, gateway on 2 cores", "0,1", None, 1)]
    if ack_replicas:
        runs = [r for base in runs[:4] for r in (
            base, (base[0] + "_ack", base[1] + f", --ack-replicas {ack_replicas}", base[2], None, base[4]))]
    if tls_runs:
        runs = [r for base in runs[:4] for r in (
            base, (base[0] + "_tls", base[1] + ", TLS", base[2], None, base[4]))]
    print()
    print(f"Ingest benchmark, {date}: {ncpu} cores ({cpu}), load average at start {load}")
    policies = (os.environ.get("TGW_CPU_POLICY") or "batch", os.environ.get("TGW_SIM_CPU_POLICY") or "batch")
    summary["cpu_policy"] = {"gateway": policies[0], "simulator": policies[1]}
    print(f"CPU policy (--cpu-policy): gateway {policies[0]}, simulator {policies[1]}")
    print(f"baseline: redis-benchmark pipelined XADD (-P 64, 50 clients): {f0(xadd)} XADD/s")
    print(f"ceiling of the gateway's write, redis-benchmark FCALL tgw_persist_batch (16 packets a call, "
          f"-P 4, 50 clients, 10,000 devices): 1 record {f0(fcall[1])} packets/s = {f0(fcall[1])} "
          f"records/s; 10 records {f0(fcall[10])} packets/s = {f0(10 * fcall[10])} records/s")
    print()
    print(f"{devices:,} devices; window of {seconds} s after ramp-up and warm-up; records/s is the "
          "simulator's mean per second; ACK p50/p99 are over every ACK of the window (the "
          "simulator's per-second histograms summed), with the worst single second's p99 beside")
    print()
    print("| run | gateway cpus | records/s | ACK p50 ms | ACK p99 ms | worst second's p99 ms | "
          "records/s ÷ XADD/s | records/s ÷ FCALL ceiling | gateway counter records/s | "
          "XLEN records/s | whole run: records/s, p50, p99 ms | device errors | gateway died |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    bars = []
    closed_loop = []
    for name, label, cpus, need, rpp in runs:
        s, w, g = J(name + ".json"), J(name + ".window.json"), J(name + ".gateway.json")
        if s is None and w is None:
            continue
        summary["runs"][name] = {"label": label, "simulator_summary": s, "window": w, "gateway": g}
        sim = (w or {}).get("simulator") or {}
        rps, p50, p99 = sim.get("records_per_s", math.nan), sim.get("ack_p50_ms", math.nan), sim.get("ack_p99_ms", math.nan)
        errors = (sum(s.get(k, 0) for k in ("connect_failures", "disconnects", "handshake_timeouts",
                                            "timeouts", "ack_mismatches", "unexpected_bytes"))
                  if s else "no summary")
        died = "yes (status %d), after the window" % g["status"] if g and g.get("died") and w else \
               ("yes (status %d)" % g["status"] if g and g.get("died") else "no")
        whole = f"{f0(s['records_per_s'])}, {f2(s['ack_p50_ms'])}, {f2(s['ack_p99_ms'])}" if s else "-"
        worst = sim.get("ack_p99_ms_worst_second", math.nan)
        print(f"| {label} | {cpus} | {f0(rps)} | {f2(p50)} | {f2(p99)} | {f2(worst)} | {rps / xadd:.3f} | "
              f"{rps / (fcall[rpp] * rpp):.2f} | "
              f"{f0(w['gateway_records_per_s']) if w else '-'} | {f0(w['xlen_records_per_s']) if w else '-'} | "
              f"{whole} | {errors} | {died} |")
        if need:
            bars.append((f"{label}: >= {need:,} records/s (DESIGN.md §8)", rps >= need, f"{f0(rps)} records/s"))
        if name in ("paced1", "paced10"):
            bars.append((f"{label}: ACK p99 < 50 ms (DESIGN.md §8)", p99 < 50, f"{f2(p99)} ms"))
        if name in ("sat1", "sat10") and rps > 0:
            # Every device waits for its ACK before it sends again, so the mean latency of
            # a saturated closed loop is devices / packets per second (Little's law): the
            # latency bar can only apply at the bars' rates, which the paced runs offer.
            loop_ms = 1000.0 * devices / (rps / rpp)
            closed_loop.append(f"{name}: {devices:,} devices / {f0(rps / rpp)} packets/s = "
                               f"{loop_ms:.0f} ms mean ACK latency by Little's law")
    print()
    for line in closed_loop:
        print(f"- {line} (the saturated runs measure throughput; ACK p99 is judged in the paced runs)")
    noisy = []
    for name, label, cpus, need, rpp in runs:
        w = (summary["runs"].get(name) or {}).get("window")
        if w:
            c = {k: (math.nan if v is None else v) for k, v in w["cpu_percent"].items()}
            th = ", ".join(f"{n} {x:.0f}" for n, x in w["gateway_threads_cpu_percent"] if x >= 1) or "none"
            print(f"- {name}: CPU % over the window (100 = one core): gateway {c['gateway']:.0f}, "
                  f"redis-server {c['redis']:.0f}, simulator {c['simulator']:.0f}, other processes "
                  f"{c['others']:.0f}, machine {c['machine_busy']:.0f} of {int(ncpu) * 100}; gateway "
                  f"threads over 1 %: {th}; gateway RSS {w['gateway_rss_kib'] / 1024:.0f} MiB")
            if c["others"] > 10:
                noisy.append(f"{name} ({c['others']:.0f} %)")
    r1, r2 = summary["runs"].get("core1"), summary["runs"].get("core2")
    if r1 and r2 and r1.get("window") and r2.get("window"):
        a, b = r1["window"]["simulator"]["records_per_s"], r2["window"]["simulator"]["records_per_s"]
        summary["core_ratio"] = b / a if a else math.nan
        print(f"- 1 core -> 2 cores (1 record a packet): {f0(a)} -> {f0(b)} records/s, "
              f"ratio 2-core/1-core {summary['core_ratio']:.2f}")
    if noisy:
        print(f"- NOTE: other processes took more than 10 % of a core during the window of "
              f"{', '.join(noisy)}: those figures understate tgw; rerun on an idle machine")
    summary["disturbed_runs"] = noisy
    if ack_replicas:
        print()
        print(f"Replicated ACK: the same runs with --ack-replicas 0 and {ack_replicas} "
              f"({ack_replicas} replica(s) of the redis-server on this box), one after the other:")
        cost = {}
        for name in ("sat1", "sat10", "paced1", "paced10"):
            a = ((summary["runs"].get(name) or {}).get("window") or {}).get("simulator")
            b = ((summary["runs"].get(name + "_ack") or {}).get("window") or {}).get("simulator")
            if not a or not b:
                continue
            drop = 1 - b["records_per_s"] / a["records_per_s"] if a["records_per_s"] else math.nan
            cost[name] = drop
            print(f"- {name}: {f0(a['records_per_s'])} -> {f0(b['records_per_s'])} records/s "
                  f"({-100 * drop:+.1f} %), ACK p50 {f2(a['ack_p50_ms'])} -> {f2(b['ack_p50_ms'])} "
                  f"ms, p99 {f2(a['ack_p99_ms'])} -> {f2(b['ack_p99_ms'])} ms")
        summary["ack_replicas"] = {"replicas": ack_replicas, "throughput_cost": cost}
        if "sat10" in cost:
            bars.append((f"--ack-replicas {ack_replicas} costs <= 15 % of throughput at 10-record packets "
                          "(DESIGN.md §9)",
                         cost["sat10"] <= 0.15, f"{100 * cost['sat10']:.1f} % fewer records/s"))
    if tls_runs:
        print()
        print("TLS on the device port: each run with plain TCP, then TLS (gateway --tls-cert, "
              "simulator --tls), one after the other. Gateway CPU per record is its CPU time over "
              "the window divided by the records stored in it.")
        cost = {}
        for name in ("sat1", "sat10", "paced1", "paced10"):
            ra, rb = summary["runs"].get(name) or {}, summary["runs"].get(name + "_tls") or {}
            wa, wb = ra.get("window"), rb.get("window")
            if not wa or not wb or not wa.get("simulator") or not wb.get("simulator"):
                continue
            a, b = wa["simulator"], wb["simulator"]
            us = lambda w: (1e6 * w["cpu_percent"]["gateway"] / 100.0 / w["gateway_records_per_s"]
                            if w["gateway_records_per_s"] else math.nan)
            sim_us = lambda w: (1e6 * w["cpu_percent"]["simulator"] / 100.0 / w["gateway_records_per_s"]
                                if w["gateway_records_per_s"] and w["cpu_percent"]["simulator"] is not None
                                else math.nan)
            drop = 1 - b["records_per_s"] / a["records_per_s"] if a["records_per_s"] else math.nan
            # The simulator's TLS runs on the same two cores and takes them from the
            # gateway: on a host of its own, the gateway's throughput follows its own
            # CPU a record alone, so its TLS cost there is this.
            own = 1 - us(wa) / us(wb) if us(wb) and not math.isnan(us(wb)) else math.nan
            cost[name] = {"throughput_drop": drop, "gateway_us_per_record": [us(wa), us(wb)],
                          "simulator_us_per_record": [sim_us(wa), sim_us(wb)],
                          "gateway_alone_drop": own}
            print(f"- {name}: {f0(a['records_per_s'])} -> {f0(b['records_per_s'])} records/s "
                  f"({-100 * drop:+.1f} %), ACK p50 {f2(a['ack_p50_ms'])} -> {f2(b['ack_p50_ms'])} ms, "
                  f"p99 {f2(a['ack_p99_ms'])} -> {f2(b['ack_p99_ms'])} ms; gateway CPU "
                  f"{us(wa):.1f} -> {us(wb):.1f} us/record (on a host of its own: "
                  f"{-100 * own:+.1f} % records/s), simulator {sim_us(wa):.1f} -> "
                  f"{sim_us(wb):.1f} us/record")
        summary["tls"] = {"runs": cost}
        if "sat1" in cost:
            bars.append(("TLS costs <= 25 % of throughput at 1-record packets (DESIGN.md §9)",
                         cost["sat1"]["throughput_drop"] <= 0.25,
                         f"{100 * cost['sat1']['throughput_drop']:.1f} % fewer records/s on the "
                         f"shared box; {100 * cost['sat1']['gateway_alone_drop']:.1f} % from the "
                         f"gateway's own CPU a record"))
        mp, mt = J("memory.json"), J("memory_tls.json")
        if mp and mt:
            per = lambda m, k: (m[f"rss_kib_{k}"] - m["rss_kib_before"]) / m[f"devices_{k}"]
            for k in ("1", "2"):
                ratio = per(mt, k) / per(mp, k) if per(mp, k) else math.nan
                print(f"- idle memory at {mp['devices_' + k]:,} devices: plain {per(mp, k):.2f} KiB, "
                      f"TLS {per(mt, k):.2f} KiB per session (x{ratio:.2f})")
                summary["tls"][f"idle_kib_{k}"] = [per(mp, k), per(mt, k)]
            ratio = per(mt, "2") / per(mp, "2") if per(mp, "2") else math.nan
            bars.append((f"idle TLS session at most 2x a plain one at {mp['devices_2']:,} devices",
                         ratio <= 2.0 and mt["all_connected"], f"x{ratio:.2f}"))
    mem = J("memory.json")
    if mem:
        per1 = (mem["rss_kib_1"] - mem["rss_kib_before"]) / mem["devices_1"]
        per2 = (mem["rss_kib_2"] - mem["rss_kib_before"]) / mem["devices_2"]
        step = (mem["rss_kib_2"] - mem["rss_kib_1"]) / (mem["devices_2"] - mem["devices_1"])
        mem.update(per_device_kib_1=per1, per_device_kib_2=per2, per_device_kib_step=step)
        summary["memory"] = mem
        print(f"- idle memory: gateway RSS {mem['rss_kib_before'] / 1024:.1f} MiB before devices; "
              f"{mem['rss_kib_1'] / 1024:.1f} MiB with {mem['sessions_1']:,} idle sessions ({per1:.2f} KiB "
              f"each); {mem['rss_kib_2'] / 1024:.1f} MiB with {mem['sessions_2']:,} ({per2:.2f} KiB each, "
              f"{step:.2f} KiB each from {mem['devices_1']:,} to {mem['devices_2']:,}); gateway open "
              f"files {mem['fds_2']:,}; simulators {' + '.join(f'{n:,}' for n in mem['simulators_2'])}")
        for n, per in ((mem["devices_1"], per1), (mem["devices_2"], per2)):
            bars.append((f"idle device RSS at {n:,} devices <= 8 KiB (DESIGN.md §8)", per <= 8 and mem["all_connected"],
                         f"{per:.2f} KiB" + ("" if mem["all_connected"] else ", not all connected")))
    print()
    for text, ok, value in bars:
        print(f"- Bar: {text}: {'PASS' if ok else 'FAIL'} ({value})")
    summary["bars"] = [{"bar": t, "pass": ok, "value": v} for t, ok, v in bars]
    json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
    print(f"\nraw JSON, progress lines and logs: {out}")
