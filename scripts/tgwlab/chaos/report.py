"""The text report of a chaos run."""

import collections


def print_report(rep):
    print(f"chaos: {rep['instances']} instances, {rep['devices']} devices, "
          f"{rep['duration_s']:.0f} s of faults, seed {rep['seed']}")
    print(f"  faults injected: {sum(rep['faults'].values())} {rep['faults']}"
          + (f", skipped {rep['faults_skipped']}" if rep['faults_skipped'] else ""))
    checks = collections.Counter(f"{d['kind']}:{d['outcome']}" for d in rep["device_checks"])
    if checks:
        print(f"  device checks: {dict(checks)}")
    b = rep["balancer"]
    print(f"  balancer: {b.get('connections', 0)} connections, {b.get('backend_refused', 0)} "
          f"refused by a backend, {b.get('split_segments', 0)} split and "
          f"{b.get('drip_segments', 0)} dripped segments")
    rec = rep.get("records", {})
    if rec:
        print(f"  records: {rec['records_acked']} ACKed in {rec['packets_acked']} packets, "
              f"{rec['stream_entries']} stream entries; ACKed but not stored "
              f"{rec['acked_packets_not_stored']}, duplicates {rec['duplicates_of_acked_records']}"
              f" (+{rec['duplicates_of_unacked_records']} of unACKed), stored without an ACK "
              f"seen {rec['stored_without_ack_seen']}")
    s = rep.get("simulator", {})
    if s:
        print(f"  fleet: {s.get('connects')} connects, {s.get('disconnects')} disconnects, "
              f"{s.get('resends')} resends, bad CRC sent {s.get('bad_crc_sent')} / ACKed "
              f"{s.get('bad_crc_acked')}, ACK p99 {s.get('ack_p99_ms')} ms max {s.get('ack_max_ms')} ms")
    c = rep.get("commands", {})
    if c:
        print(f"  commands: {c['sent']} sent, {c['published']} published, responses "
              f"{c['responses_by_outcome']}; not connected {c['not_published_device_offline']}, "
              f"Redis unreachable {c['redis_unreachable_before_publish']}, not started "
              f"{c.get('not_started', 0)}, publish refused {c.get('publish_refused', 0)}, "
              f"publish outcome "
              f"unknown {c['publish_outcome_unknown']} ({c['responses_to_unrecorded_ids']} "
              f"responses to unrecorded ids)")
    g = rep.get("registry", {})
    if g:
        when = ("already when the last fault ended" if g['converged_after_s'] == 0
                else f"{g['converged_after_s']} s after the last fault ended")
        print(f"  registry: equal to the connected devices {when} (bound {rep['registry_bound_s']} s); during faults it differed "
              f"in {g['samples_differing_during_faults']} of {g['samples_during_faults']} "
              f"one-second samples, longest {g['longest_difference_s']} s; at the end "
              f"{g['connected_devices']} devices connected, {g['registry_entries']} entries")
    cl = rep.get("redis_cluster")
    if cl:
        print(f"  cluster: --ack-replicas {cl['ack_replicas']}, {cl['failovers']} failover(s), "
              f"{len(cl['reshards'])} reshard(s): "
              + ", ".join(f"{r['slots']} slots in {r.get('seconds')} s" for r in cl["reshards"])
              + f"; slots per master at the end {cl['slots_per_master_at_end']}")
    ha = rep.get("redis_ha")
    if ha:
        back = [c.get("replica_after_s") for c in ha["old_masters_back_as_replicas"]]
        print(f"  redis-ha: {ha['replicas']} replica(s), --ack-replicas {ha['ack_replicas']}: "
              f"{ha['failovers']} failovers (masters {ha['masters']}); old masters back as "
              f"replicas after {back} s; ACKed records lost: "
              f"{rep.get('records', {}).get('acked_records_not_stored')} in "
              f"{rep.get('records', {}).get('acked_packets_not_stored')} packets"
              + (" (measured: --ack-replicas 0 promises only the master's memory)"
                 if ha['ack_replicas'] == 0 else "")
              + f"; published commands without a response: "
              f"{rep.get('commands', {}).get('published_without_response')}")
    for ident, m in sorted(rep.get("rss", {}).items()):
        print(f"  rss {ident} ({m['end']} at the end): {m['first_kib']} -> base {m['base_kib']} "
              f"-> last {m['last_kib']} KiB (max {m['max_kib']}) over {m['samples']} samples")
    rd = rep.get("readiness")
    if rd:
        print(f"  readiness: {rd['stalled_spans']} span(s) of {rd['window_s']:.1f} s or more "
              f"without an ACK while devices sent, {rd['covered_by_503']} covered by /readyz 503 "
              f"({rd['samples']} one-second samples)")
    print(f"  projections rebuilt from the journals (--dry-run): exit "
          f"{rep.get('projections_rebuild_dry_run_exit')}")
    print(f"  SIGTERM exit codes: {rep.get('sigterm_exit_codes')}; starts refused while Redis "
          f"was unreachable (retried after 1 s): {rep['starts_refused_redis_unreachable']}")
