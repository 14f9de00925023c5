"""Servers and helpers the tests and benchmarks share (not installed)."""
