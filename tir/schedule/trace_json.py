"""Instruction arguments as plain JSON values and back (the value encoding of a trace's JSON).

Numbers, strings, booleans, None and lists stay as they are; everything else
is an object with one tag key:

- ``{"rv": "b0"}``: a block, loop or sampled value handle, by its trace name;
- ``{"tuple": [...]}``: a tuple (``("read", 0)`` must not come back as a list);
- ``{"dict": [[key, value], ...]}``: a dict, whose keys need not be strings;
- ``{"float": "nan" | "inf" | "-inf"}``: a float JSON has no literal for;
- ``{"buffer": "A_global"}``: a buffer, by name;
- ``{"expr": E}``: a ``PrimExpr``;
- ``{"index_map": {"params": [V, ...], "results": [E, ...]}}``: an ``IndexMap``.

An expression ``E`` is ``{"node": class name, field: value, ...}`` over its
constructor fields (fields holding expressions nest). A variable ``V`` is
``{"node": "Var", "id": k, "name": ..., "dtype": ..., "type_annotation": ...}``
where ``k`` numbers the variables of one trace in order of first appearance:
a variable used twice decodes to one ``Var``. Decoding yields ``RVRef`` and
``BufferRef`` placeholders for handles and buffers; the replay resolves them
against the schedule it drives.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import expr as _expr
from .. import expr_vector as _expr_vector
from ..buffer import Buffer
from ..expr import PrimExpr, Var
from ..node import init_fields
from .index_map import IndexMap

_ABSTRACT = ("PrimExpr", "BinaryOpNode", "CmpOpNode", "Any")
# The expression classes a trace may hold, by name (one namespace: names are unique).
EXPR_CLASSES: dict[str, type] = {
    name: cls
    for module in (_expr, _expr_vector)
    for name, cls in vars(module).items()
    if isinstance(cls, type) and issubclass(cls, PrimExpr) and cls.__module__ == module.__name__
    and name not in _ABSTRACT
}
_TAGS = ("rv", "tuple", "dict", "float", "buffer", "expr", "index_map")


class RVRef:
    """A handle named in a decoded trace; the replay maps it to the new schedule's handle."""

    __slots__ = ("rv_name",)

    def __init__(self, rv_name: str):
        self.rv_name = rv_name

    def __repr__(self) -> str:
        return f"RVRef({self.rv_name!r})"


class BufferRef:
    """A buffer named in a decoded trace; the replay finds it in the function by name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"BufferRef({self.name!r})"


def _scalar(v: Any) -> Any:
    """A Python or NumPy scalar (or None) as a JSON scalar."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    return _float(float(v))


class Encoder:
    """Python values to JSON values; one encoder per trace, so variables number consistently."""

    def __init__(self) -> None:
        self._var_ids: dict[Var, int] = {}  # Var hashes by identity

    def value(self, v: Any) -> Any:
        """The JSON value of an instruction input, attribute or decision."""
        if v is None or isinstance(v, (bool, str, int, float, np.integer, np.floating)):
            return _scalar(v)
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, dict):
            return {"dict": [[self.value(k), self.value(x)] for k, x in v.items()]}
        return self._object(v)

    def _object(self, v: Any) -> Any:
        """The tagged JSON object of a handle, a buffer, an index map or an expression."""
        if hasattr(v, "rv_name"):
            return {"rv": v.rv_name}
        if isinstance(v, (Buffer, BufferRef)):
            return {"buffer": v.name}
        if isinstance(v, IndexMap):
            return {"index_map": {"params": [self.expr(p) for p in v.params],
                                  "results": [self.expr(e) for e in v.results]}}
        if isinstance(v, PrimExpr):
            return {"expr": self.expr(v)}
        raise ValueError(f"cannot write a {type(v).__name__} ({v!r}) as JSON")

    def expr(self, e: PrimExpr) -> dict:
        """The JSON object of an expression."""
        name = type(e).__name__
        if EXPR_CLASSES.get(name) is not type(e):
            raise ValueError(f"cannot write a {name} expression as JSON")
        if isinstance(e, Var):
            vid = self._var_ids.setdefault(e, len(self._var_ids))
            return {"node": name, "id": vid, "name": e.name, "dtype": e.dtype,
                    "type_annotation": e.type_annotation}
        return {"node": name, **{f: self._field(getattr(e, f)) for f in init_fields(type(e))}}

    def _field(self, v: Any) -> Any:
        if isinstance(v, PrimExpr):
            return self.expr(v)
        if isinstance(v, (tuple, list)):
            return [self._field(x) for x in v]
        if isinstance(v, float):
            return _float(v)
        if v is None or isinstance(v, (bool, int, str)):
            return v
        raise ValueError(f"cannot write an expression holding a {type(v).__name__} as JSON")


class Decoder:
    """JSON values back to Python values; one decoder per trace (variables by id)."""

    def __init__(self) -> None:
        self._vars: dict[int, Var] = {}

    def value(self, obj: Any) -> Any:
        """The Python value of a JSON value written by ``Encoder.value``."""
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        if isinstance(obj, list):
            return [self.value(x) for x in obj]
        if not isinstance(obj, dict) or len(obj) != 1 or next(iter(obj)) not in _TAGS:
            raise ValueError(f"not a value of a trace: {obj!r} (a tagged object has one key "
                             f"of {', '.join(_TAGS)})")
        tag, body = next(iter(obj.items()))
        return getattr(self, "_" + tag)(body)

    def expr(self, obj: Any) -> PrimExpr:
        """The expression of a JSON object written by ``Encoder.expr``."""
        if not isinstance(obj, dict) or not isinstance(obj.get("node"), str):
            raise ValueError(f"not an expression: {obj!r}")
        cls = EXPR_CLASSES.get(obj["node"])
        if cls is None:
            raise ValueError(f"unknown expression node {obj['node']!r}")
        if issubclass(cls, Var):
            return self._var(cls, obj)
        fields = init_fields(cls)
        if set(obj) != {"node", *fields}:
            raise ValueError(f"a {cls.__name__} needs the fields {', '.join(fields)}, got {obj!r}")
        try:
            return cls(**{f: self._field(obj[f]) for f in fields})
        except (TypeError, ValueError) as err:
            raise ValueError(f"malformed {cls.__name__}: {err}") from None

    def _var(self, cls: type, obj: dict) -> Var:
        vid = obj.get("id")
        if not isinstance(vid, int) or isinstance(vid, bool):
            raise ValueError(f"a variable needs an integer id, got {obj!r}")
        if vid not in self._vars:
            try:
                self._vars[vid] = cls(obj.get("name"), obj.get("dtype"), obj.get("type_annotation"))
            except (TypeError, ValueError) as err:
                raise ValueError(f"malformed variable {obj!r}: {err}") from None
        return self._vars[vid]

    def _field(self, obj: Any) -> Any:
        if isinstance(obj, dict) and "float" in obj:
            return self._float(obj["float"])
        if isinstance(obj, dict):
            return self.expr(obj)
        if isinstance(obj, list):
            return tuple(self._field(x) for x in obj)
        return obj

    # One method per tag of Decoder.value.

    def _rv(self, body: Any) -> RVRef:
        if not isinstance(body, str):
            raise ValueError(f"a handle is named by a string, got {body!r}")
        return RVRef(body)

    def _tuple(self, body: Any) -> tuple:
        return tuple(self.value(x) for x in _list(body, "tuple"))

    def _dict(self, body: Any) -> dict:
        pairs = _list(body, "dict")
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError(f"a dict is a list of [key, value] pairs, got {body!r}")
        return {self.value(k): self.value(v) for k, v in pairs}

    def _float(self, body: Any) -> float:
        if body not in ("nan", "inf", "-inf"):
            raise ValueError(f"a tagged float is 'nan', 'inf' or '-inf', got {body!r}")
        return float(body)

    def _buffer(self, body: Any) -> BufferRef:
        if not isinstance(body, str):
            raise ValueError(f"a buffer is named by a string, got {body!r}")
        return BufferRef(body)

    def _expr(self, body: Any) -> PrimExpr:
        return self.expr(body)

    def _index_map(self, body: Any) -> IndexMap:
        if not isinstance(body, dict) or set(body) != {"params", "results"}:
            raise ValueError(f"an index map has params and results, got {body!r}")
        params = [self.expr(p) for p in _list(body["params"], "index map's params")]
        if not all(isinstance(p, Var) for p in params):
            raise ValueError("an index map's params must be variables")
        return IndexMap(params, [self.expr(e) for e in _list(body["results"], "index map")])


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"float": str(x)}


def _list(body: Any, what: str) -> list:
    if not isinstance(body, list):
        raise ValueError(f"a {what} holds a list, got {body!r}")
    return body
