"""scripts/check-layers on small trees: each wrong-way include is found, right-way ones pass;
with --targets, each link against the layers or against the includes is found."""
import pathlib
import subprocess
import sys
import tempfile
import unittest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "check-layers"


def run(files, targets=None):
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            path = pathlib.Path(root) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        command = [sys.executable, str(SCRIPT), root]
        if targets is not None:
            graph = pathlib.Path(root) / "layer_targets.txt"
            graph.write_text(targets)
            command += ["--targets", str(graph)]
        done = subprocess.run(command, capture_output=True, text=True)
        return done.returncode, done.stdout


# A tree whose includes run down the layers, and the targets that build it: the actors
# reach the adapters (infra/net) through a port, which the adapter implements.
TREE = {
    "codecs/a.cpp": "#include <vector>\n",
    "infra/metrics/m.hpp": "#include <atomic>\n",
    "actors/ports/p.hpp": '#include "codecs/a.hpp"\n',
    "actors/ports/p.cpp": '#include "actors/ports/p.hpp"\n',
    "infra/redis/r.cpp": '#include "infra/redis/r.hpp"\n',
    "infra/net/b.hpp": '#include "codecs/a.hpp"\n#include "actors/ports/p.hpp"\n',
    "infra/net/b.cpp": '#include "infra/redis/r.hpp"\n',
    "actors/gateway/c.cpp": '#include "actors/ports/p.hpp"\n#include "infra/metrics/m.hpp"\n',
    "infra/app/d.cpp": '#include "actors/gateway/c.hpp"\n#include "infra/net/b.hpp"\n',
}
TARGETS = """tgw_codecs codecs
tgw_metrics infra/metrics
tgw_ports actors/ports tgw_codecs
tgw_redis infra/redis
tgw_net infra/net tgw_codecs tgw_ports tgw_redis
tgw_actors actors tgw_ports tgw_metrics
tgw_app infra/app tgw_actors tgw_net
"""


class CheckLayers(unittest.TestCase):
    def test_includes_that_run_down_pass(self):
        code, out = run({
            "codecs/a.hpp": "#include <vector>\n",
            "infra/net/b.hpp": '#include "codecs/a.hpp"\n#include "actors/ports/p.hpp"\n',
            "actors/ports/p.hpp": '#include "codecs/a.hpp"\n',
            "actors/domain/q.hpp": '#include "actors/ports/p.hpp"\n#include "infra/text/hex.hpp"\n',
            "actors/gateway/c.cpp": '#include "actors/ports/p.hpp"\n#include "codecs/a.hpp"\n',
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

    def test_actors_components_that_include_one_way_pass(self):
        code, out = run({
            "actors/commands/lookup.hpp": '#include "actors/registry/r.hpp"\n',
            "actors/gateway/session.hpp": '#include "actors/commands/lookup.hpp"\n',
            "actors/gateway/session.cpp": '#include "actors/registry/r.hpp"\n',
            "actors/atoms.hpp": '#include "actors/gateway/session.hpp"\n',
        })
        self.assertEqual(code, 0, out)

    def test_actors_components_that_include_each_other_are_named(self):
        code, out = run({
            "actors/commands/directory.hpp": '#include <map>\n#include "actors/gateway/g.hpp"\n',
            "actors/gateway/g.hpp": '#include "actors/registry/r.hpp"\n',
            "actors/gateway/g.cpp": '#include "actors/commands/directory.hpp"\n',
            "actors/registry/r.hpp": "#include <string>\n",
        })
        self.assertEqual(code, 1)
        self.assertEqual(len(out.splitlines()), 1, out)
        self.assertIn("actors components include each other in a cycle: "
                      "commands -> gateway -> commands (actors/commands/directory.hpp:2 "
                      "includes actors/gateway/, actors/gateway/g.cpp:1 includes "
                      "actors/commands/)", out)

    def test_an_adapter_in_the_actors_is_named(self):
        code, out = run({
            "actors/gateway/w.cpp": '#include "actors/ports/p.hpp"\n#include "infra/redis/connection.hpp"\n',
            "actors/registry/r.hpp": '#include "infra/registry/heartbeat_holder.hpp"\n',
        })
        self.assertEqual(code, 1)
        self.assertEqual(len(out.splitlines()), 2, out)
        self.assertIn("actors/gateway/w.cpp:2: includes infra/redis/connection.hpp, an adapter: "
                      "actors include only codecs, the utilities, actors/ports and actors/domain",
                      out)
        self.assertIn("actors/registry/r.hpp:1: includes infra/registry/heartbeat_holder.hpp, "
                      "an adapter", out)

    def test_the_utilities_an_actor_may_include_pass(self):
        code, out = run({
            "actors/gateway/s.cpp": '#include "infra/metrics/gateway_counters.hpp"\n'
                                    '#include "infra/log/log_budget.hpp"\n'
                                    '#include "infra/text/hex.hpp"\n'
                                    '#include "actors/domain/allowlist.hpp"\n',
        })
        self.assertEqual(code, 0, out)

    def test_an_adapter_in_a_port_is_named(self):
        code, out = run({
            "actors/ports/store.hpp": '#include "infra/redis/failure_kind.hpp"\n',
            "actors/domain/rule.cpp": '#include "infra/telemetry/keys.hpp"\n',
        })
        self.assertEqual(code, 1)
        self.assertIn("actors/ports/store.hpp:1: includes infra/redis/failure_kind.hpp: the ports "
                      "and domain rules (actors/ports, actors/domain) may not depend on infra "
                      "adapters", out)
        self.assertIn("actors/domain/rule.cpp:1: includes infra/telemetry/keys.hpp", out)

    def test_a_test_fixture_in_product_code_is_named(self):
        code, out = run({
            "infra/app/replay.cpp": "#include <caf/all.hpp>\n#include <caf/scheduler/test_coordinator.hpp>\n",
            "tests/actors/a_test.cpp": "#include <caf/scheduler/test_coordinator.hpp>\n",
        })
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines(), [
            "infra/app/replay.cpp:2: includes <caf/scheduler/test_coordinator.hpp>: a test "
            "fixture; product code runs on its own scheduler"])

    def test_a_cycle_around_three_actors_components_is_named(self):
        code, out = run({
            "actors/a/x.hpp": '#include "actors/b/y.hpp"\n',
            "actors/b/y.hpp": '#include "actors/c/z.hpp"\n',
            "actors/c/z.cpp": '#include "actors/a/x.hpp"\n',
        })
        self.assertEqual(code, 1)
        self.assertIn("cycle: a -> b -> c -> a", out)


class CheckLinks(unittest.TestCase):
    def test_links_that_follow_the_includes_down_pass(self):
        code, out = run(TREE, TARGETS)
        self.assertEqual(code, 0, out)

    def test_a_link_to_a_higher_layer_is_named(self):
        code, out = run(TREE, TARGETS.replace("tgw_redis infra/redis\n",
                                              "tgw_redis infra/redis tgw_actors\n"))
        self.assertEqual(code, 1)
        self.assertIn("tgw_redis (infra/redis) links tgw_actors (actors): infra adapters may not "
                      "depend on actors", out)

    def test_an_adapter_linked_by_the_actors_is_named(self):
        tree = dict(TREE)
        code, out = run(tree, TARGETS.replace("tgw_actors actors tgw_ports tgw_metrics",
                                              "tgw_actors actors tgw_ports tgw_metrics tgw_net"))
        self.assertEqual(code, 1)
        self.assertIn("tgw_actors (actors) links tgw_net (infra/net), an adapter: actors include "
                      "only codecs", out)

    def test_a_cycle_is_named(self):
        tree = dict(TREE)
        tree["infra/redis/r.cpp"] += '#include "infra/net/b.hpp"\n'
        code, out = run(tree, TARGETS.replace("tgw_redis infra/redis\n",
                                              "tgw_redis infra/redis tgw_net\n"))
        self.assertEqual(code, 1)
        self.assertIn("targets link each other in a cycle: tgw_net -> tgw_redis -> tgw_net", out)

    def test_an_include_without_its_link_is_named(self):
        code, out = run(TREE, TARGETS.replace("tgw_net infra/net tgw_codecs tgw_ports tgw_redis",
                                              "tgw_net infra/net tgw_codecs tgw_ports"))
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines(), [
            "infra/net/b.cpp:1: includes infra/redis/r.hpp, but tgw_net does not link tgw_redis"
        ])

    def test_a_link_without_an_include_is_named(self):
        code, out = run(TREE, TARGETS.replace("tgw_app infra/app tgw_actors tgw_net",
                                              "tgw_app infra/app tgw_actors tgw_net tgw_redis"))
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines(),
                         ["tgw_app links tgw_redis but includes nothing from infra/redis"])


if __name__ == "__main__":
    unittest.main()
