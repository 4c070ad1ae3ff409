"""A gateway's (or sink's) Prometheus endpoint: /metrics as numbers, /readyz's code."""

import re
import urllib.error
import urllib.request

SAMPLE = re.compile(r"^(\w+)(\{[^}]*\})?\s+(\S+)")


def parse(text):
    """{'name{labels}': value} of an exposition text (comments skipped)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if m:
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def scrape(port, timeout=2):
    """/metrics of 127.0.0.1:port, parsed; None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            return parse(r.read().decode())
    except OSError:
        return None


def readyz(port, timeout=2):
    """/readyz's status code, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None


def metric(values, name):
    """The sum of a metric over all its label sets; None without values."""
    if not values:
        return None
    return sum(v for k, v in values.items() if k == name or k.startswith(name + "{"))


def labelled(values, name, label):
    """The first sample of `name` whose labels contain `label` (e.g. 'group="positions"');
    None when there is none."""
    for k, v in (values or {}).items():
        if (k == name or k.startswith(name + "{")) and label in k:
            return v
    return None


def totals(values, prefix="teltonika_"):
    """{name: sum over its label sets} of every metric whose name starts with prefix."""
    out = {}
    for k, v in (values or {}).items():
        if k.startswith(prefix):
            name = k.split("{", 1)[0]
            out[name] = out.get(name, 0.0) + v
    return out
