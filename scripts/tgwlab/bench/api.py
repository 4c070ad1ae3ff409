"""scripts/bench-api: the application API under load, each figure beside a baseline of
the same run: a devices page at 100,000 devices (beside the same reads made straight
on Redis), the command round trip through POST ?wait (beside command_bench, the
publisher `tgw command send` uses), 100 event clients following the telemetry (beside
the same gateway with none), and the gateway's ACK p99 and CPU per packet with the API
idle and loaded, window after window (as bench-compare pairs its sides)."""

import http.client
import json
import os
import subprocess
import tempfile
import threading
import time

from .. import metrics, redis_client
from ..cli import fail
from ..processes import Group, ROOT, raise_file_limit, wait_until
from . import common
from .common import log
from .window import Gone, progress, snapshot, window

PROG = "scripts/bench-api"
IMEI_BASE = 350000000000000


def pct(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ms(seconds_list):
    return {"count": len(seconds_list), "p50_ms": round(pct(seconds_list, 0.5) * 1000, 2),
            "p99_ms": round(pct(seconds_list, 0.99) * 1000, 2),
            "max_ms": round(max(seconds_list) * 1000, 2) if seconds_list else float("nan")}


class Api:
    """A keep-alive HTTP/1.1 client of one tgw api."""

    def __init__(self, port, token):
        self.port, self.token = port, token
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method, target, body=None):
        h = {"Authorization": f"Bearer {self.token}"}
        if body is not None:
            h["Content-Type"] = "application/json"
        self.c.request(method, target, body=body, headers=h)
        r = self.c.getresponse()
        return r.status, r.read()


def on_cores(argv, cores):
    """argv run on the given CPUs only (taskset's list, "0"), or anywhere when None."""
    return ["taskset", "-c", cores, *argv] if cores else list(argv)


def start_redis(procs, port, tmp, cores=None):
    procs.start(on_cores(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save",
                          "", "--appendonly", "no", "--dir", tmp], cores), log="redis.log")
    wait_until(lambda: redis_client.ping(port), 5)


def start_api(procs, tgw, api_port, redis_port, tokens, extra=()):
    proc = procs.start([tgw, "api", "--listen", f"127.0.0.1:{api_port}", "--redis",
                        f"redis://127.0.0.1:{redis_port}/0", "--tokens", tokens,
                        "--rate", "1000000", "--burst", "1000000", "--log-level", "warn",
                        *extra], log="api.log")

    def up():
        try:
            c = http.client.HTTPConnection("127.0.0.1", api_port, timeout=1)
            c.request("GET", "/healthz")
            return c.getresponse().status == 200
        except OSError:
            return False
    wait_until(up, 20)
    return proc


def token(tgw, tokens):
    return subprocess.run([tgw, "api", "token", "add", "bench", "--scopes",
                           "read,command,events", "--tokens", tokens], capture_output=True,
                          text=True, check=True).stdout.strip()


def devices_phase(a, tgw, out, tmp):
    """100,000 devices in Redis (half online, as a gateway writes them), paged through
    with limit=100, beside the same page's reads straight on Redis."""
    procs = Group(out)
    redis_port, api_port = common.fresh_ports(2)
    with common.stopping(procs, None, grace=1):
        start_redis(procs, redis_port, tmp)
        r = redis_client.client(redis_port)
        now = int(time.time() * 1000)
        log(f"writing {a.devices:,} devices (index, projection, registry)")
        r.set("instance:heartbeat:bench", "1")
        p = r.pipeline(transaction=False)
        for i in range(a.devices):
            imei = str(IMEI_BASE + i)
            online = i % 2 == 0
            p.zadd("telemetry:devices", {imei: 0})
            p.hset(f"device:{imei}", mapping={
                "online": "1" if online else "0", "last_seen_ms": str(now - i),
                "instance": "bench", "connected_ms": str(now - 3600_000),
                "records_at_connect": "0", "last_ts": str(now - i), "lon": "252616688",
                "lat": "546992512", "speed": "41", "satellites": "12", "records_total": "100"})
            if online:
                p.hset("connections:registry", imei, "bench")
            if i % 5000 == 4999:
                p.execute()
        p.execute()
        tokens = os.path.join(tmp, "tokens")
        secret = token(tgw, tokens)
        start_api(procs, tgw, api_port, redis_port, tokens)
        api = Api(api_port, secret)

        def traverse(query):
            times, cursor, seen = [], None, 0
            while True:
                target = f"/v1/devices?limit=100{query}" + (f"&cursor={cursor}" if cursor else "")
                t = time.perf_counter()
                status, body = api.call("GET", target)
                times.append(time.perf_counter() - t)
                if status != 200:
                    fail(PROG, f"GET {target}: {status} {body[:200]}", 1)
                j = json.loads(body)
                seen += len(j["devices"])
                cursor = j["next_cursor"]
                if cursor is None:
                    return times, seen

        def direct_pages():
            # The same reads a page makes, straight on Redis with redis-py: ZRANGE BYLEX,
            # then HGET registry and HGETALL device for each IMEI, pipelined.
            times, after = [], "-"
            while True:
                t = time.perf_counter()
                imeis = r.zrange("telemetry:devices", after, "+", bylex=True, offset=0, num=100)
                if not imeis:
                    return times
                p = r.pipeline(transaction=False)
                for imei in imeis:
                    p.hget("connections:registry", imei)
                    p.hgetall(f"device:{imei.decode() if isinstance(imei, bytes) else imei}")
                p.execute()
                r.exists("instance:heartbeat:bench")
                times.append(time.perf_counter() - t)
                last = imeis[-1].decode() if isinstance(imeis[-1], bytes) else imeis[-1]
                after = "(" + last

        log("paging through every device: the API (all, then online=true), then Redis directly")
        api_all, seen_all = traverse("")
        api_online, seen_online = traverse("&online=true")
        base = direct_pages()
        t = time.perf_counter()
        subprocess.run([tgw, "devices", "--redis", f"redis://127.0.0.1:{redis_port}/0", "--json"],
                       stdout=subprocess.DEVNULL, check=True)
        cli_s = time.perf_counter() - t
        return {"devices": a.devices, "api_all_pages": {**ms(api_all), "devices_seen": seen_all},
                "api_online_pages": {**ms(api_online), "devices_seen": seen_online},
                "baseline_redis_pages": ms(base), "tgw_devices_json_s": round(cli_s, 2)}


def commands_phase(a, tgw, bench, poster, out, tmp):
    """POST ?wait=10 at RATE commands/s to simulated devices that answer at once,
    beside command_bench (the publisher of `tgw command send`) at the same rate."""
    procs = Group(out)
    redis_port, gw_port, api_port = common.fresh_ports(3)
    with common.stopping(procs, None, grace=1):
        start_redis(procs, redis_port, tmp)
        procs.start([tgw, "serve", "--port", str(gw_port), "--bind", "127.0.0.1", "--redis",
                     f"redis://127.0.0.1:{redis_port}", "--metrics-addr", "", "--instance-id",
                     "bench-api", "--log-level", "warn"], log="gateway.log")
        with open(os.path.join(out, "simulate-commands.out"), "wb") as sout:
            procs.start([tgw, "simulate", "--count", str(a.command_devices), "--target",
                         f"127.0.0.1:{gw_port}", "--send-interval", "30s", "--ramp-up", "5s",
                         "--source-spread", str(common.source_spread(a.command_devices, 4)),
                         "--imei-base", str(IMEI_BASE), "--reply-text", "OK {command}"],
                        stdout=sout, stderr=subprocess.STDOUT)
        rc = redis_client.client(redis_port)
        wait_until(lambda: (redis_client.attempt(rc.hlen, "connections:registry") or 0)
                   >= a.command_devices, 60, step=0.5)
        tokens = os.path.join(tmp, "tokens-commands")
        secret = token(tgw, tokens)
        start_api(procs, tgw, api_port, redis_port, tokens, ("--workers", "8"))
        log(f"command_bench: {a.rate}/s for {a.seconds} s (baseline)")
        base = json.loads(subprocess.run(
            [bench, str(redis_port), str(IMEI_BASE), str(a.command_devices), str(a.rate),
             str(a.seconds), "8"], capture_output=True, text=True, check=True).stdout)
        log(f"POST ?wait=10: {a.rate}/s for {a.seconds} s (api_post_bench)")
        # A C++ client shaped as command_bench is (8 blocking threads, latency from the
        # moment a request was due): a Python client's own CPU and GIL would be counted
        # as the API's.
        posts = json.loads(subprocess.run(
            [poster, str(api_port), secret, str(IMEI_BASE), str(a.command_devices),
             str(a.rate), str(a.seconds), "8"], capture_output=True, text=True,
            check=True).stdout)
        return {"rate_per_s": a.rate, "seconds": a.seconds, "devices": a.command_devices,
                "api_post_wait": posts["api"],
                "api_server_side": server_side(scrape_api(api_port, secret)),
                "baseline_command_bench": base}


def scrape_api(api_port, secret):
    """The API's /metrics text (it asks for a token like every route); "" when it does
    not answer 200."""
    status, body = Api(api_port, secret).call("GET", "/metrics")
    return body.decode() if status == 200 else ""


def server_side(text, route="/v1/devices/{imei}/commands"):
    """The POSTs' latency as the API measured it (from the request read whole to the
    answer handed to the socket), from its histogram: the share within 10 ms and the
    bucket that holds the 99th percentile; the client's own time apart. (Read line by
    line: the route's braces defeat metrics.parse's label pattern.)"""
    name = "teltonika_http_request_duration_seconds_bucket{"
    buckets = []
    for line in text.splitlines():
        if line.startswith(name) and f'route="{route}"' in line and 'method="POST"' in line:
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets.append((float(le), float(line.rsplit(" ", 1)[1])))
    buckets.sort()
    if not buckets or buckets[-1][1] == 0:
        return {}
    total = buckets[-1][1]
    within_10 = next((v for le, v in buckets if le >= 0.01), total)
    p99 = next(le for le, v in buckets if v >= 0.99 * total)
    return {"requests": int(total), "within_10_ms": round(within_10 / total, 4),
            "p99_at_most_ms": p99 * 1000}


def load_api(api_port, secret, stop, stats):
    """What the API does while the gateway is measured: pages of devices, a command a
    second per device-page, and a few event clients reading."""
    api = Api(api_port, secret)
    while not stop.is_set():
        status, body = api.call("GET", "/v1/devices?limit=100")
        stats["pages"] = stats.get("pages", 0) + 1
        cursor = json.loads(body).get("next_cursor") if status == 200 else None
        if cursor:
            api.call("GET", f"/v1/devices?limit=100&cursor={cursor}")


def events_phase(a, tgw, sse, out, tmp):
    """RECORDS records/s into a gateway, with no event client, then with SSE_CLIENTS
    following every record, then (the gateway's side) with the API idle and loaded,
    window after window."""
    procs = Group(out)
    redis_port, gw_port, api_port, metrics_port = common.fresh_ports(4)
    raise_file_limit()
    # --split-cores: Redis, the gateway and the fleet on CPU 0; the API, its clients and
    # this script on CPU 1. The API's CPU then takes nothing from the gateway's core, and
    # what its load still costs the gateway goes through Redis, which they share.
    gw_cores = "0" if a.split_cores else None
    affinity = os.sched_getaffinity(0)
    if a.split_cores:
        os.sched_setaffinity(0, {1})
    with common.stopping(procs, None, grace=1):
        start_redis(procs, redis_port, tmp, gw_cores)
        gateway = procs.start(on_cores([tgw, "serve", "--port", str(gw_port), "--bind",
                                        "127.0.0.1", "--redis", f"redis://127.0.0.1:{redis_port}",
                                        "--metrics-addr", f"127.0.0.1:{metrics_port}",
                                        "--instance-id", "bench-events", "--log-level", "warn"],
                                       gw_cores), log="gateway.log")
        wait_until(lambda: redis_client.ping(redis_port), 5)
        devices = a.records // 10
        progress_log = os.path.join(out, "simulate-progress.jsonl")
        # The progress log's times are seconds from the simulator's start.
        sim_started = time.time()
        with open(os.path.join(out, "simulate-events.out"), "wb") as sout:
            procs.start(on_cores([tgw, "simulate", "--count", str(devices), "--target",
                                  f"127.0.0.1:{gw_port}", "--records-per-packet", "10",
                                  "--send-interval", "1s", "--ramp-up", "5s", "--imei-base",
                                  str(IMEI_BASE), "--source-spread",
                                  str(common.source_spread(devices, 4)), "--progress-log",
                                  progress_log], gw_cores),
                        stdout=sout, stderr=subprocess.STDOUT)
        tokens = os.path.join(tmp, "tokens-events")
        secret = token(tgw, tokens)
        api = start_api(procs, tgw, api_port, redis_port, tokens,
                        ("--max-event-clients", str(a.sse_clients + 10)))

        def sessions():
            m = metrics.scrape(metrics_port, timeout=5)
            return int(metrics.metric(m, "teltonika_sessions") or 0) if m else 0
        # The whole fleet connected before anything is measured: a window of a fleet
        # still ramping up (or refused by a budget) measures something else.
        if not wait_until(lambda: sessions() >= devices, 90, step=1):
            fail(PROG, f"{sessions()} of {devices} devices connected after 90 s", 1)
        time.sleep(5)

        def measured(what, seconds, during=None):
            s0 = snapshot(metrics_port, redis_port, gateway.pid, [("api", api.pid)])
            t0 = time.time()
            result = during() if during else time.sleep(seconds)
            s1 = snapshot(metrics_port, redis_port, gateway.pid, [("api", api.pid)])
            w = window(s0, s1)
            w["ack"] = progress(progress_log, t0 - sim_started, time.time() - sim_started)
            packets = w["gateway_acks_per_s"] * w["seconds"]
            w["gateway_cpu_us_per_packet"] = round(
                (w["cpu_percent"]["gateway"] or 0) / 100 * w["seconds"] * 1e6 / packets, 1) \
                if packets else None
            log(f"{what}: {w['gateway_records_per_s']:,.0f} records/s stored, ACK p99 "
                f"{w['ack'].get('ack_p99_ms')} ms, gateway {w['gateway_cpu_us_per_packet']} us "
                f"CPU/packet, api {w['cpu_percent'].get('api')} % CPU")
            return w, result

        log(f"{a.records:,} records/s from {devices:,} devices: no event client (baseline)")
        none, _ = measured("no event client", a.seconds)
        log(f"{a.sse_clients} event clients following every record for {a.seconds} s")
        with_clients, clients = measured(
            "event clients", a.seconds,
            lambda: json.loads(subprocess.run(
                [sse, str(api_port), secret, str(a.sse_clients), str(a.seconds)],
                capture_output=True, text=True, check=True).stdout))
        pairs = []
        for i in range(a.pairs):
            idle, _ = measured(f"pair {i + 1}: API idle", a.pair_seconds)
            stop, stats = threading.Event(), {}
            loader = threading.Thread(target=load_api, args=(api_port, secret, stop, stats))

            def loaded_window():
                loader.start()
                sse_run = subprocess.run([sse, str(api_port), secret, "10", str(a.pair_seconds)],
                                         capture_output=True, text=True, check=True)
                stop.set()
                loader.join()
                return json.loads(sse_run.stdout)
            loaded, sse_small = measured(f"pair {i + 1}: API loaded", a.pair_seconds,
                                         loaded_window)
            pairs.append({"idle": idle, "loaded": loaded, "loaded_pages": stats.get("pages", 0),
                          "loaded_event_clients": sse_small})
        os.sched_setaffinity(0, affinity)
        return {"records_per_s_asked": a.records, "devices": devices,
                "split_cores": a.split_cores, "no_event_client": none,
                "with_event_clients": with_clients, "event_clients": clients,
                "gateway_pairs": pairs}


def summary(r, date, ncpu, cpu):
    out = [f"Application API, {date}: {ncpu} cores ({cpu}), build {r['build']}"]
    if "devices" in r:
        d = r["devices"]
        out.append(f"GET /v1/devices?limit=100 over {d['devices']:,} devices: p50 "
                   f"{d['api_all_pages']['p50_ms']} ms, p99 {d['api_all_pages']['p99_ms']} ms, "
                   f"{d['api_all_pages']['count']} pages, {d['api_all_pages']['devices_seen']:,} "
                   f"devices; online=true p99 {d['api_online_pages']['p99_ms']} ms")
        out.append(f"  baseline, the same reads straight on Redis (redis-py): p50 "
                   f"{d['baseline_redis_pages']['p50_ms']} ms, p99 "
                   f"{d['baseline_redis_pages']['p99_ms']} ms; tgw devices --json (all at once): "
                   f"{d['tgw_devices_json_s']} s")
    if "commands" in r:
        c = r["commands"]
        g, b = c["api_post_wait"], c["baseline_command_bench"]["gateway"]
        out.append(f"POST ?wait=10 at {c['rate_per_s']}/s for {c['seconds']} s: p50 {g['p50_ms']} "
                   f"ms, p99 {g['p99_ms']} ms, max {g['max_ms']} ms ({json.dumps(g['outcomes'])})")
        out.append(f"  baseline command_bench (tgw command send's publisher), same rate: p50 "
                   f"{b['p50_ms']:.2f} ms, p99 {b['p99_ms']:.2f} ms")
        srv = c.get("api_server_side", {})
        if srv:
            out.append(f"  as the API measured them (client apart): {srv['within_10_ms']:.2%} "
                       f"within 10 ms, p99 at most {srv['p99_at_most_ms']:g} ms "
                       f"({srv['requests']} requests)")
        out.append(f"  bar (p99 < 10 ms, docs/PERFORMANCE.md's target): "
                   f"{'PASS' if g['p99_ms'] < 10 else 'FAIL'} at the client")
    if "events" in r:
        e = r["events"]
        n, w, cl = e["no_event_client"], e["with_event_clients"], e["event_clients"]
        out.append(f"{e['records_per_s_asked']:,} records/s asked: stored "
                   f"{n['gateway_records_per_s']:,.0f}/s with no event client, "
                   f"{w['gateway_records_per_s']:,.0f}/s with {cl['clients']}")
        out.append(f"  {cl['clients']} clients: {cl['events']:,} events, per client "
                   f"{cl['events_per_client_min']:,} to {cl['events_per_client_max']:,}; delay from "
                   f"storing p50 {cl['delay_ms']['p50']} ms, p99 {cl['delay_ms']['p99']} ms; cut "
                   f"{cl['cut']}; api {w['cpu_percent'].get('api')} % CPU")
        if e.get("split_cores"):
            out.append("  (--split-cores: Redis, the gateway and the fleet on CPU 0; the API and "
                       "its clients on CPU 1)")
        for i, p in enumerate(e["gateway_pairs"]):
            out.append(f"  pair {i + 1}: ACK p99 idle {p['idle']['ack'].get('ack_p99_ms')} ms / "
                       f"loaded {p['loaded']['ack'].get('ack_p99_ms')} ms; gateway CPU/packet idle "
                       f"{p['idle']['gateway_cpu_us_per_packet']} us / loaded "
                       f"{p['loaded']['gateway_cpu_us_per_packet']} us")
    return out


def main(a):
    common.need(PROG, ["redis-server", "cmake"] + (["taskset"] if a.split_cores else []))
    os.chdir(ROOT)
    build = a.build_dir
    if a.build:
        log(f"building tgw, command_bench, api_post_bench and sse_clients_bench in {build}")
        subprocess.run(["cmake", "--build", build, "--target", "tgw", "command_bench",
                        "api_post_bench", "sse_clients_bench"], check=True,
                       stdout=subprocess.DEVNULL)
    tgw = os.path.join(ROOT, build, "tgw")
    bench = os.path.join(ROOT, build, "tests", "bench", "command_bench")
    poster = os.path.join(ROOT, build, "tests", "bench", "api_post_bench")
    sse = os.path.join(ROOT, build, "tests", "bench", "sse_clients_bench")
    common.executables(PROG, [tgw] + ([bench, poster] if "commands" in a.phases else [])
                       + ([sse] if "events" in a.phases else []))
    out = os.path.join(ROOT, build, "bench-api")
    os.makedirs(out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tgw-bench-api-")
    result = {"build": build}
    try:
        if "devices" in a.phases:
            result["devices"] = devices_phase(a, tgw, out, tmp)
        if "commands" in a.phases:
            result["commands"] = commands_phase(a, tgw, bench, poster, out, tmp)
        if "events" in a.phases:
            result["events"] = events_phase(a, tgw, sse, out, tmp)
    except Gone as e:
        fail(PROG, str(e), 1)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    print("\n".join(summary(result, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                            common.nproc(), common.cpu_model())), flush=True)
    return 0
