"""A gateway as an operator starts it, with default flags but its ports: `tgw serve`
on its private redis-server (the default), device port and metrics endpoint on free
loopback ports, its log in a file. What a hostile peer could make it spend is read
from the outside: RSS, log bytes, Redis keys and memory, the refusal counters."""

import os
import socket
import ssl
import subprocess

from .. import metrics
from ..processes import free_port, rss_kib, spawn, stop, wait_until
from ..redis_client import redis, TEXT


class Gateway:
    def __init__(self, tgw, workdir, extra=(), tls=None):
        """tls: (cert, key) PEM paths for TLS on the device port."""
        self.tgw, self.workdir = tgw, workdir
        self.extra, self.tls = list(extra), tls
        self.port = free_port()
        self.metrics_port = free_port()
        self.data_dir = os.path.join(workdir, "data")
        self.log = os.path.join(workdir, "gateway.log")
        self.proc = None

    def argv(self):
        argv = [self.tgw, "serve", "--bind", "127.0.0.1", "--port", str(self.port),
                "--data-dir", self.data_dir, "--metrics-addr", f"127.0.0.1:{self.metrics_port}"]
        if self.tls:
            argv += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        return argv + self.extra

    def start(self, seconds=30):
        os.makedirs(self.workdir, exist_ok=True)
        with open(self.log, "ab") as out:
            self.proc = spawn(self.argv(), stdout=out, stderr=subprocess.STDOUT)
        if not wait_until(lambda: self.ready() or self.proc.poll() is not None, seconds, 0.1) \
                or self.proc.poll() is not None:
            raise RuntimeError(f"the gateway did not start; its log: {self.log}")
        return self

    def ready(self):
        return metrics.readyz(self.metrics_port, timeout=1) == 200

    def stop(self):
        return stop(self.proc) if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def rss_mib(self):
        kib = rss_kib(self.proc.pid)
        return None if kib is None else kib / 1024

    def log_bytes(self):
        try:
            return os.path.getsize(self.log)
        except OSError:
            return 0

    def log_text(self):
        with open(self.log, "rb") as f:
            return f.read().decode(errors="replace")

    def redis(self):
        """A client of the private redis-server, on its unix socket in the data dir."""
        return redis.Redis(unix_socket_path=os.path.join(self.data_dir, "redis.sock"),
                           socket_timeout=5, **TEXT)

    def scrape(self):
        return metrics.scrape(self.metrics_port)

    def refused(self, reason):
        """teltonika_refused_total{reason=...}; None when the endpoint does not answer."""
        return metrics.labelled(self.scrape(), "teltonika_refused_total", f'reason="{reason}"')

    def connect(self, source="127.0.0.1", timeout=5):
        """A TCP connection to the device port from `source`."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect(("127.0.0.1", self.port))
        return s

    def connect_tls(self, source="127.0.0.1", timeout=5, context=None):
        s = self.connect(source, timeout)
        ctx = context or insecure_client_context()
        return ctx.wrap_socket(s, server_hostname="gateway")


def insecure_client_context():
    """A TLS client that takes any certificate: a load generator, not a device that must
    trust the gateway."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def self_signed(workdir, key_mode=0o600):
    """A throwaway certificate and key (P-256), with openssl; (cert, key) paths."""
    cert = os.path.join(workdir, "cert.pem")
    key = os.path.join(workdir, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=gateway"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, key_mode)
    return cert, key


