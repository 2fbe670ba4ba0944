"""Benchmarks: our kernel against a faithful implementation of the reference design, side by side in one process.

Run `python -m bench` (full, under 5 minutes on 2 cores) or `python -m bench --quick` (seconds).
"""
