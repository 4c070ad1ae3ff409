"""The command publisher of a chaos run: `tgw command send` against random fleet
devices, each outcome classified for the commands check."""

import json
import re
import subprocess
import time

from ..processes import spawn
from .devices import FLEET_IMEI_BASE

CMD_ID_RE = re.compile(r"response to ([0-9a-f]{32})")
# tgw command send's line for a command whose publish ended in an error (the call was
# refused, or, "outcome unknown", Redis could not say whether it ran).
PUBLISH_ERROR_RE = re.compile(r"tgw command send: command ([0-9a-f]{32}): (.*)")
# Its line for an error before any publish (reading the key shards or the Functions).
NOT_STARTED_RE = re.compile(r"^tgw command send: (?!command )", re.M)


def classify(c, code, out, err, ack_replicas):
    """What one `tgw command send --json` run says happened to its command: its id,
    status, whether it was published (None: unknown), and whether fewer replicas than
    asked confirmed it."""
    r = {k: c[k] for k in ("seq", "imei", "text", "codec", "started")}
    r["exit"] = code
    try:
        j = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        j = None
    if j:
        r["command_id"] = j["command_id"]
        r["status"] = j["status"]
        r["response"] = j["response"]
        r["failure_reason"] = j["failure_reason"]
        # `failed` without responded_at is the publisher's own "not connected":
        # nothing was appended, so no response may appear.
        r["published"] = not (j["status"] == "failed" and j["responded_at"] is None)
        # The publisher was told that fewer replicas than asked hold the command: a
        # failover may lose it, and it says so; not a broken promise.
        confirmed = j.get("replicas_confirmed")
        r["unconfirmed"] = confirmed is not None and confirmed < ack_replicas
        return r
    m = CMD_ID_RE.search(err)
    refused = PUBLISH_ERROR_RE.search(err)
    if m:
        r.update(command_id=m.group(1), status="wait_error", published=True)
    elif refused and refused.group(2).startswith("outcome unknown"):
        # Neither the publish nor the settling of it was answered: at most one
        # response may appear under this id.
        r.update(command_id=refused.group(1), status="publish_unknown", published=None)
    elif refused:
        # An error reply: the publish did not run, so no response may appear.
        r.update(command_id=refused.group(1), status="publish_refused", published=False)
    elif NOT_STARTED_RE.search(err):
        # Before publishing (the store's key shards or Functions could not be read).
        r.update(command_id=None, status="not_started", published=False)
    elif "Redis unreachable" in err:
        r.update(command_id=None, status="redis_unreachable", published=False)
    else:
        # Publishing itself failed: whether the call ran is unknown.
        r.update(command_id=None, status="publish_unknown", published=None)
    r["stderr"] = err.strip()[-300:]
    return r


class Publisher:
    """Runs `tgw command send` at --command-rate against random fleet devices."""

    def __init__(self, args, redis, rng):
        self.args, self.redis, self.rng = args, redis, rng
        self.running = []
        self.done = []
        self.seq = 0
        self.next_at = 0.0

    def tick(self, now, publishing):
        if publishing and now >= self.next_at and len(self.running) < 16:
            self.next_at = now + self.rng.expovariate(self.args.command_rate)
            self.seq += 1
            imei = str(FLEET_IMEI_BASE + self.rng.randrange(self.args.devices))
            text = f"chaos-{self.seq}"
            codec = self.rng.choice([12, 14])
            proc = spawn(
                [self.args.tgw, "command", "send", "--redis", self.redis.url(), *self.redis.tls_flags(), "--imei", imei,
                 "--text", text, "--codec", str(codec), "--timeout", "15s", "--ttl", "120s",
                 "--ack-replicas", str(self.args.ack_replicas), "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.running.append({"seq": self.seq, "imei": imei, "text": text, "codec": codec,
                                 "proc": proc, "started": now})
        still = []
        for c in self.running:
            if c["proc"].poll() is None:
                still.append(c)
                continue
            out, err = c["proc"].communicate()
            self.done.append(classify(c, c["proc"].returncode, out, err, self.args.ack_replicas))
        self.running = still

    def wait(self, seconds):
        end = time.monotonic() + seconds
        while self.running and time.monotonic() < end:
            self.tick(time.monotonic(), False)
            time.sleep(0.1)
        for c in self.running:
            c["proc"].kill()
        self.tick(time.monotonic(), False)
