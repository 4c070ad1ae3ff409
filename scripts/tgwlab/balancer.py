"""A round-robin TCP balancer on its own asyncio thread, in front of gateway
instances. It reads the IMEI out of each connection's handshake and the instance's
verdict, so it knows which devices are connected to which instance: the truth a
registry is compared with. In a split or drip window it also re-segments the
device-to-instance bytes of every third connection."""

import asyncio
import collections
import random
import socket
import struct
import threading


def imei_of(head):
    """The IMEI of a handshake once `head` holds all of it; None before."""
    if len(head) >= 2:
        size = struct.unpack(">H", head[:2])[0]
        if len(head) >= 2 + size:
            return head[2:2 + size].decode(errors="replace")
    return None


def segments(data, mode, rng):
    """data cut as the mode forwards it: "split", random pieces of 1-12 bytes; "drip",
    one byte at a time."""
    i = 0
    while i < len(data):
        step = 1 if mode == "drip" else rng.randint(1, 12)
        yield data[i:i + step]
        i += step


def gap(mode, rng):
    """Seconds between two segments: 3-12 ms when dripping, 1 ms when splitting."""
    return rng.uniform(0.003, 0.012) if mode == "drip" else 0.001


class Conn:
    __slots__ = ("id", "imei", "slot", "instance", "accepted", "open", "head", "verdict_seen",
                 "writers")

    def __init__(self, cid, slot, instance):
        self.id, self.slot, self.instance = cid, slot, instance
        self.imei = None
        self.accepted = False
        self.open = True
        self.head = b""
        self.verdict_seen = False
        self.writers = ()


class Balancer:
    """Round-robin over `instances`, each with .port, .slot and .id (read when a
    connection is made: a restarted instance keeps its port and takes a new id).
    Set .mode to "split" or "drip" for a window of re-segmented bytes, None after."""

    def __init__(self, instances, seed):
        self.instances = instances
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.conns = {}
        self.next_id = 0
        self.rr = 0
        self.mode = None
        self.stats = collections.Counter()
        self.port = None
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        self.ready.wait(10)

    def stop(self):
        """Closes the listener and every connection, then ends the thread."""
        async def close_all():
            self.server.close()
            with self.lock:
                writers = [w for c in self.conns.values() for w in c.writers]
            for w in writers:
                w.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if tasks:
                await asyncio.wait(tasks, timeout=3)
        try:
            asyncio.run_coroutine_threadsafe(close_all(), self.loop).result(5)
        except Exception:  # a loop that is stuck still gets stopped below
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", 0, backlog=2048))
        self.port = self.server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    def connected(self):
        """IMEI -> instance id of each device whose handshake an instance accepted and
        whose connection is open on both sides."""
        with self.lock:
            return {c.imei: c.instance for c in self.conns.values()
                    if c.open and c.accepted and c.imei}

    async def _client(self, creader, cwriter):
        n = len(self.instances)
        bwriter = None
        for k in range(n):
            inst = self.instances[(self.rr + k) % n]
            try:
                breader, bwriter = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", inst.port), 1.0)
                # Read after the connect: a restart renames the slot before its new
                # process can accept, and a connection to the old process is reset.
                slot, instance_id = inst.slot, inst.id
                self.rr = (self.rr + k + 1) % n
                break
            except (OSError, asyncio.TimeoutError):
                self.stats["backend_refused"] += 1
                bwriter = None
        if bwriter is None:
            self.stats["no_backend"] += 1
            cwriter.close()
            return
        bsock = bwriter.get_extra_info("socket")
        bsock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            self.next_id += 1
            c = Conn(self.next_id, slot, instance_id)
            c.writers = (cwriter, bwriter)
            self.conns[c.id] = c
        self.stats["connections"] += 1
        up = asyncio.ensure_future(self._up(c, creader, bwriter))
        down = asyncio.ensure_future(self._down(c, breader, cwriter))
        await asyncio.wait([up, down], return_when=asyncio.FIRST_COMPLETED)
        with self.lock:
            c.open = False
            self.conns.pop(c.id, None)
        for w in (cwriter, bwriter):
            w.close()
        for t in (up, down):
            t.cancel()
        await asyncio.gather(up, down, return_exceptions=True)

    async def _up(self, c, reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                if c.imei is None:
                    c.head += data
                    c.imei = imei_of(c.head)
                    if c.imei is not None:
                        c.head = b""
                mode = self.mode if c.id % 3 == 0 else None
                if mode is None:
                    writer.write(data)
                    await writer.drain()
                    continue
                self.stats[f"{mode}_bytes"] += len(data)
                for piece in segments(data, mode, self.rng):
                    writer.write(piece)
                    await writer.drain()
                    self.stats[f"{mode}_segments"] += 1
                    await asyncio.sleep(gap(mode, self.rng))
        except (OSError, asyncio.IncompleteReadError):
            return

    async def _down(self, c, reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                if not c.verdict_seen and c.imei is not None:
                    c.verdict_seen = True
                    c.accepted = data[0] == 1
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            return
