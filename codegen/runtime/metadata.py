"""What a compiled library records about its functions, so it can be loaded back.

A library exported by ``Module.export_library`` carries a JSON string (the
exported symbol ``tirlite_metadata``) describing, per function, its symbol
and its parameters: scalars with their dtypes, buffers with dtype, shape,
strides and elem_offset (symbolic ones as shared variables) and whether the
function writes to them, whether its params may alias (``may_alias``, absent
in libraries written before it: then they may not), plus the module's
assertion messages. From it,
``signature_func`` rebuilds a body-less ``PrimFunc`` with the same
parameters, which is all argument checking (codegen/runtime/args.py) needs.
"""

from __future__ import annotations

import json
from typing import Any

import tir
from tir.buffer import Buffer
from tir.expr import BinaryOpNode, Cast, IntImm, SizeVar, Var
from tir.function import NOALIAS, PrimFunc
from tir.functor import StmtVisitor
from tir.stmt import BufferStore, Evaluate, SeqStmt

METADATA_SYMBOL = "tirlite_metadata"
VERSION = 1


class _Encoder:
    """Encodes the vars and shape expressions of one function, numbering vars."""

    def __init__(self):
        self.vars: list[dict] = []
        self._ids: dict[int, int] = {}

    def var(self, v: Var) -> int:
        if id(v) not in self._ids:
            self._ids[id(v)] = len(self.vars)
            self.vars.append({"name": v.name, "dtype": v.dtype, "size": isinstance(v, SizeVar)})
        return self._ids[id(v)]

    def expr(self, e: Any) -> Any:
        if isinstance(e, IntImm):
            return {"int": e.value, "dtype": e.dtype}
        if isinstance(e, Var):
            return {"var": self.var(e)}
        if isinstance(e, Cast):
            return {"cast": e.dtype, "value": self.expr(e.value)}
        if isinstance(e, BinaryOpNode):
            return {"op": type(e).__name__, "a": self.expr(e.a), "b": self.expr(e.b)}
        raise ValueError(f"cannot record the shape expression {e} in a library")


class _StoreFinder(StmtVisitor):
    """The ids of the data vars stored to (statements only: no store hides in an expression,
    and the expressions are most of an unrolled body)."""

    def __init__(self) -> None:
        self.stored: set[int] = set()

    def visit_buffer_store(self, stmt: BufferStore) -> None:
        self.stored.add(id(stmt.buffer.data))


def _stored_buffers(func: PrimFunc) -> set[int]:
    finder = _StoreFinder()
    finder(func.body)
    return finder.stored


def describe(func: PrimFunc, symbol: str) -> dict:
    """The JSON-ready description of ``func``'s calling interface."""
    enc, stored, params = _Encoder(), _stored_buffers(func), []
    for p in func.params:
        entry: dict[str, Any] = {"var": enc.var(p)}
        buf = func.buffer_map.get(p)
        if buf is not None:
            entry["buffer"] = {
                "name": buf.name, "dtype": buf.dtype, "data": enc.var(buf.data),
                "shape": [enc.expr(s) for s in buf.shape],
                "strides": [enc.expr(s) for s in buf.strides],
                "elem_offset": enc.expr(buf.elem_offset),
                "stored": id(buf.data) in stored,
            }
        params.append(entry)
    desc = {"symbol": symbol, "params": params, "vars": enc.vars}
    if func.params_may_alias:  # calls skip the overlap checks (codegen/runtime/args.py)
        desc["may_alias"] = True
    return desc


def dumps(target: str, functions: dict[str, dict], messages: list[str]) -> str:
    """The metadata string of a module."""
    return json.dumps({"version": VERSION, "target": target, "functions": functions,
                       "messages": messages})


def loads(text: str) -> dict:
    """Parse a metadata string, checking its version."""
    data = json.loads(text)
    if data.get("version") != VERSION:
        raise ValueError(f"library metadata version {data.get('version')} is not {VERSION}")
    return data


class _Decoder:
    def __init__(self, var_table: list[dict]):
        self.vars = [
            (SizeVar if v["size"] else Var)(v["name"], v["dtype"]) for v in var_table
        ]

    def expr(self, d: dict) -> Any:
        if "int" in d:
            return IntImm(d["dtype"], d["int"])
        if "var" in d:
            return self.vars[d["var"]]
        if "cast" in d:
            return Cast(d["cast"], self.expr(d["value"]))
        return getattr(tir, d["op"])(self.expr(d["a"]), self.expr(d["b"]))


def signature_func(desc: dict) -> PrimFunc:
    """A ``PrimFunc`` with the described params and buffers (its body only marks stores)."""
    dec = _Decoder(desc["vars"])
    params, buffer_map, stores = [], {}, []
    for entry in desc["params"]:
        var = dec.vars[entry["var"]]
        params.append(var)
        b = entry.get("buffer")
        if b is None:
            continue
        buf = Buffer(dec.vars[b["data"]], b["dtype"], [dec.expr(s) for s in b["shape"]],
                     [dec.expr(s) for s in b["strides"]], dec.expr(b["elem_offset"]), b["name"])
        buffer_map[var] = buf
        if b["stored"]:
            zero = tir.const(0, buf.dtype)
            stores.append(BufferStore(buf, zero, [IntImm("int32", 0)] * len(buf.shape)))
    body = SeqStmt.flatten(stores) if stores else Evaluate(0)
    attrs = {NOALIAS: False} if desc.get("may_alias") else None
    return PrimFunc(params, body, buffer_map=buffer_map, attrs=attrs)
