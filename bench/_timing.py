"""Timing shared by the benchmarks in bench/ (not a benchmark itself: run_all skips ``_*``)."""
import time


def best_ms(fn, rounds, warmup=0):
    """Best (least disturbed) wall time of one ``fn()`` call over ``rounds`` calls, in ms,
    after ``warmup`` untimed calls: the machines these run on are shared and noisy."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3
