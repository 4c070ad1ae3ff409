"""scripts/check-layers on small trees: each wrong-way include is found, right-way ones pass."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-layers"


def run(files):
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            path = pathlib.Path(root) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        done = subprocess.run([sys.executable, str(SCRIPT), root], capture_output=True, text=True)
        return done.returncode, done.stdout


class CheckLayers(unittest.TestCase):
    def test_includes_that_run_down_pass(self):
        code, out = run({
            "codecs/a.hpp": "#include <vector>\n",
            "infra/net/b.hpp": '#include "codecs/a.hpp"\n',
            "actors/gateway/c.cpp": '#include "infra/net/b.hpp"\n#include "codecs/a.hpp"\n',
            "infra/app/d.cpp": '#include "actors/gateway/c.hpp"\n#include "infra/cli/e.hpp"\n',
            "infra/cli/e.cpp": '#include "infra/app/d.hpp"\n',
        })
        self.assertEqual(code, 0, out)

    def test_each_wrong_way_include_is_named(self):
        code, out = run({
            "codecs/a.cpp": '#include "infra/json/j.hpp"\n',
            "infra/sink/s.cpp": '// fine\n  #  include "actors/gateway/x.hpp"\n',
            "infra/metrics/m.hpp": '#include "infra/app/build.hpp"\n',
            "actors/node/n.cpp": '#include "infra/cli/serve_options.hpp"\n',
        })
        self.assertEqual(code, 1)
        lines = out.splitlines()
        self.assertEqual(len(lines), 4, out)
        self.assertIn("codecs/a.cpp:1: includes infra/json/j.hpp", out)
        self.assertIn("infra/sink/s.cpp:2: includes actors/gateway/x.hpp", out)
        self.assertIn("infra/metrics/m.hpp:1: includes infra/app/build.hpp", out)
        self.assertIn("actors/node/n.cpp:1: includes infra/cli/serve_options.hpp", out)


if __name__ == "__main__":
    unittest.main()
