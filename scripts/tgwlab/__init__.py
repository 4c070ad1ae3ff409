"""tgwlab: what the scripts that run tgw on this machine share.

The chaos runner (scripts/chaos), the node soak (scripts/node-soak) and the bench
drivers (scripts/bench-* but bench-codecs, which builds and runs C++ and node only) are
thin entry points over this package: each keeps its flags, its help text and its
output, and hands its parsed arguments to a module here.

  processes    children that die with the script, free loopback ports, /proc readings
  redis_client Redis through Debian's python3-redis: one server, Sentinel, Cluster
  servers      redis-server, a master with replicas and sentinels, a Redis Cluster
  balancer     the round-robin TCP balancer that can split and drip device bytes
  device       a Teltonika device on the wire: handshake, Codec 8/8E packets, CRC16/IBM
  metrics      a gateway's /metrics and /readyz
  cli          argument parsing with the scripts' own help texts and error lines
  chaos        the fault injection run, its checks and its report
  soak         the `tgw node` soak and its ledger
  bench        the bench drivers, their measurement windows and summaries

Its tests, tests/scripts/tgwlab/*_test.py, run in ctest as scripts.tgwlab:
    PYTHONPATH=scripts python3 -m unittest discover -s tests/scripts/tgwlab -p "*_test.py"
"""
