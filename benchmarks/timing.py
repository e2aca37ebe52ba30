"""Timing shared by the in-process benchmarks: functions run in turn, so load on a shared machine
hits each alike (the scripts import it from their own folder: `python benchmarks/NAME.py`)."""

import time


def interleaved(fns, repeat: int) -> list[list[float]]:
    """Times of each function, run in turn so that load on the machine hits both alike."""
    for fn in fns:
        fn()  # warm up (the first run compiles)
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return times
