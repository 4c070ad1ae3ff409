"""scripts/hostile: every attack at once, for minutes, beside a fleet of well-behaved
devices; then the checks. The fleet must notice nothing: no ACKed record lost, its ACK
p99 under 50 ms; the gateway's RSS and its Redis's memory must stay flat once the
fleet is up (the telemetry stream and the journals are capped, so what the fleet
itself stores stops growing); every attack must have been refused by its budget.
Figures go to stdout (and --json), for docs/RELIABILITY.md."""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from ..processes import find_tgw, raise_file_limit, spawn, stop
from . import attacks
from .gateway import Gateway, self_signed

FLEET_IMEI_BASE = 352000000000000
# The fleet spreads over 127.0.0.1-4 (tgw simulate --source-spread 4); the attackers
# come from addresses of their own.
ATTACKERS = {"keepalives": "127.0.9.1", "keepalives_tls": "127.0.9.2", "bad_crc": "127.0.9.3",
             "refused": "127.0.9.4", "sessions": "127.0.9.5", "hello": "127.0.10.{}"}


class Sampler(threading.Thread):
    """Every `every` seconds: the gateway's RSS, Redis used_memory, the log's size."""

    def __init__(self, gw, every=5.0):
        super().__init__(daemon=True)
        self.gw, self.every = gw, every
        self.samples = []
        self.stop_event = threading.Event()
        self.started = time.monotonic()

    def run(self):
        r = self.gw.redis()
        while not self.stop_event.wait(self.every):
            try:
                used = int(r.info("memory")["used_memory"]) / 2**20
            except Exception:  # noqa: BLE001 - a sample missed is a sample missed
                used = None
            self.samples.append((time.monotonic() - self.started, self.gw.rss_mib(), used,
                                 self.gw.log_bytes()))

    def finish(self):
        self.stop_event.set()
        self.join(30)
        return self.samples


def flatness(samples, index, after_s):
    """(first-minute mean, last-minute mean, max) of a sampled column after `after_s`."""
    values = [s[index] for s in samples if s[0] >= after_s and s[index] is not None]
    if len(values) < 4:
        return None
    per_minute = max(1, int(60 / (samples[1][0] - samples[0][0]))) if len(samples) > 1 else 1
    first, last = values[:per_minute], values[-per_minute:]
    return statistics.mean(first), statistics.mean(last), max(values)


def commands_beside(gw, stop_event, redis_url, tgw, imei, outcome):
    """Every 5 s a command text with CR/LF to a fleet device, through the CLI (refused
    there) and straight into the stream (refused by the gateway)."""
    n = 0
    while not stop_event.wait(5):
        n += 1
        send = [tgw, "command", "send", "--redis", redis_url, "--imei", imei,
                "--text", "getinfo\r\nsetparam 2001:evil", "--timeout", "2s"]
        cli = subprocess.run(send, capture_output=True, text=True)
        outcome["cli_refused"] = outcome.get("cli_refused", 0) + (cli.returncode == 2)
        # Past the CLI's check, the gateway's own: the command ends failed/malformed.
        past = subprocess.run(send + ["--allow-control-chars"], capture_output=True, text=True)
        outcome["gateway_refused"] = (outcome.get("gateway_refused", 0)
                                      + ("malformed" in past.stdout + past.stderr))
        outcome["sent"] = n


def run(args):
    tgw = find_tgw(args.tgw)
    if tgw is None:
        print("hostile: no tgw binary; build it or pass --tgw", file=sys.stderr)
        return 2
    raise_file_limit()
    workdir = args.workdir or tempfile.mkdtemp(prefix="tgw-hostile-run-")
    os.makedirs(workdir, exist_ok=True)
    tls = self_signed(workdir)
    tls_port_gw = Gateway(tgw, workdir, tls=tls)
    # TLS on a port of its own, so that the fleet stays plain; the retention caps keep
    # what the fleet itself stores from growing, so that Redis memory can be flat.
    gw = Gateway(tgw, workdir, extra=["--tls-port", str(tls_port_gw.port),
                                      "--telemetry-maxlen", str(args.stream_cap),
                                      "--journal-maxlen", "20"], tls=tls)
    gw.tls_port = tls_port_gw.port
    gw.start()
    print(f"hostile: gateway on {gw.port} (TLS {gw.tls_port}), log {gw.log}", flush=True)

    acked_log = os.path.join(workdir, "acked.log")
    fleet_json = os.path.join(workdir, "fleet.json")
    with open(fleet_json, "wb") as out, open(os.path.join(workdir, "fleet.log"), "wb") as err:
        fleet = spawn([tgw, "simulate", "--count", str(args.devices), "--target",
                       f"127.0.0.1:{gw.port}", "--send-period", f"{args.period}s",
                       "--ramp-up", "20s", "--duration", f"{args.seconds + 30}s",
                       "--source-spread", "4", "--imei-base", str(FLEET_IMEI_BASE),
                       "--acked-log", acked_log, "--json", "--quiet"], stdout=out, stderr=err)
    time.sleep(25)  # the fleet is up before the attacks start
    sampler = Sampler(gw)
    sampler.start()

    floods = [attacks.KeepaliveFlood(gw, ATTACKERS["keepalives"]),
              attacks.BadCrcFlood(gw, ATTACKERS["bad_crc"], "356307049990001"),
              attacks.RefusedConnections(gw, ATTACKERS["refused"]),
              attacks.UdpFlood(gw, sources=200, seed=1),
              attacks.UdpFlood(gw, garbage=True, sources=100, seed=2, name="udp-garbage"),
              # One source at about 1,000 datagrams/s, five times its rate budget.
              attacks.UdpFlood(gw, sources=1, seed=3, name="udp-one-source", pause=0.001)]
    tls_view = Gateway(tgw, workdir, tls=tls)
    tls_view.port = gw.tls_port
    floods.append(attacks.KeepaliveFlood(tls_view, ATTACKERS["keepalives_tls"], tls=True))
    for f in floods:
        f.start()
    held = attacks.half_sent_http(gw.metrics_port, 10)
    held += attacks.stalled_client_hellos(
        tls_view, [ATTACKERS["hello"].format(i) for i in range(1, 11)], 32)
    sessions, _ = attacks.sessions(gw, ATTACKERS["sessions"],
                                   [f"35630705{i:07d}" for i in range(200)])
    held += sessions
    stop_commands = threading.Event()
    command_outcome = {}
    commander = threading.Thread(target=commands_beside, daemon=True,
                                 args=(gw, stop_commands, f"unix://{gw.data_dir}/redis.sock", tgw,
                                       str(FLEET_IMEI_BASE), command_outcome))
    commander.start()

    healthz_misses = 0
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{gw.metrics_port}/healthz",
                                        timeout=1) as r:
                healthz_misses += r.status != 200
        except OSError:
            healthz_misses += 1
        time.sleep(2)

    stop_commands.set()
    for f in floods:
        f.stop()
    for s in held:
        s.close()
    samples = sampler.finish()
    fleet.wait(120)
    report = json.load(open(fleet_json))
    refused = {name: gw.refused(name) for name in (
        "before_imei", "bad_frames", "framing_error", "address_rate", "address_handshakes",
        "new_device", "udp_rate", "udp_backlog", "udp_bad_datagram", "tls_stalled",
        "tls_preempted", "command_text")}

    # 0 records lost: every ACKed packet (1 record each) is in its device's records_total.
    acked = {}
    with open(acked_log) as f:
        for line in f:
            imei, _, _, records = line.split()
            acked[imei] = acked.get(imei, 0) + int(records)
    r = gw.redis()
    lost = 0
    for imei, count in acked.items():
        stored = int(r.hget(f"device:{imei}", "records_total") or 0)
        lost += max(0, count - stored)
    rss = flatness(samples, 1, 60)
    mem = flatness(samples, 2, 60)
    stop(gw.proc)
    result = {
        "devices": args.devices, "seconds": args.seconds,
        "fleet_acked": report["packets_acked"], "fleet_ack_p99_ms": report["ack_p99_ms"],
        "fleet_timeouts": report["timeouts"], "records_lost": lost,
        "rss_mib_first_last_max": rss, "redis_mib_first_last_max": mem,
        "log_bytes": gw.log_bytes(), "healthz_misses": healthz_misses,
        "attack_attempts": {f.name: f.attempts for f in floods},
        "refused": refused, "commands": command_outcome,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    violations = []
    if lost:
        violations.append(f"{lost} ACKed record(s) lost")
    if report["ack_p99_ms"] >= 50:
        violations.append(f"fleet ACK p99 {report['ack_p99_ms']} ms")
    if healthz_misses:
        violations.append(f"/healthz missed {healthz_misses} time(s)")
    for name, column in (("RSS", rss), ("Redis memory", mem)):
        if column is None:
            violations.append(f"{name}: too few samples")
        elif column[1] > column[0] * 1.10 + 8:
            violations.append(f"{name} grew: {column[0]:.1f} -> {column[1]:.1f} MiB")
    for name, count in refused.items():
        if name in ("tls_preempted", "udp_backlog", "address_handshakes") or count:
            continue
        violations.append(f"no refusal counted for {name}")
    for v in violations:
        print(f"hostile: VIOLATION: {v}", file=sys.stderr)
    print("hostile: " + ("no violations" if not violations else f"{len(violations)} violation(s)"))
    return 1 if violations else 0

