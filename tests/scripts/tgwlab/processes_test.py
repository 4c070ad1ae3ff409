"""tgwlab.processes: ports, /proc readings, children that die with their parent."""

import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from tgwlab import processes


class ProcessesTest(unittest.TestCase):
    def test_a_cluster_port_and_its_bus_port_can_be_bound(self):
        port = processes.free_cluster_port()
        self.assertLess(port + 10000, 32768)
        with socket.socket() as a, socket.socket() as b:
            a.bind(("127.0.0.1", port))
            b.bind(("127.0.0.1", port + 10000))

    def test_free_port_can_be_bound(self):
        import socket
        port = processes.free_port()
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))

    def test_proc_readings_of_this_process(self):
        self.assertGreater(processes.rss_kib(os.getpid()), 1000)
        self.assertIsNotNone(processes.cpu_ticks(os.getpid()))
        user, kernel = processes.cpu_times(f"/proc/{os.getpid()}/stat")
        self.assertGreaterEqual(user + kernel, 0)
        self.assertGreater(processes.open_files(os.getpid()), 2)

    def test_proc_readings_of_a_process_that_is_gone(self):
        p = subprocess.Popen(["true"])
        p.wait()
        self.assertIsNone(processes.rss_kib(p.pid))
        self.assertIsNone(processes.cpu_ticks(p.pid))

    def test_log_tail(self):
        with tempfile.NamedTemporaryFile("wb", delete=False) as f:
            f.write(b"one\ntwo\n\xffthree\n")
        self.addCleanup(os.unlink, f.name)
        self.assertEqual(processes.log_tail(f.name, 2), ["two", "\ufffdthree"])
        self.assertEqual(processes.log_tail(f.name + ".none"), [])

    def test_wait_until(self):
        start = time.monotonic()
        self.assertTrue(processes.wait_until(lambda: time.monotonic() - start > 0.1, 5))
        self.assertFalse(processes.wait_until(lambda: False, 0.1))

    def test_a_child_dies_with_its_parent(self):
        # A parent that spawns a sleeper and is then SIGKILLed: the sleeper goes too.
        parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import sys, time
            sys.path.insert(0, {os.path.dirname(os.path.dirname(processes.__file__))!r})
            from tgwlab.processes import spawn
            print(spawn(["sleep", "60"]).pid, flush=True)
            time.sleep(60)
            """)], stdout=subprocess.PIPE, text=True)
        child = int(parent.stdout.readline())
        parent.kill()
        parent.wait()
        parent.stdout.close()
        self.assertTrue(processes.wait_until(lambda: processes.rss_kib(child) is None, 5))

    def test_group_stops_what_it_started(self):
        with tempfile.TemporaryDirectory() as d:
            g = processes.Group(d)
            a = g.start(["sleep", "60"], log="a.log")
            b = g.start(["sh", "-c", "trap '' TERM; echo ready; sleep 60"], stdout=subprocess.PIPE)
            b.stdout.readline()
            g.stop_all(grace=0.5)
            self.assertIsNotNone(a.poll())
            self.assertEqual(b.poll(), -9)  # ignored SIGTERM: SIGKILLed after the grace
            b.stdout.close()


if __name__ == "__main__":
    unittest.main()
