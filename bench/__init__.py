"""Benchmarks that print numbers; `python bench/run.py --quick` runs them all."""
