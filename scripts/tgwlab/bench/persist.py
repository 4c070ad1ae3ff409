"""scripts/bench-persist: what the gateway's persist Function costs Redis per packet,
library against library (and variants of one), in the same minutes."""

import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from ..cli import fail
from ..processes import ROOT as ROOT_DIR, TICK, cpu_ticks, free_port, spawn

ROOT = Path(ROOT_DIR)
LIBRARY = ROOT / "infra" / "telemetry" / "gateway_library.lua"

# The calls persist_one makes for every packet, found by the text that starts them.
PER_PACKET_CALLS = {
    "dedupe read (HMGET device)": "redis.call('HMGET', device",
    "journal event (XADD journal:{imei})": "'records_accepted'",
    "projection (HSET device)": "redis.call('HSET', device, 'last_fingerprint'",
}

# One 8E record as the simulator sends it: ts priority lon lat alt angle sats speed
# event_io io_json generation_type (empty outside Codec 16). io in the form the gateway
# renders (telemetry entry format 4, docs/TELEMETRY.md).
RECORD = ["1763770000000", "0", "253456789", "546789012", "120", "180", "12", "56", "0",
          '[[239,"1",1],[240,"1",1],[21,"4",1],[66,"12843",2],[24,"56",2],[181,"12",2],'
          '[182,"8",2],[16,"1234567",4]]',
          ""]
# The same elements as format 3 wrote them (no wire sizes), for --format3-io.
FORMAT3_IO = ('[[239,"1"],[240,"1"],[21,"4"],[66,"12843"],[24,"56"],[181,"12"],[182,"8"],'
              '[16,"1234567"]]')
# The same elements as format 2 wrote them, for --format2-io.
FORMAT2_IO = '{"239":1,"240":1,"21":4,"66":12843,"24":56,"181":12,"182":8,"16":1234567}'


def die(message):
    fail("bench-persist", message)


def call_span(text, marker):
    """The [start, end) of the redis.call(...) expression that contains marker."""
    at = text.find(marker)
    if at < 0:
        return None
    start = text.rfind("redis.call(", 0, at + len("redis.call("))
    if start < 0:
        return None
    depth, i = 0, start + len("redis.call")
    while i < len(text):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return start, i + 1
        elif text[i] == "'":
            i = text.index("'", i + 1)
        i += 1
    return None


def without(text, markers):
    """text with each call named by markers left out; None when one is not found."""
    for marker in markers:
        span = call_span(text, marker)
        if span is None:
            return None
        start, end = span
        # A call whose value is used (local seen = redis.call('HMGET', ...)) is
        # replaced by a value that reads as "nothing stored yet".
        line_start = text.rfind("\n", 0, start) + 1
        used = "=" in text[line_start:start]
        replacement = "{false, false, false}" if used else "local _ = nil"
        text = text[:start] + replacement + text[end:]
    return text


def renamed(text, tag):
    """The library under its own name, its functions under names ending in tag."""
    text, n = re.subn(r"^#!lua name=\S+", f"#!lua name=bench_{tag}", text, count=1)
    if n != 1:
        die("a library must start with '#!lua name=...'")
    text = re.sub(r"register_function\('(\w+)'", lambda m: f"register_function('{m.group(1)}_{tag}'", text)
    return text


def cpu_seconds(pid):
    return cpu_ticks(pid) / TICK


def set_config(cli, name, value):
    done = subprocess.run(cli + ["CONFIG", "SET", name, value], capture_output=True, text=True)
    if done.stdout.strip() != "OK":
        die(f"CONFIG SET {name} {value} failed: {done.stdout.strip()} {done.stderr.strip()}")


def main(args):
    """Runs scripts/bench-persist with its parsed arguments."""
    for name in ("redis-server", "redis-cli", "redis-benchmark", "taskset"):
        if shutil.which(name) is None:
            die(f"{name} not found (scripts/setup installs it)")
    if min(args.rounds, args.packets_per_call, args.records, args.devices, args.packets) < 1:
        die("--rounds, --packets-per-call, --records, --devices and --packets take a number above 0")
    if args.packets_per_call * (5 + 11 * args.records) > 100000:
        die("a call that large exceeds redis-benchmark's command line")

    paths = args.libraries or [LIBRARY]
    variants = []  # (label, library text, server settings for its turn, io field)
    for path in paths:
        if not path.is_file():
            die(f"{path}: no such file")
        variants.append((str(path.relative_to(ROOT) if path.is_absolute() and ROOT in path.parents else path),
                         path.read_text(), [], RECORD[9]))
    if args.breakdown:
        full = variants[0][1]
        for label, marker in PER_PACKET_CALLS.items():
            text = without(full, [marker])
            if text is None:
                die(f"--breakdown: the first library has no call matching {marker!r}")
            variants.append((f"without the {label}", text, [], RECORD[9]))
        variants.append(("telemetry XADD alone", without(full, list(PER_PACKET_CALLS.values())), [],
                         RECORD[9]))
    if args.format2_io:
        variants.append(("with the format 2 io field", variants[0][1], [], FORMAT2_IO))
    if args.format3_io:
        variants.append(("with the format 3 io field", variants[0][1], [], FORMAT3_IO))
    for setting in args.config:
        parts = setting.split()
        if len(parts) != 2:
            die(f"--config {setting!r}: give a name and a value, as in --config 'hash-max-listpack-entries 0'")
        variants.append((f"with {parts[0]} {parts[1]}", variants[0][1], [parts], RECORD[9]))

    ncpu = os.cpu_count() or 1
    server_pin, client_pin = (["taskset", "-c", "0"], ["taskset", "-c", "1"]) if ncpu > 1 else ([], [])
    workdir = Path(tempfile.mkdtemp(prefix="tgw-bench-persist-"))
    port = free_port()
    server = spawn(server_pin + ["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                                 "--save", "", "--appendonly", "no", "--dir", str(workdir)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cli = ["redis-cli", "-p", str(port)]
    try:
        for _ in range(100):
            if subprocess.run(cli + ["PING"], capture_output=True, text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        else:
            die("redis-server did not start")
        defaults = {}
        for _, _, settings, _ in variants:
            for name, _ in settings:
                got = subprocess.run(cli + ["CONFIG", "GET", name], capture_output=True, text=True).stdout.split()
                if len(got) != 2:
                    die(f"--config: redis-server has no setting {name!r}")
                defaults[name] = got[1]
        for i, (label, text, _, _) in enumerate(variants):
            loaded = subprocess.run(cli + ["-x", "FUNCTION", "LOAD", "REPLACE"], input=renamed(text, f"v{i}"),
                                    capture_output=True, text=True)
            if loaded.returncode != 0 or "ERR" in loaded.stdout:
                die(f"{label}: FUNCTION LOAD failed: {loaded.stdout.strip()} {loaded.stderr.strip()}")

        ppc = args.packets_per_call
        keys = []
        for _ in range(ppc):
            keys += ["journal:{356307__rand_int__}", "device:{356307__rand_int__}"]

        def call_args(io):
            record = RECORD[:9] + [io] + RECORD[10:]
            return ["P", "356307040000001", "__rand_int__", str(args.records), "8E"] + record * args.records

        fargs_of = {label: call_args(io) * ppc for label, _, _, io in variants}
        calls = max(1, args.packets // ppc)
        print(f"redis-server on core 0, redis-benchmark on core 1: FCALL tgw_persist_batch of {ppc} packets "
              f"of {args.records} record(s), {calls * ppc} packets a turn, {args.devices} devices")
        results = {label: [] for label, _, _, _ in variants}
        for r in range(1, args.rounds + 1):
            for i, (label, _, settings, _) in enumerate(variants):
                fargs = fargs_of[label]
                for name, value in settings:
                    set_config(cli, name, value)
                subprocess.run(cli + ["FLUSHALL"], capture_output=True, check=True)
                before = cpu_seconds(server.pid)
                bench = subprocess.run(
                    client_pin + ["redis-benchmark", "-p", str(port), "-c", "50", "-P", "4", "-q",
                                  "-n", str(calls), "-r", str(args.devices), "FCALL", f"tgw_persist_batch_v{i}",
                                  str(1 + 2 * ppc), "telemetry:records"] + keys + ["bench", "1000", "0"] + fargs,
                    capture_output=True, text=True)
                spent = cpu_seconds(server.pid) - before
                for name, _ in settings:
                    set_config(cli, name, defaults[name])
                rates = re.findall(r"([\d.]+) requests per second", bench.stdout.replace("\r", "\n"))
                if not rates:
                    die(f"{label}: redis-benchmark gave no rate: {bench.stdout[-300:]} {bench.stderr[-300:]}")
                packets_per_s = float(rates[-1]) * ppc
                cpu_us = spent * 1e6 / (calls * ppc)
                results[label].append((packets_per_s, cpu_us))
                memory = subprocess.run(cli + ["MEMORY", "USAGE", "telemetry:records", "SAMPLES", "0"],
                                        capture_output=True, text=True).stdout.strip()
                length = subprocess.run(cli + ["XLEN", "telemetry:records"], capture_output=True,
                                        text=True).stdout.strip()
                per_entry = (f"  {int(memory) / int(length):6.1f} bytes an entry"
                             if memory.isdigit() and length.isdigit() and int(length) > 0 else "")
                print(f"round {r}  {label:48} {packets_per_s:9,.0f} packets/s  Redis {cpu_us:5.2f} µs a packet"
                      f"{per_entry}")
        print("\nmeans:")
        full_cpu = statistics.mean(c for _, c in results[variants[0][0]])
        for label, runs in results.items():
            line = (f"  {label:48} {statistics.mean(p for p, _ in runs):9,.0f} packets/s  "
                    f"Redis {statistics.mean(c for _, c in runs):5.2f} µs a packet")
            if args.breakdown and label.startswith("without the "):
                line += f"  → the {label[len('without the '):]} costs {full_cpu - statistics.mean(c for _, c in runs):.2f} µs"
            print(line)
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)

    return 0
