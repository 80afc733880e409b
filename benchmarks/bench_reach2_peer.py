"""bench_reach2.py's inputs and checks (NumPy only) and its numba row, run in numba's venv.

    $NUMBA_PYTHON benchmarks/bench_reach2_peer.py '{"n": 16777216, "runs": 9}'

prints one JSON line: ``{"version": ..., "ms": {kernel: median ms}}``. numba pins
its own llvmlite, so it lives in a venv of its own (``python3 -m venv
/work/numba-venv && /work/numba-venv/bin/pip install numba``); bench_reach2.py
runs this file there when ``NUMBA_PYTHON`` names that Python.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np

F32, I32 = "float32", "int32"


def cases(n: int) -> dict:
    """name -> (inputs, outputs at their start, numpy fn, check of the outputs)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(F32)
    ai = rng.integers(-100, 100, n).astype(I32)
    a5 = a[: n // 5 * 5].reshape(-1, 5)
    late = np.minimum(a, 1.5)  # one match, three quarters in: what an early exit skips
    late[3 * n // 4] = 3.0
    near_end = np.minimum(a, 1.5)  # the while search: one match 1/64 before the end
    near_end[n - n // 64] = 3.0

    def close(x, want, scale):
        # float32 partial sums of 2^24 positive terms drift by ~1e-4 (32 partials on AVX2)
        return abs(float(x) - want) <= 1e-3 * scale

    return {
        "guarded max": ([a], [np.full(1, -np.inf, F32)], lambda: a.max(),
                        lambda o: o[0][0] == a.max()),
        "last match": ([a], [np.full(1, -1, I32)], lambda: n - 1 - np.argmax((a > 2)[::-1]),
                       lambda o: o[0][0] == np.flatnonzero(a > 2)[-1]),
        "first match": ([late], [np.full(1, -1, I32), np.zeros(1, I32)], lambda: _first(late),
                        lambda o: o[0][0] == 3 * n // 4 and o[1][0] == 1),
        "while search": ([near_end], [np.zeros(1, I32)], lambda: _first(near_end),
                         lambda o: o[0][0] == n - n // 64),
        "moments": ([a], [np.zeros(2, F32)], lambda: (a.sum(), np.dot(a, a)),
                    lambda o: close(o[0][0], a.sum(dtype=np.float64), np.abs(a).sum())
                    and close(o[0][1], np.dot(a.astype(np.float64), a), np.dot(a, a))),
        "unrolled sum": ([a5], [np.zeros(1, F32)], lambda: a5.sum(),
                         lambda o: close(o[0][0], a5.sum(dtype=np.float64), np.abs(a5).sum())),
        "cumsum int32": ([ai], [np.zeros(n + 1, I32)], lambda: np.cumsum(ai),
                         lambda o: (o[0][1:] == np.cumsum(ai)).all()),
        "cumsum float32": ([a], [np.zeros(n + 1, F32)], lambda: np.cumsum(a),
                           lambda o: np.allclose(o[0][1:], np.cumsum(a, dtype=np.float64),
                                                 atol=1e-3 * np.abs(a).sum() ** 0.5 + 1e-3)),
    }


def _first(a) -> int:
    """NumPy's first index above 2, -1 when none (argmax alone would say 0)."""
    hit = a > 2
    return int(np.argmax(hit)) if hit.any() else -1


def numba_kernels() -> dict:
    import numba

    fast, plain = numba.njit(fastmath=True), numba.njit

    @plain
    def guarded_max(a, m):
        for i in range(a.shape[0]):
            if a[i] > m[0]:
                m[0] = a[i]

    @plain
    def last_match(a, k):
        for i in range(a.shape[0]):
            if a[i] > 2.0:
                k[0] = i

    @plain
    def first_match(a, k, f):  # the tirlite loop as written: a flag, no break
        # every timed call starts with the flag down, as the first one did: with it up
        # LLVM unswitches the loop into nothing
        k[0], f[0] = -1, 0
        for i in range(a.shape[0]):
            if f[0] == 0 and a[i] > 2.0:
                k[0] = i
                f[0] = 1

    @plain
    def while_search(a, i):  # the tirlite loop as written (numba's `and` short-circuits)
        i[0] = 0  # every timed call searches from the start
        while i[0] < a.shape[0] and a[i[0]] <= 2.0:
            i[0] += 1

    @fast
    def moments(a, s):
        for i in range(a.shape[0]):
            s[0] += a[i]
            s[1] += a[i] * a[i]

    @fast
    def unrolled(a, s):
        for i in range(a.shape[0]):
            s[0] = s[0] + a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3] + a[i, 4]

    @fast
    def prefix(a, b):
        for i in range(a.shape[0]):
            b[i + 1] = b[i] + a[i]

    return {"guarded max": guarded_max, "last match": last_match, "first match": first_match,
            "while search": while_search, "moments": moments,
            "unrolled sum": unrolled, "cumsum int32": prefix, "cumsum float32": prefix}


def median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    import numba

    config = json.loads(sys.argv[1])
    kernels, out = numba_kernels(), {}
    for name, (ins, outs, _, ok) in cases(config["n"]).items():
        fresh = [o.copy() for o in outs]
        kernels[name](*ins, *fresh)
        if not ok(fresh):
            raise AssertionError(f"numba {name}: result differs from NumPy")
        out[name] = median_ms(lambda f=kernels[name], x=ins, o=fresh: f(*x, *o), config["runs"])
    print(json.dumps({"version": numba.__version__, "ms": out}), flush=True)


if __name__ == "__main__":
    main()
