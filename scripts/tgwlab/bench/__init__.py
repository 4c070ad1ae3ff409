"""The bench drivers behind scripts/bench-*: each module runs one benchmark from its
entry point's parsed arguments. common.py holds what they share (logging, the release
build, redis-benchmark's rate, a gateway and a fleet on free ports), window.py the
measurement of a window from /proc, /metrics and the simulator's progress lines."""
