"""Benchmark suites that ship with plumbline."""
