"""The one table of ``PassContext`` config keys: type, default and meaning of each.

A pass reads its options with ``PassContext.current().config.get(key)``; a
user sets them with ``PassContext(config={key: value})``. Keys not in this
table are rejected (with a near-miss suggestion), and so are values of the
wrong type, so that a typo never silently leaves an option unset. Passes
that need a new key call ``register_config`` at import time.

A key whose type is ``dict`` lists its sub-keys (each with a type and a
default); a user value for it is checked the same way and completed with
the defaults of the sub-keys it does not set.
"""

from __future__ import annotations

import difflib
import numbers
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

_MISSING = object()


@attrs.frozen
class ConfigKey:
    """A known config key: its value type, default, a one-line doc and optional sub-keys."""

    name: str
    type: type
    default: Any
    doc: str
    subkeys: Mapping[str, ConfigKey] | None = None
    check: Callable[[Any], str | None] | None = None


_REGISTRY: dict[str, ConfigKey] = {}


def register_config(
    key: str,
    type: type,
    default: Any,
    doc: str,
    subkeys: dict[str, tuple[type, Any, str]] | None = None,
    check: Callable[[Any], str | None] | None = None,
) -> ConfigKey:
    """Declare config ``key``; ``subkeys`` maps sub-key -> (type, default, doc) for dicts.

    ``check(value)`` may return an error message for a well-typed but invalid
    value (raised as ``ValueError``). Registering a key twice replaces it.
    """
    if not isinstance(key, str) or not key:
        raise TypeError(f"register_config: key must be a non-empty str, got {key!r}")
    subs = None
    if subkeys is not None:
        subs = types.MappingProxyType(
            {name: ConfigKey(f"{key}.{name}", t, d, doc_) for name, (t, d, doc_) in subkeys.items()}
        )
    entry = ConfigKey(key, type, default, doc, subs, check)
    if subs is not None:  # a dict default is completed from its sub-keys
        entry = attrs.evolve(entry, default=_check_subkeys(entry, default or {}))
    _REGISTRY[key] = entry
    return entry


def known_configs() -> dict[str, ConfigKey]:
    """All registered config keys, by name."""
    return dict(_REGISTRY)


def _type_ok(value: Any, expected: type) -> bool:
    # bool is an int subclass in Python; an int option must not take True.
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if expected is dict:
        return isinstance(value, Mapping)
    if expected is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    return isinstance(value, expected)


def _unknown(name: str, choices: list[str], what: str, fix: str = "") -> ValueError:
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    known = ", ".join(sorted(choices))
    return ValueError(f"unknown {what} {name!r}.{hint} Known: {known}.{fix}")


def _check_value(entry: ConfigKey, value: Any) -> Any:
    if not _type_ok(value, entry.type):
        name = entry.type.__name__
        article = "an" if name[0] in "aeiou" else "a"
        raise TypeError(
            f"config {entry.name!r} expects {article} {name}, got {type(value).__name__} {value!r}"
        )
    if entry.subkeys is not None:
        value = _check_subkeys(entry, value)
    if entry.check is not None:
        problem = entry.check(value)
        if problem:
            raise ValueError(f"config {entry.name!r}: {problem}")
    return int(value) if entry.type is int else value


def _check_subkeys(entry: ConfigKey, value: Mapping) -> types.MappingProxyType:
    out = {name: sub.default for name, sub in entry.subkeys.items()}
    for name, sub_value in value.items():
        if name not in entry.subkeys:
            raise _unknown(name, list(entry.subkeys), f"sub-key of config {entry.name!r}:")
        out[name] = _check_value(entry.subkeys[name], sub_value)
    return types.MappingProxyType(out)


def _registered(key: str) -> ConfigKey:
    entry = _REGISTRY.get(key)
    if entry is None:
        fix = " A pass that adds an option declares it with transform.register_config."
        raise _unknown(str(key), list(_REGISTRY), "config key", fix)
    return entry


def validate_config(config: Mapping | None) -> dict[str, Any]:
    """``config`` checked against the table: ValueError for unknown keys, TypeError for types."""
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(f"PassContext: config must be a dict, got {type(config).__name__}")
    out = {}
    for key, value in config.items():
        if key not in _REGISTRY:
            raise _unknown(str(key), list(_REGISTRY), "PassContext config key")
        out[key] = _check_value(_REGISTRY[key], value)
    return out


class Config(Mapping):
    """The read-only, validated config of a ``PassContext``.

    ``config[key]`` and ``config.get(key)`` give the value the user set, else
    the registered default; ``key in config`` is true only for keys the user
    set. Reading a key that is not registered raises ``ValueError`` (a typo in
    a pass must not read as "option off").
    """

    def __init__(self, values: Mapping | None = None):
        self._values = validate_config(values)

    def __getitem__(self, key: str) -> Any:
        if key in self._values:
            return self._values[key]
        return _registered(key).default

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """The value set for ``key``, else ``default`` if given, else the registered default."""
        entry = _registered(key)
        if key in self._values:
            return self._values[key]
        return entry.default if default is _MISSING else default

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Config({self._values!r})"


def _opt_level_check(value: int) -> str | None:
    return None if 0 <= value <= 3 else f"expects an int in 0..3, got {value}"


# ------------------------------------------------------------------ the table

register_config("tir.disable_vectorize", bool, False, "Turn vectorized loops into serial ones.")
register_config(
    "tir.enable_buffer_level_predication", bool, False,
    "Vectorize guarded loop bodies with predicated (masked) loads and stores.",
)
register_config(
    "tir.vectorize.if_conversion", bool, True,
    "Turn ifs on a vectorized loop's var into predicated stores and loads "
    "(IfConvertVectorLoops).",
)
register_config(
    "tir.vectorize.version_strides", bool, True,
    "Give vectorized loops with accesses A[i * s] (s a runtime value) a contiguous fast "
    "path under s == 1 and the general path otherwise (VersionSymbolicStrides).",
)
register_config(
    "tir.vectorize.while_search", bool, True,
    "Turn a while loop searching the first index where a condition fails "
    "(while i[0] < n and keep(i[0]): i[0] += 1) into a vectorized first match with an "
    "early exit, when that is exact (VectorizeWhileSearch).",
)
register_config(
    "tir.vectorize.narrow_integers", bool, True,
    "Compute integer arithmetic of vectorized loops in the narrowest integer type the "
    "analyzer proves exact, e.g. uint8 pixels in uint16 instead of int32 "
    "(NarrowIntegerArithmetic).",
)
register_config(
    "tir.vectorize.dot_instructions", bool, True,
    "Sum uint8 x int8 products into a vectorized reduction's accumulator with the CPU's "
    "byte dot-product instruction (vpdpbusd on AVX512-VNNI or AVX-VNNI targets; "
    "ByteDotAccumulation).",
)
register_config(
    "tir.vectorize.interchange", bool, True,
    "Move a vectorized loop inside the serial loop it holds when its vectors would stride "
    "across rows at every inner step and its iterations are independent "
    "(InterchangeVectorLoops).",
)
register_config(
    "tir.vectorize_remarks", bool, False,
    "Report, for every vectorized loop, what the vectorizer did and why.",
)
register_config(
    "tir.UnrollLoop", dict, {},
    "Options of the UnrollLoop pass.",
    subkeys={
        "auto_max_step": (int, 0, "Unroll serial loops whose total step count is at most this."),
        "auto_max_depth": (int, 8, "Only auto-unroll loop nests at most this deep."),
        "auto_max_extent": (int, 0, "Only auto-unroll loops of at most this extent (0: any)."),
        "explicit_unroll": (bool, True, "Unroll ForKind.UNROLLED loops in the IR itself."),
        "unroll_local_access": (bool, False, "Accepted for TVM compatibility; unused."),
    },
)
register_config(
    "tir.Simplify", dict, {},
    "Options of the Simplify pass (accepted as in TVM; the analyzer decides what it proves).",
    subkeys={
        "transitively_prove_inequalities": (bool, False, "Chain known inequalities."),
        "propagate_knowns_to_prove_conditional": (bool, False, "Use known facts in conditions."),
        "propagate_knowns_to_simplify_expressions": (bool, False, "Use known facts in values."),
        "convert_boolean_to_and_of_ors": (bool, False, "Normalize conditions to CNF."),
        "apply_constraints_to_boolean_branches": (bool, False, "Use one side of && in the other."),
    },
)
register_config(  # TVM's keys; codegen.build's pipeline runs the pass with partition_const_loop
    "tir.LoopPartition", dict, {},
    "Options of the LoopPartition pass (split loops where their likely conditions are settled).",
    subkeys={
        "partition_const_loop": (bool, False, "Also partition loops of constant bounds."),
        "no_unroll_loop_with_extent_one": (
            bool, False, "Keep a partitioned piece of one iteration as a loop."),
        "unroll_loop_with_partition_hint_no_interval": (
            bool, False, "Unroll a hinted loop whose conditions settle on no interval."),
    },
)
register_config(  # off (TVM: the predicate as written); codegen.build's pipeline turns it on
    "tir.lower_opaque_block.likely_predicate", bool, False,
    "Lower a block predicate (T.where, the guard of a split that does not divide) to "
    "if likely(...) per conjunct, so that LoopPartition splits the loops around it.",
)
register_config("codegen.llvm.fast_math", bool, False, "Let LLVM reassociate float arithmetic.")
register_config(  # TVM and clang (-ffp-contract=on) contract too; False is strict IEEE
    "codegen.llvm.fp_contract", bool, True,
    "Let LLVM fuse a float multiply and the add or subtract using it into one FMA "
    "(rounded once); False rounds every product and sum (bit-exact with the interpreter).",
)
register_config(
    "codegen.llvm.opt_level", int, 3, "LLVM optimization level, 0 to 3.", check=_opt_level_check
)
register_config(  # off: a vectorized float sum may reassociate (OpenMP's simd reduction)
    "tir.vectorize.ordered_reductions", bool, False,
    "Keep float sums and products of vectorized reductions in serial order (bit-exact, slower).",
)
register_config(  # off (TVM): only the last index may vary; codegen.build's pipeline turns it on
    "tir.vectorize.any_dim_access", bool, False,
    "Let the vectorizer widen an index in any dimension of a buffer (columns, transposes) "
    "and turn tir.if_then_else on the vectorized var into a Select of masked loads "
    "(padded reads).",
)
register_config(  # codegen/llvm/gather.py: GATHER_TABLE says which is faster on which CPU
    "codegen.gather", str, "auto",
    "How a gather or scatter with data-dependent lane offsets is emitted: 'auto' (the "
    "target's CPU decides), 'hardware' (llvm.masked.gather/scatter) or 'scalar' (one "
    "load or store per lane).",
    check=lambda v: None if v in ("auto", "hardware", "scalar")
    else f"expected 'auto', 'hardware' or 'scalar', got {v!r}",
)
register_config(  # a function's own attribute "tir.noalias" False also declares aliasing
    "tir.noalias", bool, True,
    "Mark buffer parameters noalias in generated code (False drops the attribute only; calls "
    "still refuse overlapping arrays unless the PrimFunc's attribute tir.noalias is False).",
)
register_config(  # TVM's default is False; tirlite defaults to safe
    "tir.instrument_bound_checkers", bool, True,
    "Check at run time the buffer accesses not proven in bounds (InstrumentBoundCheckers).",
)
