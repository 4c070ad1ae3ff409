"""The chaos run's checks (tgwlab.chaos.checks) on synthetic observations: each one
finds what it must and nothing else."""

import collections
import unittest

from tgwlab.chaos import checks

IMEI = "356000000000001"


def life(ident, samples):
    return {"id": ident, "readiness": samples}


def stall(codes, acks=10):
    """Samples a second apart: no ACK while a frame arrives every second; codes[i] is
    /readyz's answer at second i."""
    return [(float(t), acks, float(t), code) for t, code in enumerate(codes)]


class ReadinessTest(unittest.TestCase):
    def test_a_stall_covered_by_503_is_no_violation(self):
        # Frames arrive from second 0 on, nothing is ACKed; from the window (3 s) plus
        # one second of sampling on, every sample must be 503.
        found, report = checks.readiness([life("a", stall([200] * 4 + [503] * 5))], 3.0, 0.0)
        self.assertEqual(found, [])
        self.assertEqual(report, {"window_s": 3.0, "stalled_spans": 1, "covered_by_503": 1,
                                  "samples": 9})

    def test_a_stall_answered_200_is_a_violation_naming_the_instance_and_times(self):
        found, report = checks.readiness([life("chaos-2", stall([200] * 4 + [503, 200, 503]))],
                                         3.0, 0.0)
        self.assertEqual(found, ["chaos-2: ACKed nothing from 0.0 s while its devices sent, "
                                 "yet /readyz answered 200 at 5.0 s"])
        self.assertEqual((report["stalled_spans"], report["covered_by_503"]), (1, 0))

    def test_200_before_the_window_has_passed_is_allowed(self):
        found, report = checks.readiness([life("a", stall([200] * 4))], 3.0, 0.0)
        self.assertEqual((found, report["stalled_spans"]), ([], 0))

    def test_one_frame_alone_is_no_stall(self):
        samples = [(0.0, 10, 0.0, 200), (1.0, 10, 1.0, 200)] + \
                  [(float(t), 10, 1.0, 200) for t in range(2, 9)]
        found, report = checks.readiness([life("a", samples)], 3.0, 0.0)
        self.assertEqual((found, report["stalled_spans"]), ([], 0))

    def test_an_ack_ends_the_span(self):
        samples = stall([200] * 3) + [(3.0, 11, 3.0, 200)] + \
                  [(float(t), 11, float(t), 200) for t in range(4, 7)]
        found, report = checks.readiness([life("a", samples)], 3.0, 0.0)
        self.assertEqual((found, report["stalled_spans"]), ([], 0))

    def test_a_gap_in_the_samples_ends_the_span(self):
        # A paused instance is not sampled: the stall before and after the pause are
        # two spans, each too short.
        samples = stall([200] * 3) + [(6.0, 10, 6.0, 200), (7.0, 10, 7.0, 200),
                                      (8.0, 10, 8.0, 200)]
        found, report = checks.readiness([life("a", samples)], 3.0, 0.0)
        self.assertEqual((found, report["stalled_spans"]), ([], 0))

    def test_times_are_reported_from_the_run_start(self):
        samples = [(100.0 + t, a, s, c) for t, a, s, c in stall([200] * 6)]
        found, _ = checks.readiness([life("a", samples)], 3.0, 90.0)
        self.assertEqual(found, ["a: ACKed nothing from 10.0 s while its devices sent, yet "
                                 "/readyz answered 200 at 14.0, 15.0 s"])


def stored_of(entries):
    stored = collections.defaultdict(collections.Counter)
    for imei, ts in entries:
        stored[imei][ts] += 1
    return stored


class RecordsTest(unittest.TestCase):
    def run_check(self, acked, entries, device_checks=(), bad=(), lost_by_design=False):
        return checks.records(acked, stored_of(entries), len(entries), list(device_checks),
                              set(bad), lost_by_design)

    def test_every_acked_record_stored_once(self):
        found, report = self.run_check([(IMEI, 100, 100, 1), (IMEI, 200, 201, 2)],
                                       [(IMEI, 100), (IMEI, 200), (IMEI, 201), (IMEI, 300)])
        self.assertEqual(found, [])
        self.assertEqual(report["records_acked"], 3)
        self.assertEqual(report["packets_acked"], 2)
        self.assertEqual(report["stream_entries"], 4)
        self.assertEqual(report["stored_without_ack_seen"], 1)

    def test_an_acked_record_missing(self):
        found, report = self.run_check([(IMEI, 200, 201, 2)], [(IMEI, 200)])
        self.assertEqual(found, [f"ACKed record missing: {IMEI} records 200..201: 2 ACKed, 1 stored"])
        self.assertEqual((report["acked_packets_not_stored"], report["acked_records_not_stored"]),
                         (1, 1))

    def test_missing_records_are_measured_only_when_lost_by_design(self):
        found, report = self.run_check([(IMEI, 200, 201, 2)], [], lost_by_design=True)
        self.assertEqual(found, [])
        self.assertEqual(report["acked_records_not_stored"], 2)

    def test_more_than_twenty_missing_packets_are_summed_up(self):
        found, _ = self.run_check([(IMEI, t, t, 1) for t in range(25)], [])
        self.assertEqual(len(found), 21)
        self.assertEqual(found[-1], "... and 5 more ACKed packets not stored")

    def test_duplicates_of_acked_and_of_unacked_records(self):
        found, report = self.run_check([(IMEI, 100, 100, 1)],
                                       [(IMEI, 100), (IMEI, 100), (IMEI, 300), (IMEI, 300)])
        self.assertEqual(found, [f"record stored twice: {IMEI} ts 100 stored 2 times",
                                 f"record stored twice: {IMEI} ts 300 stored 2 times (never ACKed)"])
        self.assertEqual((report["duplicates_of_acked_records"],
                          report["duplicates_of_unacked_records"]), (1, 1))

    def test_records_of_a_bad_crc_device_that_was_never_acked(self):
        bad = "357000000000000"
        found, _ = self.run_check([], [(bad, 5)], bad=[bad],
                                  device_checks=[{"imei": bad, "kind": "bad_crc", "outcome": "ok"}])
        self.assertEqual(found, [f"{bad}: records stored for a packet that was never ACKed "
                                 f"(bad CRC or oversize)"])
        # Its intact copy was sent: those records may be stored.
        found, _ = self.run_check([], [(bad, 5)], bad=[bad],
                                  device_checks=[{"imei": bad, "kind": "bad_crc", "outcome": "ok",
                                                  "intact_sent": True}])
        self.assertEqual(found, [])

    def test_a_device_check_that_failed(self):
        d = {"imei": "357000000000001", "kind": "oversize", "instance": "chaos-1",
             "outcome": "violation", "detail": "connection still open 3 s after a 2 GB length"}
        found, _ = self.run_check([], [], device_checks=[d])
        self.assertEqual(found, ["oversize device 357000000000001 on chaos-1: connection still "
                                 "open 3 s after a 2 GB length"])


def sent(seq, status="responded", published=True, command_id=None, **kw):
    c = {"seq": seq, "imei": IMEI, "text": f"chaos-{seq}", "codec": 12, "started": 10.0 + seq,
         "exit": 0, "command_id": command_id or f"{seq:032x}", "status": status,
         "published": published}
    c.update(kw)
    return c


class CommandsTest(unittest.TestCase):
    def test_one_terminal_response_each(self):
        done = [sent(1), sent(2, status="failed", failure_reason="timeout")]
        responses = {f"{1:032x}": [{"status": "responded", "response": "OK chaos-1"}],
                     f"{2:032x}": [{"status": "failed", "failure_reason": "timeout"}]}
        found, report = checks.commands(done, responses, 0.0)
        self.assertEqual(found, [])
        self.assertEqual(report["responses_by_outcome"], {"responded": 1, "failed/timeout": 1})
        self.assertEqual((report["sent"], report["published"]), (2, 2))

    def test_a_published_command_without_response(self):
        found, report = checks.commands([sent(1, unconfirmed=True)], {}, 0.0)
        self.assertEqual(found, [f"command {1:032x} (chaos-1 to {IMEI}, published at 11.0 s, "
                                 f"exit 0, unconfirmed by replicas) got no response"])
        self.assertEqual(report["published_without_response"], 1)
        self.assertEqual(report["unconfirmed_without_response"], 1)

    def test_two_responses(self):
        responses = {f"{1:032x}": [{"status": "responded", "response": "OK chaos-1"},
                                   {"status": "failed", "failure_reason": "instance_lost"}]}
        found, _ = checks.commands([sent(1)], responses, 0.0)
        self.assertEqual(found, [f"command {1:032x} (chaos-1 to {IMEI}) got 2 responses: "
                                 f"responded/OK chaos-1, failed/instance_lost"])

    def test_another_commands_reply(self):
        responses = {f"{1:032x}": [{"status": "responded", "response": "OK chaos-7"}]}
        found, _ = checks.commands([sent(1)], responses, 0.0)
        self.assertEqual(found, [f"command {1:032x} (chaos-1 to {IMEI}) answered with another "
                                 f"command's reply: 'OK chaos-7'"])

    def test_not_connected_yet_answered(self):
        responses = {f"{1:032x}": [{"status": "failed", "failure_reason": "timeout"}]}
        found, report = checks.commands([sent(1, status="failed", published=False)], responses, 0.0)
        self.assertEqual(found, [f"command {1:032x} (chaos-1) reported not published (failed), "
                                 f"yet it has a response"])
        self.assertEqual(report["not_published_device_offline"], 1)

    def test_an_unrecorded_id_answered_twice(self):
        cid = "f" * 32
        responses = {cid: [{"status": "failed"}, {"status": "failed"}]}
        found, report = checks.commands([], responses, 0.0)
        self.assertEqual(found, [f"command {cid} (publish outcome unknown) got 2 responses"])
        self.assertEqual(report["responses_to_unrecorded_ids"], 1)


class RegistryTest(unittest.TestCase):
    def test_mismatches_name_the_imei_and_the_instance(self):
        truth = {"1": "chaos-1", "2": "chaos-1", "3": "chaos-2"}
        reg = {"1": "chaos-1", "2": "chaos-2", "4": "chaos-2"}
        members = {"chaos-1": {"1"}, "chaos-2": {"2", "4", "9"}}
        mm = checks.registry_mismatches(truth, reg, members,
                                        ["instance:devices:chaos-1", "{0.1}instance:devices:chaos-9"],
                                        {"chaos-1", "chaos-2"})
        self.assertEqual(mm, ["2 connected to chaos-1 but registered to chaos-2",
                              "3 connected to chaos-2 but not in the registry",
                              "4 registered to chaos-2 but not connected",
                              "instance:devices:chaos-2 differs from the registry "
                              "(extra ['9'], missing [])",
                              "{0.1}instance:devices:chaos-9 left behind by a dead instance"])

    def test_equal_is_no_mismatch(self):
        truth = {"1": "chaos-1"}
        self.assertEqual(checks.registry_mismatches(truth, dict(truth), {"chaos-1": {"1"}},
                                                    ["instance:devices:chaos-1"], {"chaos-1"}), [])

    def samples(self, seq):
        return [(float(t), {"mismatches": mm, "connected": 1, "entries": 1})
                for t, mm in enumerate(seq)]

    def test_converged_within_the_bound(self):
        samples = self.samples([["x"], ["x"], [], [], []])
        found, report, diff = checks.registry_convergence(samples, 1.0, 3.0, 0.0, 15.0)
        self.assertEqual(found, [])
        self.assertEqual(report["converged_after_s"], 1.0)
        self.assertEqual(report["longest_difference_s"], 2)
        self.assertEqual((report["samples_during_faults"],
                          report["samples_differing_during_faults"]), (4, 2))
        self.assertEqual(diff["mismatches"], [])

    def test_never_converged(self):
        samples = self.samples([[], ["3 connected to chaos-2 but not in the registry"]])
        found, report, _ = checks.registry_convergence(samples, 0.0, 1.0, 0.0, 15.0)
        self.assertEqual(found, ["registry equal to the connected devices never after the last "
                                 "fault ended (bound 15 s); at the end 1 mismatches: 3 connected "
                                 "to chaos-2 but not in the registry"])
        self.assertIsNone(report["converged_after_s"])

    def test_converged_too_late(self):
        samples = self.samples([["x"]] * 20 + [[]])
        found, _, _ = checks.registry_convergence(samples, 0.0, 1.0, 0.0, 15.0)
        self.assertEqual(found, ["registry equal to the connected devices only 20.0 s after the "
                                 "last fault ended (bound 15 s); at the end 0 mismatches: "])

    def test_a_difference_that_never_heals(self):
        samples = self.samples([["stuck", "a"], ["stuck"], ["stuck", "b"], ["stuck"], []])
        self.assertEqual(checks.stuck_mismatches(samples, 2.5, 0.0),
                         ['registry: "stuck" for over 2 s, from 0 s into the run'])
        self.assertEqual(checks.stuck_mismatches(samples, 3.0, 0.0), [])

    def test_settled_since_the_last_run_of_equal_samples(self):
        self.assertEqual(checks.settled_since(self.samples([[], ["x"], [], []])), 2.0)
        self.assertIsNone(checks.settled_since(self.samples([[], ["x"]])))


class MemoryTest(unittest.TestCase):
    def life(self, kib):
        return {"id": "chaos-1", "end": {"how": "sigterm"},
                "rss": [(float(t), k) for t, k in enumerate(kib)]}

    def test_growth_past_half_and_16_mib_is_unstable(self):
        found, out = checks.memory([self.life([20000] * 20 + [60000] * 20)], 40.0)
        self.assertEqual(found, ["chaos-1: RSS grew from 20000.0 KiB to 60000.0 KiB"])
        self.assertEqual(out["chaos-1"]["end"], "sigterm")

    def test_small_growth_is_stable(self):
        found, out = checks.memory([self.life([20000] * 20 + [30000] * 20)], 40.0)
        self.assertEqual(found, [])
        self.assertEqual(out["chaos-1"]["max_kib"], 30000)

    def test_short_lives_are_not_judged(self):
        found, out = checks.memory([self.life([20000] * 10 + [90000] * 9)], 40.0)
        self.assertEqual((found, out), ([], {}))


if __name__ == "__main__":
    unittest.main()
