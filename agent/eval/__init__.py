"""Benchmark harness: LoCoMo evidence recall, PrefEval preference recall, latency and scale."""
