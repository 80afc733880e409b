"""Structural equality and hashing of TIR: equal up to the names of bound variables.

Two programs are structurally equal when they have the same node classes and
data field values, and their variables correspond one to one:

- a field marked ``binds=True`` (``For.loop_var``, ``Let.var``,
  ``LetStmt.var``, ``Allocate.buffer_var``) defines a pairing of the left
  variable with the right one; later uses must follow it;
- ``PrimFunc`` params are paired by position, and the ``buffer_map`` buffers
  param by param (their data vars and new shape vars are defined there);
- a free variable (defined nowhere) equals only itself, unless
  ``map_free_vars=True``, which pairs free variables on first meeting;
- buffers pair one to one, compared field by field (their names are ignored,
  like variable names).

``structural_hash`` walks in the same order and hashes a variable by its dtype
and the order in which it was defined or first met, so equal programs hash
equal. Both walk in pure Python under ``deep_recursion()``: deep expressions
recurse, sequences are iterated.

>>> from tir import Var
>>> x, y = Var("x"), Var("y")
>>> structural_equal(x + 1, y + 1), structural_equal(x + 1, y + 1, map_free_vars=True)
(False, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from .analysis.var_use import used_vars
from .buffer import Buffer
from .expr import Var
from .function import IRModule, PrimFunc
from .functor import deep_recursion
from .node import BUFFER, BUFFERS, DATA, EXPR, STMT, Node
from .op import const

_PLAIN = frozenset((str, int, bool, type(None)))
# Fields that name things for people only; they take no part in the structure.
_IGNORED = {"name"}
_PLANS: dict[type, tuple] = {}
_ROLES = ((Var, "var"), (Buffer, "buffer"), (PrimFunc, "func"), (IRModule, "module"))


def _plan(cls: type) -> tuple:
    """``(class token, ((field, kind, binds), ...), role)`` for a node class, cached.

    ``role`` names the rule for classes that are not compared field by field
    (variables, buffers, functions, modules), else None.
    """
    plan = _PLANS.get(cls)
    if plan is None:
        role = next((r for base, r in _ROLES if issubclass(cls, base)), None)
        if role is None and not attrs.has(cls):
            role = "opaque"  # no fields to walk: equal only to itself
        fields = []
        for f in attrs.fields(cls) if attrs.has(cls) else ():
            if f.name in _IGNORED and role in ("var", "buffer"):
                continue
            if f.metadata.get("structural", True) is False:  # identity, not structure
                continue
            fields.append((f.name, f.metadata.get("kind", DATA), f.metadata.get("binds", False)))
        token = hash(f"{cls.__module__}.{cls.__qualname__}")
        plan = _PLANS[cls] = (token, tuple(fields), role)
    return plan


def _key_order(key: Any) -> tuple[str, str]:
    return type(key).__name__, str(key)


def _sorted_keys(mapping: Mapping) -> list:
    """Mapping keys in a deterministic order, so both sides walk values alike."""
    try:
        return sorted(mapping, key=_key_order)
    except TypeError:
        return list(mapping)


# ---------------------------------------------------------------- equality


class _Equal:
    """One comparison: the variable and buffer pairings made so far, and the mismatch."""

    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lvars: dict[int, Var] = {}  # id(left var) -> right var
        self.rvars: dict[int, Var] = {}  # id(right var) -> left var
        self.lbufs: dict[int, Buffer] = {}
        self.rbufs: dict[int, Buffer] = {}
        # (lhs step, rhs step), innermost first, filled while unwinding a mismatch
        self.path: list[tuple[Any, Any]] = []
        self.mismatch: tuple[Any, Any, str] | None = None
        self.field: str | None = None  # the data field that differs, when the mismatch is one

    def at(self, step: Any, rhs_step: Any = None) -> bool:
        """Record one step of the mismatch's path (the same on both sides unless given)."""
        self.path.append((step, step if rhs_step is None else rhs_step))
        return False

    def fail(self, lhs: Any, rhs: Any, reason: str) -> bool:
        if self.mismatch is None:
            self.mismatch = (lhs, rhs, reason)
        return False

    def node(self, lhs: Any, rhs: Any, by_fields: bool = False) -> bool:
        """Compare two nodes: by their role's rule, or field by field in declaration order."""
        cls = type(lhs)
        if cls is not type(rhs):
            return self.fail(lhs, rhs, f"node types differ: {cls.__name__} vs {type(rhs).__name__}")
        _, plan, role = _PLANS.get(cls) or _plan(cls)
        if role is not None and not by_fields:
            return _EQUAL_ROLES[role](self, lhs, rhs)
        for name, kind, binds in plan:
            a = getattr(lhs, name)
            b = getattr(rhs, name)
            if kind is not DATA:
                if not self.child(kind, a, b, binds, name):
                    return self.at(name)
            elif a is b or type(a) is type(b) and type(a) in _PLAIN and a == b:
                continue  # the common case, kept inline: this runs for every field
            elif not self.data_field(lhs, rhs, name, a, b):
                return False
        return True

    def child(self, kind: str, a: Any, b: Any, binds: bool, name: str) -> bool:
        """Compare the children in a field of ``kind`` (tir.node's EXPR, STMTS, BUFFER, ...)."""
        if kind is EXPR or kind is STMT:
            if a is None or b is None:
                return a is b or self.fail(a, b, "one side is missing")
            return self.var_def(a, b) if binds else self.node(a, b)
        if kind is BUFFER:
            return self.buffer(a, b)
        if kind is BUFFERS:
            return self.items_with(a, b, self.buffer_def if binds else self.buffer, name)
        return self.items(a, b)  # EXPRS, STMTS, NODES

    def data_field(self, lhs: Any, rhs: Any, name: str, a: Any, b: Any) -> bool:
        """Data field ``name`` of ``lhs`` and ``rhs`` (``a`` and ``b``), not identical."""
        if isinstance(a, _STRUCTURED) or isinstance(b, _STRUCTURED):
            return self.data(a, b) or self.at(name)
        if plain_equal(a, b):
            return True
        # report the node, which prints better than the bare values
        if self.mismatch is None:
            self.field = name
        return self.fail(lhs, rhs, f"{name} differs: {a!r} vs {b!r}")

    def items(self, lhs: tuple, rhs: tuple) -> bool:
        if len(lhs) != len(rhs):
            return self.fail(lhs, rhs, f"lengths differ: {len(lhs)} vs {len(rhs)}")
        node = self.node
        for i in range(len(lhs)):
            if not node(lhs[i], rhs[i]):
                return self.at(i)
        return True

    def data(self, lhs: Any, rhs: Any) -> bool:
        """Plain field values: nodes structurally, mappings as dicts, others with ``==``."""
        if isinstance(lhs, Node) or isinstance(rhs, Node):
            if isinstance(lhs, Buffer) and isinstance(rhs, Buffer):
                return self.buffer(lhs, rhs)
            return self.node(lhs, rhs)
        if isinstance(lhs, Mapping) and isinstance(rhs, Mapping):
            return self.mapping(lhs, rhs)
        if isinstance(lhs, (list, tuple)) and isinstance(rhs, (list, tuple)):
            return self.data_items(lhs, rhs)
        return plain_equal(lhs, rhs) or self.fail(lhs, rhs, "values differ")

    def mapping(self, lhs: Mapping, rhs: Mapping) -> bool:
        if set(lhs) != set(rhs):
            return self.fail(dict(lhs), dict(rhs), "keys differ")
        for key in _sorted_keys(lhs):
            if not self.data(lhs[key], rhs[key]):
                return self.at((key,))
        return True

    def data_items(self, lhs: Any, rhs: Any) -> bool:
        if len(lhs) != len(rhs):
            return self.fail(lhs, rhs, f"lengths differ: {len(lhs)} vs {len(rhs)}")
        for i, (a, b) in enumerate(zip(lhs, rhs)):
            if not self.data(a, b):
                return self.at(i)
        return True

    # ------------------------------------------------------------ variables

    def var_kind(self, lhs: Var, rhs: Any) -> bool:
        """Same class, dtype and type annotation (names do not matter)."""
        if type(lhs) is not type(rhs):
            return self.fail(lhs, rhs, f"node types differ: {type(lhs).__name__} vs "
                             f"{type(rhs).__name__}")
        if lhs.dtype != rhs.dtype:
            return self.fail(lhs, rhs, f"variable dtypes differ: {lhs.dtype} vs {rhs.dtype}")
        if lhs.type_annotation != rhs.type_annotation:
            return self.fail(lhs, rhs, "variable type annotations differ: "
                             f"{lhs.type_annotation} vs {rhs.type_annotation}")
        return True

    def var_def(self, lhs: Var, rhs: Var) -> bool:
        """A binding site: pair the two variables from here on."""
        if not self.var_kind(lhs, rhs):
            return False
        self.lvars[id(lhs)] = rhs
        self.rvars[id(rhs)] = lhs
        return True

    def var_use(self, lhs: Var, rhs: Var) -> bool:
        """A use must follow the pairing; free variables are identical or newly paired."""
        if not self.var_kind(lhs, rhs):
            return False
        paired = self.lvars.get(id(lhs))
        if paired is not None:
            if paired is rhs and self.rvars.get(id(rhs)) is lhs:
                return True
            return self.fail(lhs, rhs, f"variable {lhs.name} is paired with {paired.name} "
                             f"where {rhs.name} is used")
        if id(rhs) in self.rvars:
            return self.fail(lhs, rhs, f"variable {rhs.name} is already paired with another")
        if self.map_free_vars:
            return self.var_def(lhs, rhs)
        return lhs is rhs or self.fail(lhs, rhs, f"free variables {lhs.name} and {rhs.name} "
                                       "differ (pass map_free_vars=True to pair them)")

    # ------------------------------------------------------------ buffers and functions

    def buffer(self, lhs: Buffer, rhs: Buffer) -> bool:
        """Buffers pair one to one; a first meeting compares their fields."""
        paired = self.lbufs.get(id(lhs))
        if paired is not None:
            return paired is rhs or self.fail(lhs, rhs, f"buffer {lhs.name} is paired with "
                                              f"another buffer ({paired.name})")
        if id(rhs) in self.rbufs:
            return self.fail(lhs, rhs, f"buffer {rhs.name} is already paired with another")
        if not self.node(lhs, rhs, by_fields=True):
            return False
        self.lbufs[id(lhs)] = rhs
        self.rbufs[id(rhs)] = lhs
        return True

    def buffer_def(self, lhs: Buffer, rhs: Buffer) -> bool:
        """A ``buffer_map`` entry defines its data var and the new vars of its shape."""
        if not self.var_def(lhs.data, rhs.data):
            return self.at("data")
        for name in ("shape", "strides"):
            a, b = getattr(lhs, name), getattr(rhs, name)
            if len(a) == len(b) and not self.define_new_vars(a, b):
                return self.at(name)
        if not self.define_new_vars((lhs.elem_offset,), (rhs.elem_offset,)):
            return self.at("elem_offset")
        return self.buffer(lhs, rhs)

    def define_new_vars(self, lhs: tuple, rhs: tuple) -> bool:
        """Pair the vars a buffer definition's shape, strides and offset use for the first
        time, in order of appearance: ``(w + 2,)`` defines ``w`` as ``(w,)`` does (TVM's
        ``DefEqual`` maps free vars below a definition point)."""
        for i, (a, b) in enumerate(zip(lhs, rhs)):
            left, right = used_vars(a), used_vars(b)
            if len(left) != len(right):
                continue  # the shapes differ: comparing them says where
            for va, vb in zip(left, right):
                fresh = id(va) not in self.lvars and id(vb) not in self.rvars
                if fresh and not self.var_def(va, vb):
                    return self.at(i)
        return True

    def prim_func(self, lhs: PrimFunc, rhs: PrimFunc) -> bool:
        """Params by position, then their buffers, body, return type and attributes."""
        if not self.items_with(lhs.params, rhs.params, self.var_def, "params"):
            return False
        for i, (a, b) in enumerate(zip(lhs.params, rhs.params)):
            abuf, bbuf = lhs.buffer_map.get(a), rhs.buffer_map.get(b)
            if abuf is None and bbuf is None:
                continue
            if abuf is None or bbuf is None:
                ok = self.fail(abuf, bbuf, "only one side has a buffer for this param")
            else:
                ok = self.buffer_def(abuf, bbuf)
            if not ok:
                self.at((a,), (b,))
                return self.at("buffer_map")
        for name, compare in (("body", self.node), ("ret_type", self.data), ("attrs", self.data)):
            if not compare(getattr(lhs, name), getattr(rhs, name)):
                return self.at(name)
        return True

    def items_with(self, lhs: tuple, rhs: tuple, compare: Any, name: str) -> bool:
        if len(lhs) != len(rhs):
            self.at(name)
            return self.fail(lhs, rhs, f"lengths differ: {len(lhs)} vs {len(rhs)}")
        for i in range(len(lhs)):
            if not compare(lhs[i], rhs[i]):
                self.at(i)
                return self.at(name)
        return True

    def module(self, lhs: IRModule, rhs: IRModule) -> bool:
        """The same function names, each function equal, and equal attributes."""
        if sorted(lhs.functions) != sorted(rhs.functions):
            return self.fail(sorted(lhs.functions), sorted(rhs.functions),
                             "function names differ")
        for name in sorted(lhs.functions):
            if not self.prim_func(lhs.functions[name], rhs.functions[name]):
                self.at((name,))
                return self.at("functions")
        if not self.data(lhs.attrs, rhs.attrs):
            return self.at("attrs")
        return True

    def opaque(self, lhs: Any, rhs: Any) -> bool:
        return lhs is rhs or self.fail(lhs, rhs, f"{type(lhs).__name__} nodes are compared "
                                       "by identity and these differ")


_EQUAL_ROLES = {"var": _Equal.var_use, "buffer": _Equal.buffer, "func": _Equal.prim_func,
                "module": _Equal.module, "opaque": _Equal.opaque}


_STRUCTURED = (Node, Mapping, list, tuple)


def plain_equal(a: Any, b: Any) -> bool:
    """``a == b`` for plain values; floats alike bit for bit (NaN equals NaN, -0.0 not 0.0)."""
    if isinstance(a, float) and isinstance(b, float):
        if a == b:
            return a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b)
        return math.isnan(a) and math.isnan(b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # for example NumPy arrays
        return False


# ---------------------------------------------------------------- hashing

_VAR_DEF = hash("tir.structural.var_def")
_VAR_USE = hash("tir.structural.var_use")
_BUF_REF = hash("tir.structural.buffer_ref")
_NAN = hash("tir.structural.nan")


class _Hasher:
    """One hash walk: the order in which variables and buffers were met."""

    def __init__(self):
        self.vars: dict[int, int] = {}  # id(var) -> order of definition or first meeting
        self.bufs: dict[int, int] = {}
        self.count = 0

    def node(self, node: Any, by_fields: bool = False) -> int:
        """Hash a node: by its role's rule, or from its fields in declaration order."""
        cls = type(node)
        token, plan, role = _PLANS.get(cls) or _plan(cls)
        if role is not None and not by_fields:
            return _HASH_ROLES[role](self, node)
        parts = [token]
        for name, kind, binds in plan:
            v = getattr(node, name)
            if kind is not DATA:
                self.child(parts, kind, v, binds)
            else:
                parts.append(v if type(v) in _PLAIN else self.data(v))
        return hash(tuple(parts))

    def child(self, parts: list, kind: str, v: Any, binds: bool) -> None:
        """Append the hashes of the children in a field of ``kind`` to ``parts``."""
        if kind is EXPR or kind is STMT:
            parts.append(None if v is None else self.var_def(v) if binds else self.node(v))
        elif kind is BUFFER:
            parts.append(self.buffer(v))
        elif kind is BUFFERS:
            parts.append(len(v))
            parts += [self.buffer_def(item) if binds else self.buffer(item) for item in v]
        else:  # EXPRS, STMTS, NODES
            parts.append(len(v))
            parts += [self.node(item) for item in v]

    def data(self, value: Any) -> int:
        if isinstance(value, Node):
            return self.buffer(value) if isinstance(value, Buffer) else self.node(value)
        if isinstance(value, Mapping):
            return hash(tuple([(hash(k), self.data(value[k])) for k in _sorted_keys(value)]))
        if isinstance(value, (list, tuple)):
            return hash(tuple([self.data(v) for v in value]))
        if isinstance(value, float):
            return _NAN if math.isnan(value) else hash(value)
        try:
            return hash(value)
        except TypeError:  # unhashable but comparable: fall back on its type
            return hash(type(value).__qualname__)

    def var_def(self, var: Var) -> int:
        self.vars[id(var)] = self.count
        self.count += 1
        return hash((_VAR_DEF, _plan(type(var))[0], var.dtype, var.type_annotation))

    def var_use(self, var: Var) -> int:
        order = self.vars.get(id(var))
        if order is None:  # a free variable: numbered where first met
            order = self.vars[id(var)] = self.count
            self.count += 1
        return hash((_VAR_USE, _plan(type(var))[0], var.dtype, var.type_annotation, order))

    def buffer(self, buf: Buffer) -> int:
        order = self.bufs.get(id(buf))
        if order is not None:
            return hash((_BUF_REF, order))
        content = self.node(buf, by_fields=True)
        self.bufs[id(buf)] = len(self.bufs)
        return content

    def buffer_def(self, buf: Buffer) -> int:
        parts = [self.var_def(buf.data)]
        for e in buf.shape + buf.strides + (buf.elem_offset,):
            if isinstance(e, Var) and id(e) not in self.vars:
                parts.append(self.var_def(e))
        parts.append(self.buffer(buf))
        return hash(tuple(parts))

    def prim_func(self, func: PrimFunc) -> int:
        parts = [_plan(PrimFunc)[0], len(func.params)]
        parts += [self.var_def(p) for p in func.params]
        for p in func.params:
            buf = func.buffer_map.get(p)
            parts.append(None if buf is None else self.buffer_def(buf))
        parts += [self.node(func.body), self.data(func.ret_type), self.data(func.attrs)]
        return hash(tuple(parts))

    def module(self, mod: IRModule) -> int:
        parts = [hash("IRModule")]
        for name in sorted(mod.functions):
            parts += [hash(name), self.prim_func(mod.functions[name])]
        parts.append(self.data(mod.attrs))
        return hash(tuple(parts))

    def opaque(self, node: Any) -> int:
        return _PLANS[type(node)][0]


_HASH_ROLES = {"var": _Hasher.var_use, "buffer": _Hasher.buffer, "func": _Hasher.prim_func,
               "module": _Hasher.module, "opaque": _Hasher.opaque}


# ---------------------------------------------------------------- public API


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` are the same program up to the names of variables.

    Bound variables correspond by position; free variables must be the same
    object unless ``map_free_vars`` is true. Works on expressions, statements,
    buffers, ``PrimFunc`` and ``IRModule``; Python numbers are converted first as
    TVM's ``convert`` does (``structural_equal(x - x, 0)``).
    """
    if lhs is rhs:
        return True
    lhs, rhs = convert_numbers(lhs), convert_numbers(rhs)
    with deep_recursion():
        return _Equal(map_free_vars).data(lhs, rhs)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash that agrees with ``structural_equal``: equal programs hash equal.

    Variables hash by dtype and the order in which they are defined or first
    met, so the hash ignores names and does not depend on object identity.
    ``map_free_vars`` is accepted for TVM compatibility; the hash is the same
    either way, since it never depends on which object a free variable is.
    """
    del map_free_vars  # free variables already hash by position
    with deep_recursion():
        return _Hasher().data(convert_numbers(node))


def structural_digest(node: Any, with_names: bool = False) -> str:
    """A sha256 hex digest of ``node``'s structure, the same in every process.

    Without names it agrees with ``structural_equal`` as ``structural_hash``
    does (free variables numbered where first met); ``with_names=True`` also
    digests the names of variables and buffers, which printed IR and error
    messages quote. Stable across processes and runs (``structural_hash`` is
    not: it uses ``hash()``), so it can key a cache on disk.
    """
    from .structural_digest import digest  # the walk lives beside, in its own file

    return digest(node, with_names)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ``ValueError`` naming the path of the first mismatch and both sides there.

    >>> try:
    ...     assert_structural_equal(Var("x") + 1, Var("x") + 2, map_free_vars=True)
    ... except ValueError as err:
    ...     print(err)
    structural mismatch at b: value differs: 1 vs 2
      lhs: 1
      rhs: 2
    """
    if lhs is rhs:
        return
    lhs, rhs = convert_numbers(lhs), convert_numbers(rhs)
    eq = _Equal(map_free_vars)
    with deep_recursion():
        if eq.data(lhs, rhs):
            return
        path = _path_text(step for step, _ in reversed(eq.path))
    a, b, reason = eq.mismatch or (lhs, rhs, "values differ")
    raise ValueError(
        f"structural mismatch at {path}: {reason}\n"
        f"  lhs: {_show(a)}\n  rhs: {_show(b)}"
    )


def get_first_structural_mismatch(
    lhs: Any, rhs: Any, map_free_vars: bool = False
) -> tuple[ObjectPath, ObjectPath] | None:
    """None when ``lhs`` and ``rhs`` are structurally equal, else the paths to where they differ.

    A path is an ``ObjectPath``: a tuple of steps from the root, each an attribute
    name (``"b"``), a position in a sequence (``3``) or a one-element tuple holding a
    mapping key (``("global_symbol",)``). The two paths are the same except where
    the sides name a place differently (the keys of a ``buffer_map``). Where two
    sequences differ in length, the paths name the sequences.

    >>> x = Var("x")
    >>> get_first_structural_mismatch(x + 1, x + 2)
    (('b', 'value'), ('b', 'value'))
    >>> str(get_first_structural_mismatch(x + 1, x + 2)[0])
    '<root>.b.value'
    """
    if lhs is rhs:
        return None
    lhs, rhs = convert_numbers(lhs), convert_numbers(rhs)
    eq = _Equal(map_free_vars)
    with deep_recursion():
        if eq.data(lhs, rhs):
            return None
    steps = eq.path[::-1] + ([(eq.field, eq.field)] if eq.field else [])
    return ObjectPath(a for a, _ in steps), ObjectPath(b for _, b in steps)


class ObjectPath(tuple):
    """Steps from the root of a program to one place in it (TVM's ``ObjectPath``).

    A tuple of attribute names, sequence positions and one-element tuples holding
    mapping keys; ``str()`` writes it as TVM does: ``<root>.body.seq[3].value``.
    """

    __slots__ = ()

    def __str__(self) -> str:
        out = "<root>"
        for step in self:
            if isinstance(step, int):
                out += f"[{step}]"
            elif isinstance(step, tuple):
                out += f"[{_key_text(step[0])}]"
            else:
                out += f".{step}"
        return out


def convert_numbers(value: Any) -> Any:
    """Python numbers as TIR constants, inside lists and tuples too (TVM's ``convert``).

    An int becomes an int32 ``IntImm`` (int64 if it does not fit), a float a
    float32 ``FloatImm``, a bool a bool ``IntImm``; anything else is kept.
    """
    if isinstance(value, (bool, int, float)):
        return const(value)
    if isinstance(value, list):
        return [convert_numbers(v) for v in value]
    if type(value) is tuple:
        return tuple(convert_numbers(v) for v in value)
    return value


def _path_text(steps: Any) -> str:
    """Steps from the root as the error message writes them: ``seq[3].value.b``."""
    out = ""
    for step in steps:
        if isinstance(step, int):
            out += f"[{step}]"
        elif isinstance(step, tuple):
            out += f"[{_key_text(step[0])}]"
        else:
            out += f".{step}" if out else step
    return out or "<root>"


def _key_text(key: Any) -> str:
    """A mapping key in a path: a node (a ``buffer_map`` param) by name, data by repr."""
    return str(key) if isinstance(key, Node) else repr(key)


def _show(value: Any, limit: int = 300) -> str:
    text = str(value) if isinstance(value, Node) else repr(value)
    text = text.replace("\n", "\n       ")
    return text if len(text) <= limit else text[: limit - 3] + "..."
