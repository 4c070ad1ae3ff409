"""Hostile peers of a gateway, and a gateway with default flags to point them at:
the attacks of docs/OPERATIONS.md, "Hostile input", as the test suite
(tests/hostile) and scripts/hostile run them."""
