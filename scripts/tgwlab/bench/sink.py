"""scripts/bench-sink: `tgw sink postgres` against a plain COPY of the same rows into
the same table, and the sink's lag while a gateway takes a paced fleet."""

import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from .. import metrics, redis_client
from ..cli import fail
from ..processes import Group, wait_until
from . import common
from .common import log

PROG = "scripts/bench-sink"
PGBIN = "/usr/lib/postgresql/15/bin"


def resp(args):
    """One command in RESP, for redis-cli --pipe."""
    out = [f"*{len(args)}\r\n"]
    for a in args:
        b = a.encode()
        out.append(f"${len(b)}\r\n{a}\r\n")
    return "".join(out)


def yesterday_ms():
    """Yesterday's midnight (UTC) in ms: record times from it are within the window of
    record times the sink stores (docs/TELEMETRY.md)."""
    day = 86400000
    return (int(time.time() * 1000) // day - 1) * day


def entries(n, start):
    """n telemetry entries in the format `tgw serve` writes (format 4, eight FMB IO
    elements each) as XADD commands in RESP, their record times from `start` (ms) on;
    the same n entries on every call."""
    rnd = random.Random(7)
    out = []
    for i in range(n):
        imei = str(356307042440000 + i % 2000)
        ts = start + i * 100
        io = ('[[239,"%d",1],[240,"%d",1],[21,"%d",1],[200,"0",1],[69,"1",1],[66,"%d",2],'
              '[67,"%d",2],[16,"%d",4]]'
              % (i % 2, (i + 1) % 2, rnd.randint(1, 5), rnd.randint(11000, 14000),
                 rnd.randint(3900, 4200), 1000 + i))
        out.append(resp(["XADD", "telemetry:records", "*", "v", "4", "imei", imei, "codec", "8E",
                         "ts", str(ts), "pri", "0", "lon", str(250000000 + rnd.randint(0, 9999999)),
                         "lat", str(540000000 + rnd.randint(0, 9999999)),
                         "alt", str(rnd.randint(80, 200)), "ang", str(rnd.randint(0, 359)),
                         "sat", str(rnd.randint(4, 16)), "spd", str(rnd.randint(0, 120)),
                         "evt", "0", "io", io, "gen", ""]))
    return "".join(out).encode()


def timed(argv):
    """(wall seconds, CPU seconds of it and its children, exit code) of one command,
    to the millisecond."""
    t0, r0 = time.monotonic(), os.times()
    rc = subprocess.call(argv, stdout=subprocess.DEVNULL)
    t1, r1 = time.monotonic(), os.times()
    cpu = (r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)
    return float(f"{t1 - t0:.3f}"), float(f"{cpu:.3f}"), rc


def lag_window(rows):
    """(max lag, records/s the sink stored) over the measured window: after the 5 s
    ramp-up, the seconds in which both metrics answered. rows: (t, lag, stored)."""
    window = [r for r in rows if r[0] >= 5 and r[1] is not None and r[2] is not None]
    rate = (window[-1][2] - window[0][2]) / (window[-1][0] - window[0][0])
    return max(r[1] for r in window), rate


class Sink:
    def __init__(self, a, tgw, out, tmp):
        self.a, self.tgw, self.out, self.tmp = a, tgw, out, tmp
        self.procs = Group(out)
        # PostgreSQL refuses to run as root: then it runs as the postgres user.
        self.as_pg = []
        if os.getuid() == 0:
            self.as_pg = ["runuser", "-u", "postgres", "--"]
            shutil.chown(tmp, "postgres", "postgres")
        self.redis_port, self.pg_port = common.fresh_ports(2)
        self.dsn = f"host=127.0.0.1 port={self.pg_port} user=tgw dbname=tgw"
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}"

    def psql(self, sql, db="tgw", quiet_rows=True):
        argv = ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "tgw", "-d", db]
        if quiet_rows:
            argv[2:2] = ["-A", "-t", "-v", "ON_ERROR_STOP=1"]
        return subprocess.run(argv + ["-c", sql], check=True, stdout=subprocess.PIPE,
                              text=True).stdout.strip()

    def start(self):
        a = self.a
        self.procs.start(["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--dir", self.tmp], log="redis.log")
        with open(os.path.join(self.out, "initdb.log"), "wb") as f:
            subprocess.run(self.as_pg + [f"{PGBIN}/initdb", "-D", f"{self.tmp}/pg", "-U", "tgw",
                                         "--auth=trust", "-E", "UTF8", "--locale=C"],
                           stdout=f, stderr=subprocess.STDOUT, check=True)
        self.procs.start(self.as_pg + [f"{PGBIN}/postgres", "-D", f"{self.tmp}/pg", "-p",
                                       str(self.pg_port), "-k", self.tmp, "-c",
                                       "listen_addresses=127.0.0.1"], log="postgres.log")
        wait_until(lambda: subprocess.run([f"{PGBIN}/pg_isready", "-q", "-h", "127.0.0.1", "-p",
                                           str(self.pg_port)]).returncode == 0, 10, step=0.1)
        wait_until(lambda: redis_client.ping(self.redis_port), 5)
        self.psql("CREATE DATABASE tgw", db="postgres", quiet_rows=False)
        self.r = redis_client.client(self.redis_port)
        subprocess.run([self.tgw, "sink", "postgres", "--dsn", self.dsn, "--redis", self.redis_url,
                        "--init"], stdout=subprocess.DEVNULL, check=True)

        log(f"loading {a.records} entries into telemetry:records")
        subprocess.run(["redis-cli", "-p", str(self.redis_port), "--pipe"],
                       input=entries(a.records, yesterday_ms()), stdout=subprocess.DEVNULL, check=True)
        held = self.r.xlen("telemetry:records")
        if held != a.records:
            fail(PROG, f"the stream holds {held} entries, not {a.records}", 1)

    def rounds(self):
        """Each round's sink records/s over plain COPY records/s, in %."""
        a, n = self.a, self.a.records
        results = []
        copy_file = f"{self.tmp}/rows.copy"
        for round in range(1, a.rounds + 1):
            self.psql("TRUNCATE positions")
            redis_client.attempt(self.r.xgroup_destroy, "telemetry:records", "positions")
            wall, cpu, rc = timed([self.tgw, "sink", "postgres", "--dsn", self.dsn, "--redis",
                                   self.redis_url, "--batch", str(a.batch), "--until-drained",
                                   "--from", "start", "--progress-s", "3600", "--log-level", "warn"])
            if rc != 0:
                fail(PROG, f"the sink failed (exit {rc})", 1)
            stored = int(self.psql("SELECT count(*) FROM positions"))
            if stored != n:
                fail(PROG, f"positions holds {stored} rows, not {n}", 1)
            self.psql(f"COPY (SELECT * FROM positions) TO '{copy_file}'")
            self.psql("TRUNCATE positions")
            copy_wall, _, rc = timed(["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.pg_port),
                                      "-U", "tgw", "-d", "tgw", "-v", "ON_ERROR_STOP=1", "-c",
                                      f"COPY positions FROM '{copy_file}'"])
            if rc != 0:
                fail(PROG, "COPY failed", 1)
            pct = f"{(n / wall) / (n / copy_wall) * 100:.1f}"
            log(f"round {round}: sink {n / wall:.0f} records/s (its CPU {cpu / n * 1e6:.1f} us/record), "
                f"plain COPY {n / copy_wall:.0f} records/s: {pct} %")
            results.append(pct)
        return results

    def lag(self):
        """(the line, PASS or FAIL) of the lag run."""
        a = self.a
        gw_port, mport, smport = common.fresh_ports(3, taken=(self.redis_port, self.pg_port))
        redis_client.attempt(self.r.xgroup_destroy, "telemetry:records", "positions")
        self.psql("TRUNCATE positions")
        self.procs.start([self.tgw, "serve", "--redis", self.redis_url, "--port", str(gw_port),
                          "--bind", "127.0.0.1", "--metrics-addr", f"127.0.0.1:{mport}",
                          "--telemetry-retention-interval-ms", "1000", "--data-dir",
                          f"{self.tmp}/gw"], log="serve.log")
        self.procs.start([self.tgw, "sink", "postgres", "--dsn", self.dsn, "--redis", self.redis_url,
                          "--batch", str(a.batch), "--from", "now", "--metrics-addr",
                          f"127.0.0.1:{smport}", "--progress-s", "5"], log="sink.log")
        wait_until(lambda: metrics.readyz(mport, timeout=1) == 200, 20, step=0.2)
        period_ms = max(1, round(a.devices * 10 / a.rate * 1000))
        log(f"lag run: {a.devices} devices, 10 records a packet every {period_ms} ms ({a.rate} "
            f"records/s offered) for {a.seconds} s")
        with open(os.path.join(self.out, "simulate.txt"), "wb") as sout, \
                open(os.path.join(self.out, "simulate.log"), "wb") as serr:
            sim = self.procs.start([self.tgw, "simulate", "--target", f"127.0.0.1:{gw_port}", "-n",
                                    str(a.devices), "--records-per-packet", "10", "--send-period",
                                    f"{period_ms}ms", "--ramp-up", "5s", "--duration",
                                    f"{a.seconds + 5}s", "--quiet"], stdout=sout, stderr=serr)
        # Once a second: the age of the oldest entry the sink has not acknowledged (the
        # gateway computes it every second here) and the records the sink stored.
        rows = []
        t0 = time.monotonic()
        with open(os.path.join(self.out, "lag.txt"), "w") as f:
            while time.monotonic() - t0 < a.seconds + 5:
                lag = metrics.labelled(metrics.scrape(mport), "teltonika_telemetry_consumer_lag_seconds",
                                       'group="positions"')
                stored = metrics.labelled(metrics.scrape(smport), "teltonika_sink_records_total", "")
                t = round(time.monotonic() - t0, 1)
                rows.append((t, lag, stored))
                f.write(f"{t:.1f} {lag} {stored}\n")
                f.flush()
                time.sleep(1)
        sim.wait()
        lag_max, stored_rate = lag_window(rows)
        line = (f"lag under {a.rate} records/s offered: max {lag_max:.2f} s (stored "
                f"{stored_rate:.0f} records/s by the sink over the window)")
        return line, "PASS" if lag_max < 2 else "FAIL"


def main(a):
    """Runs scripts/bench-sink with its parsed arguments; the exit code."""
    common.need(PROG, ["redis-server", "redis-cli", "psql", f"{PGBIN}/initdb", f"{PGBIN}/postgres"])
    tgw, out = common.prepare(PROG, a.build, "bench-sink", (".log", ".txt"))
    tmp = tempfile.mkdtemp(prefix="tgw-bench-sink-")
    bench = Sink(a, tgw, out, tmp)
    with common.stopping(bench.procs, tmp):
        bench.start()
        results = bench.rounds()
        median = sorted(results, key=float)[(len(results) + 1) // 2 - 1]
        lag_line, lag_verdict = "lag run skipped", ""
        if a.lag_run:
            lag_line, lag_verdict = bench.lag()
        verdict = "PASS" if float(median) >= 70 else "FAIL"
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip() or "?"
        summary = [
            f"bench-sink {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}, {common.nproc()} cores, "
            f"commit {commit}",
            f"  {a.records} records, batches of {a.batch}: sink / plain COPY per round: "
            f"{' '.join(results)} %",
            f"  median {median} % of plain COPY (bar >= 70 %, DESIGN.md §9): {verdict}",
            f"  {lag_line} " + (f"(target < 2 s): {lag_verdict}" if lag_verdict else "")]
        print("\n".join(summary), flush=True)
        with open(os.path.join(out, "summary.txt"), "w") as f:
            f.write("\n".join(summary) + "\n")
    sys.stdout.flush()
    return 0
