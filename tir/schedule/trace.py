"""Handles, traced instructions and the trace: printing, JSON, and replay on another schedule.

A schedule records each primitive call as an ``Instruction``
(``outputs = sch.name(*inputs, **attrs)``); a sampling instruction also keeps
its *decision* (the factors or the index it drew). ``Trace.as_json`` writes
the instructions as plain JSON::

    {"format": "tirlite.trace", "version": 1, "insts": [
        {"name": "get_block", "inputs": ["C"], "attrs": {}, "outputs": ["b0"]},
        {"name": "sample_perfect_tile", "inputs": [{"rv": "l1"}],
         "attrs": {"n": 2, "max_innermost_factor": 16}, "outputs": ["v4", "v5"],
         "decision": [8, 4]},
        ...]}

(values as in ``trace_json``). ``Trace.apply_to_schedule`` replays the
instructions on another schedule, normally a fresh one of the unscheduled
function: handles named in the trace map to the handles the replay creates,
buffers are found by name, and sampling instructions take their recorded
decision, so the replay reproduces the function exactly.
"""

from __future__ import annotations

from typing import Any

from ..buffer import Buffer
from ..expr import Let, PrimExpr, Var
from ..function import PrimFunc
from ..functor import post_order_visit, substitute
from .error import ScheduleError
from .index_map import IndexMap
from .trace_json import BufferRef, Decoder, Encoder, RVRef

FORMAT, VERSION = "tirlite.trace", 1

#: Instruction names a trace may hold (each is the Schedule method that replays it).
#: A new primitive that records itself adds its name here ("rfactor" is listed ahead
#: of the primitive, being written on its own branch: until then it replays as unknown).
INSTRUCTIONS = frozenset({
    "get_block", "get_loops", "get_child_blocks", "get_producers", "get_consumers",
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate", "unannotate",
    "compute_at", "reverse_compute_at", "compute_inline", "reverse_compute_inline",
    "cache_read", "cache_write", "transform_layout", "decompose_reduction", "rfactor",
    "tensorize", "sample_perfect_tile", "sample_categorical",
})
SAMPLING = frozenset({"sample_perfect_tile", "sample_categorical"})
# Instructions that return a list: one output prints as ``l0, = ...``.
_LIST_RESULTS = frozenset({"get_loops", "get_child_blocks", "get_producers", "get_consumers",
                           "split", "sample_perfect_tile"})


class BlockRV:
    """A handle to a block of a schedule (it follows the block by name)."""

    __slots__ = ("name", "rv_name")

    def __init__(self, name: str, rv_name: str):
        self.name, self.rv_name = name, rv_name

    def __repr__(self) -> str:
        return f"BlockRV({self.name!r})"


class LoopRV:
    """A handle to a loop of a schedule (it follows the loop by its loop var)."""

    __slots__ = ("var", "rv_name")

    def __init__(self, var: Var, rv_name: str):
        self.var, self.rv_name = var, rv_name

    def __repr__(self) -> str:
        return f"LoopRV({self.var.name})"


class ExprRV:
    """The trace's name for a sampled value (the sampling call returns the value itself)."""

    __slots__ = ("value", "rv_name")

    def __init__(self, value: Any, rv_name: str):
        self.value, self.rv_name = value, rv_name

    def __repr__(self) -> str:
        return f"ExprRV({self.rv_name}={self.value!r})"


class Instruction:
    """One traced primitive call: ``outputs = sch.name(*inputs, **attrs)``.

    ``decision`` is what a sampling instruction drew (None for the others).
    """

    __slots__ = ("name", "inputs", "attrs", "outputs", "decision")

    def __init__(self, name: str, inputs: tuple, attrs: dict, outputs: tuple,
                 decision: Any = None):
        self.name, self.inputs, self.attrs, self.outputs = name, inputs, attrs, outputs
        self.decision = decision

    def __str__(self) -> str:
        args = [_arg_text(a) for a in self.inputs]
        args += [f"{k}={_arg_text(v)}" for k, v in self.attrs.items()]
        if self.decision is not None:
            args.append(f"decision={_arg_text(self.decision)}")
        call = f"sch.{self.name}({', '.join(args)})"
        if not self.outputs:
            return call
        lhs = ", ".join(_arg_text(o) for o in self.outputs)
        comma = "," if len(self.outputs) == 1 and self.name in _LIST_RESULTS else ""
        return f"{lhs}{comma} = {call}"


def _arg_text(a: Any) -> str:
    if hasattr(a, "rv_name"):
        return a.rv_name
    if isinstance(a, list):
        return "[" + ", ".join(_arg_text(x) for x in a) + "]"
    if isinstance(a, tuple):
        return "(" + ", ".join(_arg_text(x) for x in a) + ("," if len(a) == 1 else "") + ")"
    if isinstance(a, (Buffer, BufferRef)):
        return repr(a.name)
    if isinstance(a, (PrimExpr, IndexMap)):
        return str(a)
    if callable(a) and getattr(a, "__name__", "") == "<lambda>":
        return "<lambda>"
    return repr(a)


class Trace:
    """The primitives applied so far; ``str(trace)`` is Python that replays them."""

    def __init__(self, insts: list[Instruction]):
        self.insts = insts

    def __len__(self) -> int:
        return len(self.insts)

    def __iter__(self):
        return iter(self.insts)

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.insts)

    __repr__ = __str__

    def show(self) -> None:
        """Print the trace (TVM's ``Trace.show``)."""
        print(self)

    # ------------------------------------------------------------ JSON

    def as_json(self) -> dict:
        """The trace as plain JSON values (``json.dumps`` writes it; see the module doc).

        Raises:
            ValueError: an instruction holds a value JSON cannot carry.
        """
        enc = Encoder()
        return {"format": FORMAT, "version": VERSION,
                "insts": [_inst_json(k, inst, enc) for k, inst in enumerate(self.insts)]}

    @staticmethod
    def from_json(obj: Any) -> Trace:
        """The trace ``as_json`` wrote (handles and buffers stay names until a replay).

        Raises:
            ValueError: ``obj`` is not a trace, or an instruction is unknown or malformed
            (the message names it).
        """
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ValueError(f"trace JSON: expected an object with \"format\": \"{FORMAT}\"")
        if obj.get("version") != VERSION or not isinstance(obj.get("insts"), list):
            raise ValueError(f"trace JSON: expected \"version\": {VERSION} and a list \"insts\", "
                             f"got version {obj.get('version')!r}")
        dec = Decoder()
        return Trace([_inst_from_json(k, x, dec) for k, x in enumerate(obj["insts"])])

    # ------------------------------------------------------------ replay

    def apply_to_schedule(self, sch: Any, remove_postproc: bool = False) -> None:
        """Replay every instruction on ``sch`` (normally a fresh schedule of the original function).

        Sampling instructions replay their decision. ``remove_postproc`` is
        TVM's; tirlite records no postprocessing instructions, so it changes
        nothing.

        Raises:
            ValueError: an instruction is unknown or uses a handle no earlier one made.
            ScheduleError: a primitive does not apply to ``sch``'s function (the
            message names the instruction).
        """
        table: dict[str, Any] = {}
        for k, inst in enumerate(self.insts):
            _replay(k, inst, sch, table)

    @staticmethod
    def apply_json_to_schedule(json_obj: Any, sch: Any) -> None:
        """Replay the trace ``json_obj`` (from ``as_json``) on ``sch`` (TVM's static method)."""
        Trace.from_json(json_obj).apply_to_schedule(sch)


# ---------------------------------------------------------------- JSON per instruction


def _inst_json(k: int, inst: Instruction, enc: Encoder) -> dict:
    try:
        out = {"name": inst.name,
               "inputs": [enc.value(a) for a in inst.inputs],
               "attrs": {key: enc.value(v) for key, v in inst.attrs.items()},
               "outputs": [o.rv_name for o in inst.outputs]}
        if inst.decision is not None:
            out["decision"] = enc.value(inst.decision)
    except ValueError as err:
        raise ValueError(f"Trace.as_json: instruction {k} ({inst.name}): {err}") from None
    return out


def _inst_from_json(k: int, obj: Any, dec: Decoder) -> Instruction:
    name = obj.get("name") if isinstance(obj, dict) else None
    where = f"trace JSON: instruction {k} ({name if isinstance(name, str) else '?'})"
    if not isinstance(obj, dict) or not isinstance(name, str):
        raise ValueError(f"{where}: expected an object with a string \"name\", got {obj!r}")
    if name not in INSTRUCTIONS:
        raise ValueError(f"{where}: unknown instruction {name!r}")
    extra = set(obj) - {"name", "inputs", "attrs", "outputs", "decision"}
    inputs, attrs, outputs = obj.get("inputs"), obj.get("attrs"), obj.get("outputs")
    if extra or not isinstance(inputs, list) or not isinstance(attrs, dict) \
            or not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        raise ValueError(f"{where}: expected \"inputs\" (a list), \"attrs\" (an object), "
                         f"\"outputs\" (a list of names) and, for sampling, \"decision\"; "
                         f"got {obj!r}")
    if "decision" in obj and name not in SAMPLING:
        raise ValueError(f"{where}: only sampling instructions have a decision")
    try:
        return Instruction(name, tuple(dec.value(a) for a in inputs),
                           {key: dec.value(v) for key, v in attrs.items()},
                           tuple(RVRef(o) for o in outputs), dec.value(obj.get("decision")))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


# ---------------------------------------------------------------- replay


def _replay(k: int, inst: Instruction, sch: Any, table: dict[str, Any]) -> None:
    """Call ``sch.<inst.name>`` on the resolved arguments; name its outputs as recorded."""
    where = f"replaying instruction {k} ({inst})"
    method = getattr(sch, inst.name, None) if inst.name in INSTRUCTIONS else None
    if method is None:
        raise ValueError(f"{where}: unknown instruction {inst.name!r}")
    args = [_resolve(a, sch, table, where) for a in inst.inputs]
    kwargs = {key: _resolve(v, sch, table, where) for key, v in inst.attrs.items()}
    if inst.decision is not None:
        kwargs["decision"] = inst.decision
    before = len(sch.trace)
    try:
        method(*args, **kwargs)
    except ScheduleError as err:
        raise ScheduleError(f"{where}: {err}") from err
    except TypeError as err:  # arguments of the wrong number or kind: a malformed trace
        raise ValueError(f"{where}: {err}") from err
    new = sch.trace.insts[before:]
    if len(new) != 1 or new[0].name != inst.name or len(new[0].outputs) != len(inst.outputs):
        got = "; ".join(str(i) for i in new) or "nothing"
        raise ValueError(f"{where}: the replay recorded {got}")
    for old, out in zip(inst.outputs, new[0].outputs):
        table[old.rv_name] = out


def _resolve(v: Any, sch: Any, table: dict[str, Any], where: str) -> Any:
    """An argument of a recorded call, as the schedule being driven knows it."""
    if hasattr(v, "rv_name"):
        if v.rv_name not in table:
            raise ValueError(f"{where}: {v.rv_name} is not made by an earlier instruction")
        return table[v.rv_name]
    if isinstance(v, list):
        return [_resolve(x, sch, table, where) for x in v]
    if isinstance(v, tuple):
        return tuple(_resolve(x, sch, table, where) for x in v)
    if isinstance(v, dict):
        return {k: _resolve(x, sch, table, where) for k, x in v.items()}
    if isinstance(v, (Buffer, BufferRef)):
        from .primitives.layout import buffer_named

        buf = buffer_named(sch.func, v.name)
        if buf is None:
            raise ValueError(f"{where}: the function has no buffer (or several) named {v.name!r}")
        return buf
    if isinstance(v, IndexMap):
        return IndexMap(v.params, [_rebind(e, sch.func, v.params) for e in v.results])
    if isinstance(v, PrimExpr):
        return _rebind(v, sch.func, ())
    return v


def _rebind(e: PrimExpr, func: PrimFunc, bound: tuple) -> PrimExpr:
    """``e`` with its free variables replaced by the function's variables of the same name.

    A trace read from JSON has fresh variables where the recorded function had
    its parameters and shape variables; the replayed function has its own.
    """
    known = {p.name: p for p in func.params}
    for buf in func.buffer_map.values():
        for dim in buf.shape:
            post_order_visit(dim, lambda n: known.setdefault(n.name, n)
                             if isinstance(n, Var) else None)
    skip = set(bound)
    post_order_visit(e, lambda n: skip.add(n.var) if isinstance(n, Let) else None)
    return substitute(e, lambda v: None if v in skip else known.get(v.name))
