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


def alternate_ab(step, batches, rounds, warmup=2, on_warm=None):
    """Paired A/B timing in one process: ``step(k, batch) -> (seconds, value)`` for k in "AB",
    ``warmup`` untimed batches each, then ``rounds`` rounds over ``batches`` with the order of
    A and B swapped every round (a slow phase of a shared host hits both). Prints each side's
    median/mean/min and B/A of the medians; returns (times, values) as {k: [...]}.
    ``on_warm()`` runs between the warm-up and the timed rounds."""
    import statistics
    for k in "AB":
        for b in batches[:warmup]:
            step(k, b)
    if on_warm is not None:
        on_warm()
    res = {"A": [], "B": []}
    vals = {"A": [], "B": []}
    for r in range(rounds):
        for k in (("A", "B") if r % 2 == 0 else ("B", "A")):
            for b in batches:
                dt, v = step(k, b)
                res[k].append(dt)
                vals[k].append(v)
    for k in "AB":
        ms = [t * 1e3 for t in res[k]]
        print(k, "median %.1f ms  mean %.1f ms  min %.1f ms  n=%d"
              % (statistics.median(ms), statistics.fmean(ms), min(ms), len(ms)))
    print("B/A median %.3f" % (statistics.median(res["B"]) / statistics.median(res["A"])))
    return res, vals


def step_counts(step, k, first, second):
    """Work of one step of side ``k``, counted (independent of the host's load): Python calls
    (cProfile, over ``step(k, first)``), then aten ops at all levels and autograd nodes
    evaluated (torch.profiler, over ``step(k, second)``)."""
    import cProfile
    import pstats
    import torch
    pr = cProfile.Profile()
    pr.enable()
    step(k, first)
    pr.disable()
    calls = pstats.Stats(pr).total_calls
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p:
        step(k, second)
    ev = p.key_averages()
    aten = sum(e.count for e in ev if e.key.startswith("aten::"))
    nodes = sum(e.count for e in ev if e.key.startswith("autograd::engine::evaluate_function"))
    return calls, aten, nodes
