#!/usr/bin/env python3
"""The Grafana dashboard and the Prometheus rules of docs/deploy, held to what they promise.

    deploy_assets.py names RULES DASHBOARD   the metric names their expressions use, one a
                                             line (the gateway test compares them with what
                                             a running gateway and sink serve)
    deploy_assets.py check RULES DASHBOARD TESTS
                                             the dashboard is importable JSON whose every
                                             query parses (promtool checks them as recording
                                             rules, with $PROMTOOL or promtool), whose
                                             process panels show the instances chosen and
                                             no sink (promtool evaluates them on synthetic
                                             series); every alert has a severity, a summary
                                             and a description, and a unit test in TESTS

Exit status 0 when all holds; otherwise each breach on a line of its own and 1.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

# Words of PromQL that are no metric: operators, modifiers and the label lists' keywords.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
            "unless", "offset", "atan2", "inf", "nan"}

# Grafana's variables, replaced by something PromQL parses before promtool reads a query.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def metric_names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings: matcher values, le="+Inf"
    e = re.sub(r"\{[^}]*\}", "", e)  # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)  # ranges and subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    names = set()
    for m in re.finditer(r"(?<![\w$.])[A-Za-z_:][A-Za-z0-9_:]*", e):
        if e[m.end():].lstrip().startswith("("):
            continue  # a function
        if m.group(0).lower() in KEYWORDS:
            continue
        names.add(m.group(0))
    return names


def rules_of(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def targets_of(dashboard):
    for panel in dashboard.get("panels", []):
        for inner in [panel] + panel.get("panels", []):
            for t in inner.get("targets", []):
                yield inner.get("title", "?"), t


def names(rules_path, dashboard_path):
    with open(dashboard_path) as f:
        dashboard = json.load(f)
    used = set()
    for r in rules_of(rules_path):
        used |= metric_names(r["expr"])
    for _, t in targets_of(dashboard):
        used |= metric_names(t["expr"])
    for n in sorted(used):
        print(n)
    return 0


def grafana_free(expr):
    for var, value in GRAFANA_VARIABLES.items():
        expr = expr.replace(var, value)
    return re.sub(r"\$\{?\w+\}?", ".*", expr)  # $instance_id inside =~ "..."


# What two gateways and a sink serve, as Prometheus scrapes them (jobs tgw and tgw-sink,
# docs/OPERATIONS.md): teltonika_ series carry instance_id, except the sink's; the
# process_ series carry none, only the target's own instance and job labels.
TARGETS = [("gw-a:9127", "tgw", "gw-a"), ("gw-b:9127", "tgw", "gw-b"), ("sink-1:9128", "tgw-sink", None)]


def synthetic_series(metric):
    out = []
    for instance, job, instance_id in TARGETS:
        labels = {"instance": instance, "job": job}
        if metric.startswith("teltonika_") and instance_id:
            labels["instance_id"] = instance_id
        if metric == "teltonika_build_info":
            labels.update(version="0.1.0", commit="c0ffee")
        text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        out.append({"series": f"{metric}{{{text}}}", "values": "1+60x20"})
    return out


def check_instance_filter(dashboard_path, dashboard):
    """Every query of the process panels, with the instance variable on one gateway, shows
    that gateway's series and nothing else; on All, the gateways' and no sink's. The
    process_ series have no instance_id of their own (docs/GATEWAY.md), so a query that
    filters them on it shows nothing: promtool evaluates each on synthetic series."""
    breaches = []
    cases = []
    for title, t in targets_of(dashboard):
        expr = t.get("expr", "")
        used = metric_names(grafana_free(expr))
        if "$instance_id" not in expr or not any(n.startswith("process_") for n in used):
            continue
        series = [s for n in sorted(used) for s in synthetic_series(n)]
        for chosen, expected in (("gw-a", ["gw-a"]), (".*", ["gw-a", "gw-b"])):
            query = expr.replace("$instance_id", chosen)
            for var, value in GRAFANA_VARIABLES.items():
                query = query.replace(var, value)
            cases.append((title, t["refId"], chosen, {
                "interval": "1m",
                "input_series": series,
                "promql_expr_test": [{
                    "expr": f"count by (instance_id, job) ({query})",
                    "eval_time": "10m",
                    "exp_samples": [{"labels": f'{{instance_id="{i}", job="tgw"}}', "value": 1}
                                    for i in expected],
                }],
            }))
    if not cases:
        return [f"{dashboard_path}: no process panel filters on $instance_id"]
    for title, ref, chosen, case in cases:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "empty.yml"), "w") as f:
                yaml.safe_dump({"groups": []}, f)
            with open(os.path.join(d, "test.yml"), "w") as f:
                yaml.safe_dump({"rule_files": ["empty.yml"], "evaluation_interval": "1m",
                                "tests": [case]}, f)
            promtool = os.environ.get("PROMTOOL", "promtool")
            out = subprocess.run([promtool, "test", "rules", "test.yml"], cwd=d,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                breaches.append(f"{dashboard_path}: panel {title!r} query {ref} with instance_id "
                                f"{chosen!r} does not show exactly the gateways chosen:\n"
                                f"{out.stdout}{out.stderr}")
    return breaches


def check(rules_path, dashboard_path, tests_path):
    breaches = []
    with open(dashboard_path) as f:
        dashboard = json.load(f)
    for key in ("title", "uid", "panels", "schemaVersion"):
        if key not in dashboard:
            breaches.append(f"{dashboard_path}: no {key}")
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    if len(ids) != len(set(ids)):
        breaches.append(f"{dashboard_path}: panel ids repeat")
    recording = []
    for title, t in targets_of(dashboard):
        if not t.get("expr") or not t.get("refId"):
            breaches.append(f"{dashboard_path}: panel {title!r}: a target without expr or refId")
            continue
        recording.append({"record": f"tgw_dashboard:query_{len(recording)}",
                          "expr": grafana_free(t["expr"])})
    if not recording:
        breaches.append(f"{dashboard_path}: no queries")
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recording}]}, f)
        temporary = f.name
    try:
        promtool = os.environ.get("PROMTOOL", "promtool")
        out = subprocess.run([promtool, "check", "rules", temporary], capture_output=True,
                             text=True)
        if out.returncode != 0:
            breaches.append(f"{dashboard_path}: a query does not parse:\n{out.stdout}{out.stderr}")
    finally:
        os.unlink(temporary)

    breaches += check_instance_filter(dashboard_path, dashboard)

    with open(tests_path) as f:
        tests = yaml.safe_load(f)
    tested = {t["alertname"] for case in tests["tests"] for t in case.get("alert_rule_test", [])
              if t.get("exp_alerts")}
    for r in rules_of(rules_path):
        if "alert" not in r:
            continue
        name = r["alert"]
        if r.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            breaches.append(f"{rules_path}: {name}: no severity critical, warning or info")
        for key in ("summary", "description"):
            if not r.get("annotations", {}).get(key):
                breaches.append(f"{rules_path}: {name}: no {key}")
        if name not in tested:
            breaches.append(f"{tests_path}: no test in which {name} fires")
    for b in breaches:
        print(b)
    return 1 if breaches else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "names":
        return names(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "check":
        return check(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
