"""What a process holds, read from /proc: its sockets' timers, and whether given bytes
(TLS secrets, a private key) are anywhere in its memory."""

import re
import subprocess


def keepalive_timer(local_port, remote_port):
    """Whether the TCP socket local_port -> remote_port (on loopback) has its keepalive
    timer armed (/proc/net/tcp's timer kind 2)."""
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            local, remote, timer = fields[1], fields[2], fields[5]
            if int(local.split(":")[1], 16) == local_port and \
                    int(remote.split(":")[1], 16) == remote_port:
                return timer.split(":")[0] == "02"
    return False


def keylog_secrets(path):
    """Every secret of an SSLKEYLOGFILE (the third field of each line), as bytes."""
    out = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and not line.startswith("#"):
                out.append(bytes.fromhex(parts[2]))
    return out


def ec_private_scalar(key_path):
    """The private scalar of an EC key in PEM, as bytes (openssl ec -text)."""
    text = subprocess.run(["openssl", "ec", "-in", key_path, "-noout", "-text"],
                          check=True, capture_output=True, text=True).stdout
    block = re.search(r"priv:\s*\n((?:\s+[0-9a-f:]+\n)+)", text).group(1)
    raw = bytes.fromhex("".join(block.split()).replace(":", ""))
    # openssl prints a leading 00 when the top bit is set: the scalar is 32 bytes.
    return raw[-32:]


def _mappings(pid):
    """(start, end, dumpable) of every readable mapping, from /proc/pid/smaps."""
    maps = []
    current = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            if head:
                current = [int(head.group(1), 16), int(head.group(2), 16),
                           head.group(3).startswith("r"), True]
                maps.append(current)
            elif line.startswith("VmFlags:") and current is not None:
                current[3] = " dd" not in line
    return [(a, b, dumpable) for a, b, readable, dumpable in maps if readable]


def find_in_process(pid, needles, dumpable_only=False):
    """The needles (bytes) found in the process's readable memory; with dumpable_only,
    in the mappings a core dump keeps (not MADV_DONTDUMP)."""
    found = set()
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for start, end, dumpable in _mappings(pid):
            if dumpable_only and not dumpable:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue  # [vvar] and the like
            for n in needles:
                if n in data:
                    found.add(n)
    return [n.hex() for n in needles if n in found]
