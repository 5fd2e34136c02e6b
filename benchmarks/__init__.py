"""Benchmarks and harnesses; run as modules: ``python -m benchmarks.<name>``."""
