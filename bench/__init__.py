"""Knotwork benchmarks (not part of the package): synthetic corpus + performance run."""
