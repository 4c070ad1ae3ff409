"""The node soak's ledger (tgwlab.soak) on synthetic records."""

import json
import unittest

from tgwlab import soak


def msg(ident, emitter="a", epoch=1, ts=1000):
    return f"{ident}:{emitter}:{epoch}:{ts}"


def error(m):
    return json.dumps({"message": m, "error": "random failure"})


class LedgerTest(unittest.TestCase):
    def test_every_id_once(self):
        handled = {msg(1): "1", msg(2): "1"}
        self.assertEqual(soak.ledger(handled, [error(msg(3))], 3), ([], [], 0, 0))

    def test_missing_and_twice(self):
        handled = {msg(1): "2", msg(2): "1"}
        missing, twice, _, _ = soak.ledger(handled, [error(msg(2))], 4)
        self.assertEqual(missing, [3, 4])
        self.assertEqual(twice, [msg(1), "1", "2"])

    def test_two_emitters_in_one_period_and_epochs_going_back(self):
        handled = {msg(1, "a", 1, 1000): "1", msg(2, "b", 2, 1200): "1",
                   msg(3, "b", 2, 1600): "1", msg(4, "a", 1, 2600): "1"}
        _, _, two, back = soak.ledger(handled, [], 4)
        self.assertEqual((two, back), (1, 1))

    def test_violations(self):
        report = {"emitted": 9, "missing": 1, "handled_more_than_once": 1,
                  "periods_with_two_emitters": 2, "epoch_went_back": 3}
        self.assertEqual(soak.violations_of(report, 10, [4], ["5"]), [
            "only 9 of 10 messages emitted in time",
            "1 message ids neither handled nor in the error list (first: [4])",
            "1 messages counted more than once (first: ['5'])",
            "2 periods with two emitters",
            "epoch went back 3 times"])
        self.assertEqual(soak.violations_of({"emitted": 10}, 10, [], []), [])


if __name__ == "__main__":
    unittest.main()
