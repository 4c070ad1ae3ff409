"""The checks of a chaos run, as functions of what the run observed. Each returns the
violations it found (one text each, naming the record, command, IMEI or instance) and
what it adds to the report."""

import bisect
import collections
import statistics


def registry_mismatches(truth, reg, members, dead_keys, live_ids):
    """What differs between the devices the balancer holds connected (truth: IMEI ->
    instance id) and the registry (reg: IMEI -> owner), and between the registry and
    the reverse indexes (members: instance id -> its set's IMEIs, for every live
    instance and every owner); dead_keys: the reverse-index keys that exist."""
    mm = []
    for imei, owner in sorted(truth.items()):
        if imei not in reg:
            mm.append(f"{imei} connected to {owner} but not in the registry")
        elif reg[imei] != owner:
            mm.append(f"{imei} connected to {owner} but registered to {reg[imei]}")
    for imei, owner in sorted(reg.items()):
        if imei not in truth:
            mm.append(f"{imei} registered to {owner} but not connected")
    # The reverse index of each live instance holds exactly its entries, and no dead
    # instance keeps one.
    by_owner = owners(reg)
    for inst_id in sorted(live_ids | set(by_owner)):
        held = members.get(inst_id, set())
        if held != by_owner.get(inst_id, set()):
            extra = sorted(held - by_owner.get(inst_id, set()))
            missing = sorted(by_owner.get(inst_id, set()) - held)
            mm.append(f"instance:devices:{inst_id} differs from the registry "
                      f"(extra {extra[:3]}, missing {missing[:3]})")
    for k in sorted(dead_keys):
        if k.split("instance:devices:", 1)[1] not in live_ids:
            mm.append(f"{k} left behind by a dead instance")
    return mm


def owners(reg):
    """instance id -> the IMEIs the registry gives it."""
    by_owner = collections.defaultdict(set)
    for imei, owner in reg.items():
        by_owner[owner].add(imei)
    return by_owner


def settled_since(samples):
    """Start of the final run of samples in which the registry equalled the truth."""
    since = None
    for t, d in samples:
        if d["mismatches"]:
            since = None
        elif since is None:
            since = t
    return since


def registry_convergence(samples, last_effect_end, faults_end, t0, bound):
    """The registry must equal the connected devices within `bound` seconds of the last
    fault's effect ending. Returns (violations, report, the last sample's diff)."""
    settled = settled_since(samples)
    diff = samples[-1][1] if samples else None
    during = [d for t, d in samples if t <= faults_end]
    # The longest run of differing samples, and what differed at its start, middle
    # and end: a long run of faults that overlap reads differently from one entry
    # that stays wrong.
    streak, longest, longest_at = 0, 0, (0, 0)
    for i, (t, d) in enumerate(samples):
        if d["mismatches"]:
            streak += 1
            if streak > longest:
                longest, longest_at = streak, (i - streak + 1, i)
        else:
            streak = 0
    examples = []
    if longest:
        first, last = longest_at
        for i in sorted({first, (first + last) // 2, last}):
            t, d = samples[i]
            examples.append({"at_s": round(t - t0, 1), "mismatches": len(d["mismatches"]),
                             "first": d["mismatches"][:3]})
    converged = None if settled is None else max(0.0, settled - last_effect_end)
    report = {
        "converged_after_s": None if converged is None else round(converged, 1),
        "samples_during_faults": len(during),
        "samples_differing_during_faults": sum(1 for d in during if d["mismatches"]),
        "longest_difference_s": longest,
        "longest_difference_samples": examples,
        "connected_devices": diff["connected"] if diff else None,
        "registry_entries": diff["entries"] if diff else None,
    }
    violations = []
    if converged is None or converged > bound:
        mm = diff["mismatches"] if diff else ["registry unreadable"]
        when = "never" if converged is None else f"only {converged:.1f} s"
        violations.append(
            f"registry equal to the connected devices {when} after the last fault ended "
            f"(bound {bound:.0f} s); at the end {len(mm)} mismatches: " + "; ".join(mm[:10]))
    return violations, report, diff


def stuck_mismatches(samples, limit, t0):
    """During the faults the registry may differ from the truth, but each difference
    must heal: the same one (same IMEI, same instance) lasting past `limit` seconds
    is a violation, whatever else was going on."""
    violations = []
    first_seen, reported = {}, set()
    for t, d in samples:
        now = set(d["mismatches"])
        for text in list(first_seen):
            if text not in now:
                del first_seen[text]
        for text in now:
            first_seen.setdefault(text, t)
            if t - first_seen[text] > limit and text not in reported:
                reported.add(text)
                violations.append(
                    f"registry: \"{text}\" for over {limit:.0f} s, from "
                    f"{first_seen[text] - t0:.0f} s into the run")
    return violations


def readiness(lives, window, t0):
    """Every span of at least the readiness window in which an instance ACKed
    nothing while its devices sent is covered by /readyz 503 on that instance: a
    balancer that watches /readyz never sends devices to an instance that cannot
    ACK them. A span starts with the first frame that arrived after the last ACK,
    and counts once frames kept arriving (in two or more one-second samples: one
    frame from a device that closed before its ACK could be written is no stall);
    from the window plus one second (the sampling) on, every sample must be 503.
    A gap in the samples (a pause) ends a span.

    lives: each process's {"id", "readiness": [(time, acks, frames sent, /readyz code)]}."""
    judged = []  # per stalled span: (instance life, since, the samples that answered 200)
    for life in lives:
        samples = life["readiness"]
        since, arrivals, flagged, ready_at = None, 0, False, []
        for prev, cur in zip(samples, samples[1:] + [None]):
            ended = cur is None or cur[0] - prev[0] > 2.5 or cur[1] > prev[1]
            if ended:
                if flagged:
                    judged.append((life["id"], since, ready_at))
                since, arrivals, flagged, ready_at = None, 0, False, []
                continue
            t, _, sent, code = cur
            if sent > prev[2]:
                if since is None:
                    since = prev[0]
                arrivals += 1
            if since is not None and arrivals >= 2 and t - since >= window + 1.0:
                flagged = True
                if code == 200:
                    ready_at.append(t)
    violations = []
    for ident, since, ready_at in judged:
        if ready_at:
            violations.append(
                f"{ident}: ACKed nothing from {since - t0:.1f} s while its devices sent, "
                f"yet /readyz answered 200 at "
                + ", ".join(f"{x - t0:.1f}" for x in ready_at[:5]) + " s")
    report = {"window_s": window, "stalled_spans": len(judged),
              "covered_by_503": sum(1 for _, _, ready_at in judged if not ready_at),
              "samples": sum(len(l["readiness"]) for l in lives)}
    return violations, report


def published(done):
    """command id -> outcome of each command the publisher appended."""
    return {c["command_id"]: c for c in done if c.get("published") and c["command_id"]}


def commands(done, responses, t0):
    """In every mode: a published command ends with exactly one terminal response
    (responded, or failed with a reason), across failovers too; a responded one
    carries its own command's reply; one reported not connected has none.
    done: the publisher's outcomes; responses: command id -> response entries."""
    violations = []
    expected = published(done)
    by_status = collections.Counter(c["status"] for c in done)
    outcomes = collections.Counter()
    lost_commands = 0
    for cid, c in expected.items():
        got = responses.get(cid, [])
        if len(got) == 0:
            lost_commands += 1
            violations.append(f"command {cid} ({c['text']} to {c['imei']}, published "
                              f"at {c['started'] - t0:.1f} s, exit {c['exit']}"
                              + (", unconfirmed by replicas" if c.get("unconfirmed")
                                 else "") + ") got no response")
            continue
        if len(got) > 1:
            violations.append(
                f"command {cid} ({c['text']} to {c['imei']}) got {len(got)} responses: "
                + ", ".join(f"{g.get('status')}/{g.get('failure_reason') or g.get('response')}"
                            for g in got))
        g = got[0]
        outcomes[g.get("status") + ("/" + g["failure_reason"] if g.get("failure_reason") else "")] += 1
        if g.get("status") == "responded" and g.get("response") != f"OK {c['text']}":
            violations.append(f"command {cid} ({c['text']} to {c['imei']}) answered "
                              f"with another command's reply: {g.get('response')!r}")
    for c in done:
        if c.get("published") is False and c["command_id"] and c["command_id"] in responses:
            violations.append(f"command {c['command_id']} ({c['text']}) reported not "
                              f"published ({c['status']}), yet it has a response")
    known = {c["command_id"] for c in done if c["command_id"]}
    twice_unknown = [cid for cid, g in responses.items() if cid not in known and len(g) > 1]
    for cid in twice_unknown:
        violations.append(f"command {cid} (publish outcome unknown) got "
                          f"{len(responses[cid])} responses")
    report = {
        "sent": len(done),
        "by_publisher_outcome": dict(by_status),
        "published": len(expected),
        "responses_by_outcome": dict(outcomes),
        "not_published_device_offline": sum(1 for c in done if c.get("published") is False
                                            and c["status"] == "failed"),
        "redis_unreachable_before_publish": by_status.get("redis_unreachable", 0),
        "publish_outcome_unknown": by_status.get("publish_unknown", 0),
        "publish_refused": by_status.get("publish_refused", 0),
        "not_started": by_status.get("not_started", 0),
        "responses_to_unrecorded_ids": sum(1 for cid in responses if cid not in known),
        "published_unconfirmed_by_replicas": sum(1 for c in done if c.get("unconfirmed")),
        "published_without_response": lost_commands,
        "unconfirmed_without_response": sum(1 for cid, c in expected.items()
                                            if c.get("unconfirmed") and not responses.get(cid)),
    }
    return violations, report


def records(acked, stored, total, device_checks, bad_imeis, lost_by_design):
    """Every ACKed record is stored exactly once and no (imei, ts) is stored twice at
    all; no record of a packet that was never ACKed (bad CRC, oversize) is stored.
    acked: (imei, first ts, last ts, count) per ACKed packet; stored: imei -> Counter
    of ts over the telemetry streams; total: their entries; lost_by_design: ACKed
    records missing are measured, not violations (--redis-ha, --ack-replicas 0)."""
    sorted_ts = {imei: sorted(c) for imei, c in stored.items()}
    missing, duplicated_acked, acked_records = [], [], 0
    covered = collections.defaultdict(set)
    for imei, first, last, n in acked:
        acked_records += n
        ts_list = sorted_ts.get(imei, [])
        lo, hi = bisect.bisect_left(ts_list, first), bisect.bisect_right(ts_list, last)
        present = ts_list[lo:hi]
        covered[imei].update(present)
        if len(present) != n:
            missing.append(f"{imei} records {first}..{last}: {n} ACKed, "
                           f"{len(present)} stored")
        for ts in present:
            if stored[imei][ts] > 1:
                duplicated_acked.append(f"{imei} ts {ts} stored {stored[imei][ts]} times")
    duplicates_unacked = []
    for imei, c in stored.items():
        for ts, k in c.items():
            if k > 1 and ts not in covered[imei]:
                duplicates_unacked.append(f"{imei} ts {ts} stored {k} times (never ACKed)")
    stored_unacked = sum(len(c) - len(covered[imei]) for imei, c in stored.items())
    bad_stored = sorted(i for i in bad_imeis if i in stored and not any(
        (d.get("acked") or d.get("intact_sent")) and d.get("imei") == i
        for d in device_checks))
    lost_records = sum(int(m.split(": ")[1].split(" ACKed")[0]) -
                       int(m.split(", ")[1].split(" stored")[0]) for m in missing)
    violations = []
    if not lost_by_design:
        for m in missing[:20]:
            violations.append(f"ACKed record missing: {m}")
        if len(missing) > 20:
            violations.append(f"... and {len(missing) - 20} more ACKed packets not stored")
    for d in (duplicated_acked + duplicates_unacked)[:20]:
        violations.append(f"record stored twice: {d}")
    for imei in bad_stored:
        violations.append(f"{imei}: records stored for a packet that was never ACKed "
                          f"(bad CRC or oversize)")
    for d in device_checks:
        if d.get("outcome") == "violation":
            violations.append(f"{d['kind']} device {d['imei']} on {d['instance']}: "
                              f"{d['detail']}")
    report = {
        "packets_acked": len(acked), "records_acked": acked_records,
        "stream_entries": total,
        "acked_packets_not_stored": len(missing),
        "acked_records_not_stored": lost_records,
        "missing_examples": missing[:5],
        "duplicates_of_acked_records": len(duplicated_acked),
        "duplicates_of_unacked_records": len(duplicates_unacked),
        "stored_without_ack_seen": stored_unacked,
    }
    return violations, report


def memory(lives, run_s):
    """RSS of each process that lived through at least 60 % of the run: the median of
    its last tenth of samples against the median of the samples at 25-40 % of its life
    (after warm-up). Growth above 50 % and 16 MiB counts as unstable."""
    violations, out = [], {}
    for life in lives:
        rss = life["rss"]
        if len(rss) < 20 or (rss[-1][0] - rss[0][0]) < 0.6 * run_s:
            continue
        n = len(rss)
        base = statistics.median(k for _, k in rss[n // 4: max(n // 4 + 1, (n * 2) // 5)])
        last = statistics.median(k for _, k in rss[-max(1, n // 10):])
        out[life["id"]] = {"end": (life["end"] or {}).get("how"), "samples": n,
                           "first_kib": rss[0][1], "base_kib": base,
                           "last_kib": last, "max_kib": max(k for _, k in rss)}
        if last > base * 1.5 and last - base > 16 * 1024:
            violations.append(f"{life['id']}: RSS grew from {base} KiB to {last} KiB")
    return violations, out
