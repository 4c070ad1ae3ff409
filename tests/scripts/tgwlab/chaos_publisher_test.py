"""What tgwlab.chaos.publisher makes of a `tgw command send --json` run."""

import json
import unittest

from tgwlab.chaos.publisher import classify

SENT = {"seq": 3, "imei": "356000000000007", "text": "chaos-3", "codec": 12, "started": 12.5}
CID = "0123456789abcdef0123456789abcdef"


def line(**kw):
    j = {"command_id": CID, "status": "responded", "response": "OK chaos-3",
         "failure_reason": None, "responded_at": 1700000000000}
    j.update(kw)
    return "some progress\n" + json.dumps(j) + "\n"


class ClassifyTest(unittest.TestCase):
    def test_a_response(self):
        r = classify(SENT, 0, line(), "", 1)
        self.assertEqual((r["command_id"], r["status"], r["published"], r["unconfirmed"]),
                         (CID, "responded", True, False))
        self.assertEqual(r["seq"], 3)

    def test_not_connected_is_not_published(self):
        r = classify(SENT, 3, line(status="failed", failure_reason="not_connected",
                                   responded_at=None), "", 0)
        self.assertIs(r["published"], False)

    def test_a_failure_with_a_time_was_published(self):
        r = classify(SENT, 2, line(status="failed", failure_reason="timeout"), "", 0)
        self.assertIs(r["published"], True)

    def test_fewer_replicas_than_asked(self):
        self.assertTrue(classify(SENT, 0, line(replicas_confirmed=0), "", 1)["unconfirmed"])
        self.assertFalse(classify(SENT, 0, line(replicas_confirmed=1), "", 1)["unconfirmed"])

    def test_waiting_failed_after_publishing(self):
        r = classify(SENT, 1, "", f"tgw: no response to {CID} within 15s\n", 0)
        self.assertEqual((r["command_id"], r["status"], r["published"]), (CID, "wait_error", True))

    def test_redis_unreachable_before_publishing(self):
        r = classify(SENT, 1, "", "tgw: Redis unreachable: connection refused\n", 0)
        self.assertEqual((r["command_id"], r["status"], r["published"]),
                         (None, "redis_unreachable", False))

    def test_a_connection_or_log_in_that_failed_is_before_publishing(self):
        for err in ("tgw command send: connect to redis://127.0.0.1:1/0: Connection refused "
                    "(nothing listens there): Redis is unreachable: check that it runs\n",
                    "tgw command send: rediss://127.0.0.1:1/0 accepted the connection but sent "
                    "no reply within 2000 ms (to PING): the server took the connection\n"):
            r = classify(SENT, 1, "", err, 0)
            self.assertEqual((r["command_id"], r["status"], r["published"]),
                             (None, "not_started", False), err)

    def test_a_refused_publish_did_not_run(self):
        r = classify(SENT, 1, "", f"tgw command send: command {CID}: ERR unknown shard\n", 0)
        self.assertEqual((r["command_id"], r["status"], r["published"]),
                         (CID, "publish_refused", False))

    def test_a_publish_neither_answered_nor_settled_is_unknown_with_its_id(self):
        r = classify(SENT, 1, "", f"tgw command send: command {CID}: outcome unknown (IO x)\n", 0)
        self.assertEqual((r["command_id"], r["status"], r["published"]),
                         (CID, "publish_unknown", None))

    def test_a_send_that_could_not_start_published_nothing(self):
        r = classify(SENT, 1, "", "tgw command send: CLUSTERDOWN The cluster is down\n", 0)
        self.assertEqual((r["command_id"], r["status"], r["published"]),
                         (None, "not_started", False))

    def test_anything_else_is_unknown(self):
        r = classify(SENT, 1, "garbage", "x" * 400, 0)
        self.assertEqual((r["status"], r["published"]), ("publish_unknown", None))
        self.assertEqual(len(r["stderr"]), 300)


if __name__ == "__main__":
    unittest.main()
