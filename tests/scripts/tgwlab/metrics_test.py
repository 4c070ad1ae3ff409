"""tgwlab.metrics: parsing an exposition, and a stand-in endpoint on loopback."""

import http.server
import threading
import unittest

from tgwlab import metrics

TEXT = """# HELP teltonika_acks_total ACKs sent
# TYPE teltonika_acks_total counter
teltonika_acks_total{instance_id="chaos-1",codec="8"} 5
teltonika_acks_total{instance_id="chaos-1",codec="8E"} 7
teltonika_sessions{instance_id="chaos-1"} 3
teltonika_telemetry_consumer_lag_seconds{group="positions"} 0.25
teltonika_telemetry_consumer_lag_seconds{group="other"} 9
teltonika_acks_totally_else 100
process_cpu_seconds_total 1.5e+00
"""


class ParseTest(unittest.TestCase):
    def test_parse_and_sum(self):
        m = metrics.parse(TEXT)
        self.assertEqual(m['teltonika_sessions{instance_id="chaos-1"}'], 3.0)
        self.assertEqual(metrics.metric(m, "teltonika_acks_total"), 12.0)
        self.assertEqual(metrics.metric(m, "process_cpu_seconds_total"), 1.5)
        self.assertEqual(metrics.metric(m, "teltonika_nothing"), 0)
        self.assertIsNone(metrics.metric(None, "teltonika_acks_total"))

    def test_labelled(self):
        m = metrics.parse(TEXT)
        self.assertEqual(metrics.labelled(m, "teltonika_telemetry_consumer_lag_seconds",
                                          'group="positions"'), 0.25)
        self.assertIsNone(metrics.labelled(m, "teltonika_sink_records_total", ""))

    def test_totals_by_name(self):
        t = metrics.totals(metrics.parse(TEXT))
        self.assertEqual(t["teltonika_acks_total"], 12.0)
        self.assertEqual(t["teltonika_acks_totally_else"], 100.0)
        self.assertNotIn("process_cpu_seconds_total", t)


class Handler(http.server.BaseHTTPRequestHandler):
    ready = 503

    def do_GET(self):
        if self.path == "/metrics":
            self.send_response(200)
            self.end_headers()
            self.wfile.write(TEXT.encode())
        elif self.path == "/readyz":
            self.send_response(Handler.ready)
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, *args):
        pass


class EndpointTest(unittest.TestCase):
    def setUp(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.port = self.server.server_address[1]

    def test_scrape_and_readyz(self):
        self.assertEqual(metrics.metric(metrics.scrape(self.port), "teltonika_acks_total"), 12.0)
        Handler.ready = 503
        self.assertEqual(metrics.readyz(self.port), 503)
        Handler.ready = 200
        self.assertEqual(metrics.readyz(self.port), 200)

    def test_nothing_listening(self):
        self.server.shutdown()
        self.server.server_close()
        self.assertIsNone(metrics.scrape(self.port, timeout=0.5))
        self.assertIsNone(metrics.readyz(self.port, timeout=0.5))


if __name__ == "__main__":
    unittest.main()
