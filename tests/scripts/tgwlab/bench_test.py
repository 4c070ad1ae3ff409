"""The bench drivers' arithmetic (tgwlab.bench) on synthetic inputs."""

import contextlib
import io
import json
import math
import os
import tempfile
import unittest

from tgwlab.bench import commands, common, sink, window


class WindowTest(unittest.TestCase):
    def test_percentiles_of_a_histogram(self):
        hist = {1000: 50, 2000: 40, 9000: 9, 50000: 1}
        self.assertEqual(window.percentile_ms(hist, 0.50), 1.0)
        self.assertEqual(window.percentile_ms(hist, 0.90), 2.0)
        self.assertEqual(window.percentile_ms(hist, 0.99), 9.0)
        self.assertEqual(window.percentile_ms(hist, 0.999), 50.0)
        self.assertTrue(math.isnan(window.percentile_ms({}, 0.5)))

    def test_the_window_of_progress_lines_sums_their_histograms(self):
        rows = [{"t": t, "records_per_s": 100 * t, "ack_latency_us": {"1000": 10, "4000": t},
                 "ack_max_us": 4000 + t, "ack_p99_ms": float(t), "connected": 50 - t, "errors": t}
                for t in range(1, 7)]
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write("not json\n")
            for r in rows:
                f.write(json.dumps(r) + "\n")
        self.addCleanup(os.unlink, f.name)
        w = window.progress(f.name, 2.0, 5.0)  # seconds 3, 4 and 5
        self.assertEqual(w["seconds"], 3)
        self.assertEqual(w["records_per_s"], 400.0)
        self.assertEqual(w["acks"], 30 + 12)
        self.assertEqual(w["ack_p50_ms"], 1.0)
        self.assertEqual(w["ack_p99_ms"], 4.0)
        self.assertEqual(w["ack_max_ms"], 4.005)
        self.assertEqual(w["ack_p99_ms_worst_second"], 5.0)
        self.assertEqual(w["connected_min"], 45)
        self.assertEqual(w["errors_in_window"], 2)
        self.assertEqual(window.progress(f.name, 10.0, 20.0), {})

    def test_a_window_between_two_snapshots(self):
        a = {"t": 10.0, "metrics": {"teltonika_records_persisted_total": 1000.0,
                                    "teltonika_acks_total": 500.0},
             "xlen": 1000, "gateway_ticks": 100, "gateway_threads": {"1": ["tgw.io", 50]},
             "other_ticks": {"redis": 10, "simulator": None}, "machine": (1000, 800),
             "rss_kib": 1, "fds": 1}
        b = dict(a, t=12.0, metrics={"teltonika_records_persisted_total": 3000.0,
                                     "teltonika_acks_total": 1500.0},
                 xlen=3000, gateway_ticks=100 + 2 * window.TICK,
                 gateway_threads={"1": ["tgw.io", 50 + window.TICK]},
                 other_ticks={"redis": 10 + window.TICK, "simulator": None},
                 machine=(1400, 1000), rss_kib=2048, fds=20)
        w = window.window(a, b)
        self.assertEqual(w["gateway_records_per_s"], 1000.0)
        self.assertEqual(w["gateway_acks_per_s"], 500.0)
        self.assertEqual(w["xlen_records_per_s"], 1000.0)
        self.assertEqual(w["cpu_percent"]["gateway"], 100.0)
        self.assertEqual(w["cpu_percent"]["redis"], 50.0)
        self.assertIsNone(w["cpu_percent"]["simulator"])
        self.assertEqual(w["gateway_threads_cpu_percent"], [["tgw.io", 50.0]])
        self.assertEqual((w["gateway_rss_kib"], w["gateway_fds"]), (2048, 20))


class CommonTest(unittest.TestCase):
    def test_the_rate_of_redis_benchmark(self):
        out = "XADD: rps=0.0 (overall: nan) avg_msec=nan\rXADD: 612345.00 requests per second, p50=4 msec\n"
        line = common.benchmark_rate(out)
        self.assertEqual(line, "XADD: 612345.00 requests per second, p50=4 msec")
        self.assertEqual(common.requests_per_second(line), 612345.0)
        self.assertIsNone(common.benchmark_rate("ERR unknown command"))
        self.assertTrue(math.isnan(common.requests_per_second(None)))

    def test_a_persist_call_names_its_keys_and_packets(self):
        call = common.persist_call(2, packets=3)
        self.assertEqual(call[:4], ["FCALL", "tgw_persist_batch", "7", "telemetry:records"])
        self.assertEqual(call[4:10], ["journal:{356307__rand_int__}", "device:{356307__rand_int__}"] * 3)
        self.assertEqual(call[10:13], ["bench", "1000", "0"])
        self.assertEqual(len(call), 13 + 3 * (5 + 2 * len(common.PERSIST_RECORD)))
        tagged = common.persist_call(1, packets=1, tag="tag")
        self.assertEqual(tagged[3:6], ["{tag}telemetry:records", "{tag}journal:356307__rand_int__",
                                       "{tag}device:356307__rand_int__"])


class SinkTest(unittest.TestCase):
    def test_the_lag_window_skips_the_ramp_up_and_the_silent_seconds(self):
        rows = [(0.0, 9.0, 0.0), (4.9, 9.0, 100.0), (5.0, 0.5, 1000.0), (6.0, None, 2000.0),
                (7.0, 1.5, 3000.0), (8.0, 0.2, None), (9.0, 0.1, 5000.0)]
        self.assertEqual(sink.lag_window(rows), (1.5, 1000.0))

    def test_entries_are_the_same_each_time_in_resp(self):
        self.assertEqual(sink.resp(["PING"]), "*1\r\n$4\r\nPING\r\n")
        first = sink.entries(3, 1700000000000)
        self.assertEqual(first, sink.entries(3, 1700000000000))
        self.assertEqual(first.count(b"*31\r\n$4\r\nXADD\r\n"), 3)


class CommandsTest(unittest.TestCase):
    def test_the_summary_and_its_bar(self):
        r = {"devices": 10000, "rate_per_s": 1000, "seconds": 30, "threads": 8,
             "gateway": {"count": 30000, "p50_ms": 1.0, "p99_ms": 4.0, "max_ms": 9.0,
                         "outcomes": {"responded": 30000}},
             "baseline_xadd_xread": {"count": 30000, "p50_ms": 0.1, "p99_ms": 0.5, "max_ms": 1.0}}
        lines = commands.summary(r, "2026-01-01 00:00 UTC", 2, "cpu")
        self.assertEqual(lines[-2], "ratio p99 gateway / baseline: 8.0")
        self.assertEqual(lines[-1], "bar (DESIGN.md §8: p99 under 5 ms at 1,000 commands/s): PASS")
        r["gateway"]["p99_ms"] = 6.0
        self.assertTrue(commands.summary(r, "", 2, "cpu")[-1].endswith("FAIL"))


class LogTest(unittest.TestCase):
    def test_log_lines(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            common.log("building tgw (release preset)")
        self.assertRegex(out.getvalue(), r"^== \d\d:\d\d:\d\d building tgw \(release preset\)\n$")


if __name__ == "__main__":
    unittest.main()
