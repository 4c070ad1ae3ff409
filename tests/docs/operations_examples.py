#!/usr/bin/env python3
"""The examples of docs/OPERATIONS.md, read from the document and run as written.

    operations_examples.py config TGW SOURCE    the config file of "Settings: flags,
                                                environment, config file", on a gateway
                                                behind a local Sentinel set, and its
                                                [command.send] section on a command
    operations_examples.py sentinel TGW SOURCE  the commands of "A replicated Redis with
                                                Sentinel": the gateway follows the
                                                master's kill -9
    operations_examples.py cluster TGW SOURCE   the commands of "Redis Cluster"

(The ACL example of "Redis ACLs" is run by FailLoudly.TheDocumentedAclUserServesDevices.)

What a reader does by hand, the runner does in the same words, and only this is
rewritten: `build/release/tgw` is the binary under test; the helper scripts get a state
directory and ports of their own (--dir, --port-base), so that nothing else on the
machine is touched; `tgw serve` gets free loopback ports, and commands that run until
stopped (`tgw serve`, `tgw simulate`, `tgw telemetry tail`) run in the background or for
a bounded time, as a reader in another shell would leave them. Between commands it
waits, as a reader would, for what the next one needs (the gateway listening, a device
connected).

Exit status 0 when every command did what the document says; otherwise the failing
command, its output and the gateway's log, and 1.
"""
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

# Ports of the helper scripts: below the ephemeral range, bus ports (+10000) too, and
# apart from the other tests' (20379, 21000, 22100).
HA_PORT_BASE = 19379
CLUSTER_PORT_BASE = 19100


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def section(doc, heading):
    """The text of the section that starts with `heading`, up to the next heading of its
    level or above."""
    at = doc.find("\n" + heading + "\n")
    if at < 0:
        raise Failure(f"docs/OPERATIONS.md has no section {heading!r}")
    level = len(heading) - len(heading.lstrip("#"))
    lines, fenced = [], False
    for line in doc[at + len(heading) + 2:].split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,%d} " % level, line):
            break
        lines.append(line)
    return "\n".join(lines)


def indented_blocks(text):
    """The 4-space indented blocks of `text` (outside lists), as lists of command lines:
    comments dropped, continuation lines joined."""
    blocks, current = [], []
    for line in text.split("\n"):
        if line.startswith("    ") and not line.startswith("     "):
            current.append(line[4:])
        elif line.startswith("        ") and current:  # a continuation's indent
            current.append(line[4:])
        else:
            if current:
                blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    out = []
    for block in blocks:
        commands, pending = [], ""
        for line in block:
            code = re.sub(r"\s+#\s.*$", "", line).rstrip()
            if code.endswith("\\"):
                pending += code[:-1] + " "
                continue
            commands.append((pending + code.strip()).strip())
            pending = ""
        out.append([c for c in commands if c])
    return out


def toml_block(text):
    m = re.search(r"```toml\n(.*?)```", text, re.S)
    if not m:
        raise Failure("no ```toml block")
    return m.group(1)


class Runner:
    def __init__(self, tgw, source, work):
        self.tgw = tgw
        self.source = source
        self.work = work
        self.background = []  # (command, Popen, log path)
        self.gateway_log = None
        self.port = None
        self.metrics_port = None
        self.urls = {}
        self.env = dict(os.environ, PATH=os.path.dirname(tgw) + os.pathsep + os.environ["PATH"])

    # --- what is rewritten --------------------------------------------------------------
    def rewrite(self, command):
        c = command.replace("build/release/tgw", shlex.quote(self.tgw))
        c = re.sub(r"\bscripts/(redis-ha|redis-cluster)\b",
                   lambda m: os.path.join(self.source, "scripts", m.group(1)), c)
        c = re.sub(r"(scripts/redis-ha) (up|url|status|down)\b",
                   rf"\1 \2 --dir {self.work}/ha --port-base {HA_PORT_BASE}", c)
        c = re.sub(r"(scripts/redis-cluster) (up|url|status|down)\b",
                   rf"\1 \2 --dir {self.work}/cluster --port-base {CLUSTER_PORT_BASE}", c)
        c = c.replace("/tmp/tgw-redis-ha/redis-16379.pid", f"{self.work}/ha/redis-{HA_PORT_BASE}.pid")
        if " serve " in f" {c} ":
            self.port, self.metrics_port = free_port(), free_port()
            c += (f" --port {self.port} --bind 127.0.0.1 --metrics-addr 127.0.0.1:{self.metrics_port}"
                  f" --data-dir {self.work}/data --heartbeat-interval-ms 1000")
        if " simulate " in f" {c} ":
            c = c.rstrip("& ") + f" --target 127.0.0.1:{self.port} --quiet" + (
                " &" if c.rstrip().endswith("&") else "")
        if " telemetry tail" in c:
            c += " --from start --count 3"
        return c

    # --- running ----------------------------------------------------------------------
    def shell(self, command, timeout=120):
        out = subprocess.run(["bash", "-c", "set -euo pipefail; " + command], capture_output=True,
                             text=True, timeout=timeout, env=self.env, cwd=self.work)
        if out.returncode != 0:
            raise Failure(f"`{command}` exited {out.returncode}:\n{out.stdout}{out.stderr}")
        return out.stdout

    def start(self, command, name):
        log = os.path.join(self.work, name + ".log")
        with open(log, "w") as f:
            p = subprocess.Popen(["bash", "-c", "exec " + command], stdout=f, stderr=subprocess.STDOUT,
                                 env=self.env, cwd=self.work)
        self.background.append((command, p, log))
        return p, log

    def wait_for(self, what, check, seconds=30):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if check():
                return
            for command, p, log in self.background:
                if p.poll() is not None and p.returncode != 0 and " serve " in f" {command} ":
                    raise Failure(f"`{command}` exited {p.returncode}:\n{open(log).read()}")
            time.sleep(0.2)
        raise Failure(f"waited {seconds} s for {what}")

    def listening(self):
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", self.port)) == 0

    def device_registered(self, url, imei, with_records=False):
        """Whether `imei` is connected (and, `with_records`, has had records stored)."""
        out = subprocess.run([self.tgw, "devices", "--redis", url, "--json"], capture_output=True,
                             text=True, env=self.env)
        if out.returncode != 0:
            return False
        for d in json.loads(out.stdout).get("devices", []):
            if d.get("imei") == imei:
                return not with_records or int(d.get("records_total") or 0) > 0
        return False

    def run(self, commands, url_of=None):
        """Runs a block's commands in order; `url_of` is the script whose `url` names the
        Redis the block's clients use."""
        for command in commands:
            c = self.rewrite(command)
            if " serve " in f" {command} ":
                _, self.gateway_log = self.start(c, "gateway")
                self.wait_for("the gateway to listen", self.listening)
            elif c.endswith("&") or " simulate " in f" {command} ":
                self.start(c.rstrip("& "), "simulate")
                if url_of:
                    url = self.shell(self.rewrite(f"scripts/{url_of} url")).strip()
                    self.wait_for("the simulated devices to connect",
                                  lambda: self.device_registered(url, "350000000000042"))
            else:
                print(f"$ {command}")
                out = self.shell(c)
                if out:
                    print(out.rstrip())

    def stop_all(self):
        failures = []
        for command, p, log in reversed(self.background):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                    failures.append(f"`{command}` did not stop on SIGTERM")
                    continue
            if p.returncode != 0:
                failures.append(f"`{command}` exited {p.returncode}:\n{open(log).read()}")
        self.background = []
        return failures

    def stop_all_or_fail(self):
        failures = self.stop_all()
        if failures:
            raise Failure("\n".join(failures))

    def gateway_text(self):
        return open(self.gateway_log).read() if self.gateway_log else ""


def check_acks_after(runner, note, seconds=60):
    """A fresh device gets its packets ACKed within `seconds`: the gateway persists now.
    Tried with a new short fleet until one is, as a reader would look again."""
    end = time.monotonic() + seconds
    while True:
        out = subprocess.run([runner.tgw, "simulate", "--count", "2", "--imei-base", "351000000000000",
                              "--target", f"127.0.0.1:{runner.port}", "--send-interval", "200ms",
                              "--duration", "3s", "--json", "--quiet"],
                             capture_output=True, text=True, env=runner.env)
        if out.returncode == 0 and json.loads(out.stdout).get("packets_acked", 0) > 0:
            return
        if time.monotonic() > end:
            raise Failure(f"{note}: no packet ACKed within {seconds} s:\n{out.stdout}{out.stderr}")


def example_sentinel(runner, doc):
    block = indented_blocks(section(doc, "## A replicated Redis with Sentinel"))[0]
    if not any("redis-ha up" in c for c in block) or not any("kill -9" in c for c in block):
        raise Failure(f"the Sentinel example is not the one this test knows:\n{block}")
    try:
        runner.run(block[:block.index(next(c for c in block if "kill -9" in c))])
        killed = next(c for c in block if "kill -9" in c)
        print(f"$ {killed}")
        runner.shell(runner.rewrite(killed))
        # The sentinels promote a replica (down-after 1 s) and the gateway follows it.
        def moved():
            try:
                status = runner.shell(runner.rewrite("scripts/redis-ha status"))
            except Failure:
                return False  # the sentinels are still electing
            return "master: 127.0.0.1:" in status and \
                f"master: 127.0.0.1:{HA_PORT_BASE}\n" not in status
        runner.wait_for("the failover", moved, 60)
        check_acks_after(runner, "after the failover")
        runner.stop_all_or_fail()
        runner.run([c for c in block[block.index(killed) + 1:]])
    finally:
        runner.stop_all()
        runner.shell(runner.rewrite("scripts/redis-ha down") + " || true")


def example_cluster(runner, doc):
    blocks = indented_blocks(section(doc, "## Redis Cluster"))
    if len(blocks) < 2 or not any("redis-cluster up" in c for c in blocks[0]):
        raise Failure(f"the cluster examples are not the ones this test knows:\n{blocks}")
    try:
        runner.run(blocks[0])  # up, registry, status, down
        runner.run(blocks[1], url_of="redis-cluster")
        runner.stop_all_or_fail()
    finally:
        runner.stop_all()
        runner.shell(runner.rewrite("scripts/redis-cluster down") + " || true")


def example_config(runner, doc):
    text = toml_block(section(doc, "## Settings: flags, environment, config file"))
    allowlist = os.path.join(runner.work, "allowlist.txt")
    imei = "350000000000042"
    with open(allowlist, "w") as f:
        f.write(imei + "\n")
    url = runner.shell(runner.rewrite("scripts/redis-ha up")).strip().splitlines()[-1]
    # The file as written, but for where its Redis and allowlist are on this machine.
    local, n = re.subn(r'^redis = "[^"]*"', f'redis = "{url}"', text, flags=re.M)
    local, m = re.subn(r'^allowlist = "[^"]*"', f'allowlist = "{allowlist}"', local, flags=re.M)
    if n != 1 or m != 1:
        raise Failure(f"the config example is not the one this test knows:\n{text}")
    config = os.path.join(runner.work, "tgw.toml")
    with open(config, "w") as f:
        f.write(local)
    try:
        runner.run([f"build/release/tgw --config {config} serve"])
        log = runner.gateway_text()
        for said in ("--ack-replicas 1", "instance"):
            if said not in log:
                raise Failure(f"the gateway's log lacks {said!r}: the file was not applied:\n{log}")
        runner.start(runner.rewrite(f"build/release/tgw simulate --count 1 --imei-base {imei}"),
                     "simulate")
        # ACKed with --ack-replicas 1 of [serve], from the allowlist of [serve].
        runner.wait_for("the allowlisted device's records to be stored",
                        lambda: runner.device_registered(url, imei, with_records=True))
        # [command.send] timeout = "10s": the device answers within it.
        out = runner.shell(runner.rewrite(
            f"build/release/tgw --config {config} command send --imei {imei} --text getinfo"))
        if not out.startswith("responded"):
            raise Failure(f"tgw command send with the config file: {out}")
        runner.stop_all_or_fail()
    finally:
        runner.stop_all()
        runner.shell(runner.rewrite("scripts/redis-ha down") + " || true")


EXAMPLES = {"config": example_config, "sentinel": example_sentinel, "cluster": example_cluster}


def main(argv):
    if len(argv) != 4 or argv[1] not in EXAMPLES:
        print(__doc__, file=sys.stderr)
        return 2
    tgw, source = os.path.abspath(argv[2]), os.path.abspath(argv[3])
    with open(os.path.join(source, "docs", "OPERATIONS.md")) as f:
        doc = f.read()
    with tempfile.TemporaryDirectory(prefix="tgw-ops-") as work:
        runner = Runner(tgw, source, work)
        try:
            EXAMPLES[argv[1]](runner, doc)
        except (Failure, subprocess.TimeoutExpired) as e:
            print(f"FAILED: {e}\n--- gateway log ---\n{runner.gateway_text()}")
            return 1
    print(f"docs/OPERATIONS.md: the {argv[1]} example ran as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
