"""Arguments for generated programs: arrays and scalars that reach the edges of each dtype.

A third of the float arrays hold a sixth of edge values (NaN, +-inf, +-0.0, denormals,
the largest finite values, 1 and -1) among normals of mixed magnitudes; integer arrays
mix small values with the extremes of their type. Every value is drawn from
``numpy.random.default_rng([case seed, input seed])``, so a reproducer needs only the seeds.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import semantics as sem

SMALL_INT = 1000  # the "small" class of int32/int64 buffers holds values in [-1000, 1000]


@dataclasses.dataclass(frozen=True)
class BufSpec:
    """A buffer parameter: ``role`` is data, index (values in [0, size)) or divisor
    (never 0 or -1); ``small`` int32/int64 buffers hold values within +-SMALL_INT."""

    name: str
    dtype: str
    shape: tuple
    role: str = "data"
    small: bool = False


@dataclasses.dataclass(frozen=True)
class ScalarSpec:
    """A scalar parameter: ``role`` is n (a loop extent in [0, limit]), k (an index in
    [0, limit)) or value (any value of the dtype)."""

    name: str
    dtype: str
    role: str
    limit: int = 0


def float_edges(dtype: str) -> np.ndarray:
    """The edge values of a float dtype."""
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 3 * tiny, info.tiny,
                     info.max, -info.max, 1.0, -1.0], dtype)


def int_edges(dtype: str) -> list:
    """The edge values of an integer dtype."""
    lo, hi = sem.int_range(dtype)
    return [lo, lo + 1, hi, hi - 1, 0, 1] + ([-1] if lo else [hi // 2 + 1])


def make_arg(spec, rng: np.random.Generator):
    """One argument for ``spec`` (a ``BufSpec`` or ``ScalarSpec``)."""
    if isinstance(spec, ScalarSpec):
        return _scalar(spec, rng)
    shape, dtype = spec.shape, spec.dtype
    if spec.role == "index":
        return rng.integers(0, rng.choice([1, 3, shape[-1]]), shape).astype(dtype)
    if spec.role == "divisor":
        signed = sem.kind(dtype) == "int"
        choices = [d for d in range(-9, 10) if d not in (0, -1)] if signed else list(range(1, 10))
        return rng.choice(np.array(choices, dtype), shape)
    kind = sem.kind(dtype)
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind == "float":
        values = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)
        return _with_edges(rng, values.astype(dtype), float_edges(dtype))
    if spec.small:
        return rng.integers(-SMALL_INT, SMALL_INT + 1, shape).astype(dtype)
    lo, hi = sem.int_range(dtype)
    width = min(hi, 1000)
    values = rng.integers(max(lo, -width), width + 1, shape).astype(dtype)
    return _with_edges(rng, values, np.array(int_edges(dtype), dtype))


def _with_edges(rng: np.random.Generator, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """A sixth of the elements set to edge values, in a third of the arrays (half for floats)."""
    if rng.random() < (0.5 if values.dtype.kind == "f" else 1 / 3):
        where = rng.random(values.shape) < 1 / 6
        values = np.where(where, rng.choice(edges, values.shape), values).astype(values.dtype)
    return values


def _scalar(spec: ScalarSpec, rng: np.random.Generator):
    if spec.role == "n":  # the whole range, nothing, or a length that leaves a tail
        roll = rng.random()
        if roll < 0.15:
            return 0
        return spec.limit if roll < 0.45 else int(rng.integers(0, spec.limit + 1))
    if spec.role == "k":
        return int(rng.integers(0, spec.limit))
    if sem.kind(spec.dtype) == "float":
        edges = float_edges(spec.dtype)
        pick = edges[rng.integers(len(edges))] if rng.random() < 0.4 else rng.standard_normal()
        return float(sem.np_type(spec.dtype)(pick))
    lo, hi = sem.int_range(spec.dtype)
    if rng.random() < 0.3:  # by index: an array of the edges would round uint64 ones to float
        edges = int_edges(spec.dtype)
        return edges[int(rng.integers(len(edges)))]
    return int(rng.integers(max(lo, -100), 101))


def has_nan(args: list) -> bool:
    """Whether some argument holds a NaN."""
    return any(np.isnan(a).any() if isinstance(a, np.ndarray) and a.dtype.kind == "f"
               else isinstance(a, float) and a != a for a in args)
