"""Regenerate tests/tir/arith/tvm_port/rewrite_cases.py from TVM's rewrite tests.

Usage: python scripts/port_tvm_arith_tests.py \
    TVM/tests/python/arith/test_arith_rewrite_simplify.py \
    > tests/tir/arith/tvm_port/rewrite_cases.py

TVM's rewrite tests are already tables (one ``TestCase(before, expected,
preconditions)`` per row, grouped in classes). This script keeps every row
and only changes names (``tvm.tir.X`` -> ``tir.X``, ``te.var`` -> ``tir.var``,
``tvm.te.min`` -> ``tir.min`` ...). Each class becomes a function that builds
its variables and returns its rows as lambdas, so a row whose construction
fails fails alone. Used once, at v0.16.0; kept so the port can be redone.
"""

from __future__ import annotations

import ast
import re
import sys

RENAMES = [
    (r"tvm\.tir\.op\.call_intrin", "tir.call_intrin"),
    (r"tvm\.tir\.expr\.", "tir."),
    (r"tvm\.tir\.", "tir."),
    (r"tvm\.te\.", "tir."),
    (r"\bte\.", "tir."),
    (r"tvm\.ir\.", "tir."),
    (r"tvm\.runtime\.convert", "tir.convert"),
    (r"tvm\.error\.TVMError", "tir.TVMError"),
    (r"tvm\.TVMError", "tir.TVMError"),
    (r"tvm\.arith\.", "arith."),
]

HEADER = '''"""TVM v0.16.0's rewrite-simplifier test cases, as tables (generated; do not edit).

Source: apache/tvm, tests/python/arith/test_arith_rewrite_simplify.py (Apache-2.0,
Copyright the Apache Software Foundation). Regenerate with
``scripts/port_tvm_arith_tests.py``; only names differ from TVM's file. Each
function is one TVM test class; its rows are ``lambda: Case(before, expected,
preconditions)``. ``test_tvm_rewrite_simplify.py`` runs them.
"""

# ruff: noqa
from __future__ import annotations

import tir
from tir import arith
from tir import floordiv as fld
from tir import floormod as flm
from tir import truncdiv as tdiv
from tir import truncmod as tmod

from .case import Case, TestCase
'''


def rename(src: str) -> str:
    for pat, new in RENAMES:
        src = re.sub(pat, new, src)
    return src


def snake(name: str) -> str:
    name = name[4:] if name.startswith("Test") else name
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower()


def _is_compare_class(node: ast.stmt) -> bool:
    """A ``class TestX(BaseCompare)`` of TVM's test file."""
    return isinstance(node, ast.ClassDef) and any(
        getattr(b, "id", "") == "BaseCompare" for b in node.bases)


def _class_parts(text: str, node: ast.ClassDef) -> tuple[list, list, str]:
    """``(prelude, rows, extensions)``: the class's other statements, its ``test_case`` rows
    as ``(starred, source)``, and the repr of its ``extensions`` name."""
    prelude, rows, extensions = [], [], "None"
    for stmt in node.body:
        seg = ast.get_source_segment(text, stmt)
        target = getattr(stmt.targets[0], "id", "") if isinstance(stmt, ast.Assign) else None
        if target == "test_case":
            for arg in stmt.value.args:
                rows.append((isinstance(arg, ast.Starred), ast.get_source_segment(text, arg)))
        elif target == "extensions":
            extensions = repr(seg.split(".")[-1])
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # docstring
        else:
            prelude.append(seg)
    return prelude, rows, extensions


def _function(cls_name: str, fname: str, prelude: list, rows: list) -> str:
    """The ported function: the prelude as locals, then the rows as a list of lambdas."""
    body = ["", "", f"def {fname}():", f'    """TVM\'s {cls_name}."""']
    for seg in prelude:
        # Class attributes become locals; methods become nested functions.
        body += ["    " + line for line in rename(seg).splitlines()]
    body.append("    return [")
    for starred, seg in rows:
        seg = rename(seg)
        if starred:
            body.append(f"        *[lambda c=c: c for c in {seg[1:]}],")
        else:
            seg = "\n        ".join(seg.splitlines())
            body.append(f"        lambda: {seg},")
    body.append("    ]")
    return "\n".join(body)


def port(path: str) -> str:
    text = open(path).read()
    tree = ast.parse(text)
    out = [HEADER]
    classes = []
    for node in tree.body:
        if not _is_compare_class(node):
            continue
        prelude, rows, extensions = _class_parts(text, node)
        fname = snake(node.name)
        classes.append((node.name, fname, extensions))
        out.append(_function(node.name, fname, prelude, rows))
    table = [
        "",
        "",
        "#: (TVM class, rows, the analyzer extension the class enables)",
        "CLASSES = [",
    ]
    table += [f"    ({name!r}, {fname}, {ext})," for name, fname, ext in classes]
    table.append("]")
    out.append("\n".join(table))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(port(sys.argv[1]))
