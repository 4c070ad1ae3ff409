"""The application API with Python's http.client, and every curl example of
docs/API.md run as written, against a real redis-server, `tgw serve --api-addr` (the
API inside the gateway, as in the quick start) and a device that answers commands.
Every JSON answer http.client gets is logged for the OpenAPI check
(TGW_API_RESPONSE_LOG). Usage: api_clients_test.py /path/to/tgw /path/to/source"""

import http.client
import json
import os
import re
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

from tgwlab import device as wire
from tgwlab.processes import free_port, spawn, wait_until
from tgwlab.servers import RedisServer

TGW, SOURCE = sys.argv[1], sys.argv[2]
IMEI = "356307042441013"
REPLY = b"Ver:03.28.07 GPS:1\r\n"


def command_reply(payload):
    """A device's Codec 12 response carrying `payload`."""
    data = bytes([0x0C, 1, 0x06]) + struct.pack(">I", len(payload)) + payload + bytes([1])
    return struct.pack(">II", 0, len(data)) + data + struct.pack(">I", wire.crc16_ibm(data))


class Tracker(threading.Thread):
    """Connects, identifies, and answers every command with REPLY."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port))
        assert wire.handshake(self.sock, IMEI)
        self.commands = []
        self.stop = False

    def run(self):
        buf = b""
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                got = self.sock.recv(4096)
            except socket.timeout:
                continue
            if not got:
                return
            buf += got
            while len(buf) >= 12 and buf[:4] == b"\0\0\0\0":
                size = struct.unpack(">I", buf[4:8])[0]
                if len(buf) < 12 + size:
                    break
                data, buf = buf[8:8 + size], buf[12 + size:]
                length = struct.unpack(">I", data[3:7])[0]
                self.commands.append(data[7:7 + length].decode("latin-1"))
                self.sock.sendall(command_reply(REPLY))
            while len(buf) >= 4 and buf[:4] != b"\0\0\0\0":
                buf = buf[4:]  # an ACK


def log_answer(method, route, status, content_type, body):
    path = os.environ.get("TGW_API_RESPONSE_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"method": method, "path": route, "status": status,
                                "content_type": content_type, "body": body}) + "\n")


class ApiClients(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="tgw-api-py-")
        cls.redis = RedisServer(cls.dir, os.path.join(cls.dir, "redis.log"))
        assert cls.redis.start()
        cls.tokens = os.path.join(cls.dir, "tokens")
        cls.token = subprocess.run(
            [TGW, "api", "token", "add", "python", "--scopes", "read,command,events",
             "--tokens", cls.tokens], capture_output=True, text=True, check=True).stdout.strip()
        cls.port, cls.api = free_port(), free_port()
        cls.gateway = spawn([TGW, "serve", "--port", str(cls.port), "--bind", "127.0.0.1",
                             "--redis", cls.redis.url(), "--metrics-addr", "",
                             "--instance-id", "gw-py", "--api-addr", f"127.0.0.1:{cls.api}",
                             "--api-tokens", cls.tokens],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(cls.dir, "gw.log"), "wb"))
        assert wait_until(lambda: cls.status("GET", "/readyz") == 200, 20), "no API"
        cls.tracker = Tracker(cls.port)
        cls.tracker.start()

    @classmethod
    def tearDownClass(cls):
        cls.tracker.stop = True
        cls.gateway.terminate()
        cls.gateway.wait(20)
        cls.redis.stop_all()

    @classmethod
    def status(cls, method, target):
        try:
            c = http.client.HTTPConnection("127.0.0.1", cls.api, timeout=5)
            c.request(method, target)
            return c.getresponse().status
        except OSError:
            return None

    def call(self, method, target, route, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.api, timeout=60)
        h = {"Authorization": f"Bearer {self.token}", **(headers or {})}
        if body is not None:
            h["Content-Type"] = "application/json"
        c.request(method, target, body=json.dumps(body) if body is not None else None, headers=h)
        r = c.getresponse()
        text = r.read().decode()
        log_answer(method, route, r.status, r.getheader("Content-Type"), text)
        return r.status, dict(r.getheaders()), json.loads(text) if text else None

    def test_a_command_and_its_reply_byte_exact(self):
        status, headers, j = self.call("POST", f"/v1/devices/{IMEI}/commands?wait=30",
                                       "/v1/devices/{imei}/commands", {"text": "getver"})
        self.assertEqual(status, 200, j)
        self.assertEqual(j["status"], "responded")
        self.assertEqual(j["response"], REPLY.decode())
        self.assertEqual(j["response_hex"], REPLY.hex().upper())
        self.assertEqual(j["publisher"], "python")
        self.assertEqual(headers["Location"], f"/v1/commands/{j['command_id']}")

    def test_devices_and_history(self):
        status, _, j = self.call("GET", "/v1/devices", "/v1/devices")
        self.assertEqual(status, 200)
        self.assertIn(IMEI, [d["imei"] for d in j["devices"]])
        self.call("POST", f"/v1/devices/{IMEI}/commands?wait=30", "/v1/devices/{imei}/commands",
                  {"text": "getinfo"})
        status, _, h = self.call("GET", f"/v1/devices/{IMEI}/commands",
                                 "/v1/devices/{imei}/commands")
        self.assertEqual(status, 200)
        self.assertTrue(any(c["text"] == "getinfo" and c["publisher"] == "python"
                            for c in h["commands"]))

    def test_every_curl_example_of_the_docs_runs(self):
        with open(os.path.join(SOURCE, "docs", "API.md")) as f:
            doc = f.read()
        blocks = re.findall(r"```sh\n(.*?)```", doc, re.S)
        commands = []
        for block in blocks:
            for line in block.replace("\\\n", " ").splitlines():
                if line.startswith("curl "):
                    commands.append(line)
        self.assertGreaterEqual(len(commands), 10)
        # The command sent by the docs gets an id: the example of GET /v1/commands/{id}
        # looks it up.
        _, _, sent = self.call("POST", f"/v1/devices/{IMEI}/commands", "/v1/devices/{imei}/commands",
                               {"text": "getgps"})
        env = {**os.environ, "API": f"http://127.0.0.1:{self.api}", "TOKEN": self.token,
               "IMEI": IMEI, "ID": sent["command_id"]}
        for command in commands:
            # -N (curl's no-buffer, alone or among short flags as in -sN) marks a stream
            # that never ends by itself.
            streaming = any(w.startswith("-") and not w.startswith("--") and "N" in w
                            for w in command.split())
            if streaming:
                self.assertIn(": tgw events", stream_start(command, env), command)
                continue
            r = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, f"{command}\n{r.stdout}\n{r.stderr}")
            self.assertTrue(r.stdout.strip(), command)


def stream_start(command, env, within=30):
    """What a command that streams (curl -N) printed until the API's opening comment came,
    or until `within` seconds passed; the command is stopped then."""
    p = subprocess.Popen(["bash", "-c", f"exec {command}"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    got = b""
    try:
        end = time.monotonic() + within
        with selectors.DefaultSelector() as sel:
            sel.register(p.stdout, selectors.EVENT_READ)
            while b": tgw events" not in got and time.monotonic() < end:
                if sel.select(timeout=0.2):
                    chunk = os.read(p.stdout.fileno(), 4096)
                    if not chunk:
                        break
                    got += chunk
    finally:
        p.kill()
        p.wait()
        p.stdout.close()
    return got.decode(errors="replace")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
