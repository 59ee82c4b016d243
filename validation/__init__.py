"""Simulation studies: the measured coverage, power and error rates of every published number.

Not shipped in the wheel (nothing in `plumbline` imports this package). Each study runs the
functions that publish a number on seeded data with a known truth:

- `coverage`: every interval of the leaderboard, compare and reliability documents
  (`scripts/coverage_table.py` writes docs/statistics.md from it;
  `tests/stats/test_published_coverage.py` and `test_reliability_coverage.py` run it in CI);
- `ppi_coverage`: the PPI interval of a judged category (`benchmarks/bench_ppi.py`);
- `misspecification`: the sequential A/B and the judge correction on data that break their
  assumptions (`benchmarks/bench_misspecification.py`).

Importable from the repository root, as `benchmarks/` and `scripts/` are (pytest puts the root on
the path; the scripts and benchmarks insert it).
"""
