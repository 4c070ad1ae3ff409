"""tgwlab.cli: the scripts' own help texts and error lines."""

import contextlib
import io
import unittest

from tgwlab.cli import Parser, positive, whole

TEXT = "Usage: scripts/x [--devices N] [--flags F]\n"


def parser():
    p = Parser("scripts/x", TEXT, free_values=("--flags",))
    p.add_argument("--devices", type=whole, default=3)
    p.add_argument("--rounds", type=positive, default=1)
    p.add_argument("--flags", default="")
    return p


def run(args):
    """(exit code or None, stdout, stderr, parsed) of parsing args."""
    out, err = io.StringIO(), io.StringIO()
    parsed, code = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parsed = parser().parse_args(args)
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue(), parsed


class ParserTest(unittest.TestCase):
    def test_help_prints_the_scripts_own_text(self):
        self.assertEqual(run(["--help"])[:3], (0, TEXT, ""))
        self.assertEqual(run(["-h"])[:3], (0, TEXT, ""))

    def test_values(self):
        code, _, _, a = run(["--devices", "7", "--flags", "--ack-replicas 1"])
        self.assertIsNone(code)
        self.assertEqual((a.devices, a.rounds, a.flags), (7, 1, "--ack-replicas 1"))

    def test_an_unknown_argument(self):
        code, out, err, _ = run(["--bogus"])
        self.assertEqual((code, out), (2, ""))
        self.assertEqual(err, "scripts/x: unknown argument '--bogus'\n" + TEXT)

    def test_a_wrong_value(self):
        self.assertEqual(run(["--devices", "x"])[:3],
                         (2, "", "scripts/x: --devices takes a whole number\n"))
        self.assertEqual(run(["--rounds", "0"])[:3],
                         (2, "", "scripts/x: --rounds takes a whole number of at least 1\n"))


if __name__ == "__main__":
    unittest.main()
