"""Entry points: ``@T.prim_func`` on a Python function, ``@I.ir_module`` on a class,
and ``from_source`` on text.

A decorated function is parsed from its source text (``inspect.getsource``,
dedented), so line and column numbers in errors are those of the file it
lives in. Names the body uses resolve, innermost first, through the function's
closure, the locals of the frames that defined it (a ``T.meta_var`` or a shape
defined in an enclosing test function), and its module's globals.
"""

from __future__ import annotations

import ast
import collections
import inspect
import sys
import textwrap
from typing import Any, Mapping

from ..function import IRModule, PrimFunc
from ..functor import deep_recursion
from .errors import ParseError, Source
from .parser import FunctionParser


def parse_function(func: Any, private: bool = False, depth: int | None = 2,
                   extra: Mapping[str, Any] | None = None) -> PrimFunc:
    """The ``PrimFunc`` that the source of the Python function ``func`` spells.

    ``depth`` is how many frames up the decorator was applied (their locals are
    searched for names; None: none), ``extra`` more names to search first.
    """
    del private  # tirlite adds no global_symbol, so private and public parse alike
    if isinstance(func, PrimFunc):
        return func
    try:
        lines, first = inspect.getsourcelines(func)
        filename = inspect.getsourcefile(func) or "<unknown>"
    except (OSError, TypeError) as err:
        raise ParseError(f"cannot read the source of {func!r}: {err}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = _indent_removed(text, dedented)
    source = Source(dedented, filename, max(first - 1, 0), indent)
    tree = _parse_text(source)
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    if node is None:
        raise source.error(None, "expected a def")
    frames = _caller_locals(depth + 1) if depth is not None else []
    outer = collections.ChainMap(_closure(func), dict(extra or {}), *frames, func.__globals__)
    with deep_recursion():  # deep expressions recurse through the evaluator
        return FunctionParser(source, outer).parse(node)


def from_source(text: str, extra_vars: Mapping[str, Any] | None = None,
                filename: str = "<script>") -> PrimFunc | IRModule:
    """Parse TVMScript text: a ``def`` gives a ``PrimFunc``, a class (``@I.ir_module``)
    or several ``def``s an ``IRModule``.

    Args:
        text: TVMScript, such as what ``print(func)`` shows. Import lines (of
            ``tvm.script`` or ``tir.script``) are skipped; ``T`` and ``I`` are predefined.
        extra_vars: more names the text may use (constants, ``T.meta_var`` values).
        filename: how errors name the text.

    Raises:
        ParseError: where the text is not TVMScript tirlite can read.

    >>> f = from_source('''
    ... @T.prim_func
    ... def main(A: T.Buffer((4,), "float32")):
    ...     for i in range(4):
    ...         A[i] = T.float32(0)
    ... ''')
    """
    from . import builtins, ir

    source = Source(textwrap.dedent(text), filename)
    tree = _parse_text(source)
    names: dict[str, Any] = {"T": builtins, "I": ir, **(extra_vars or {})}
    with deep_recursion():
        return _from_tree(source, tree, names)


def _from_tree(source: Source, tree: ast.Module, names: dict) -> PrimFunc | IRModule:
    funcs: dict[str, PrimFunc] = {}
    module = False
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        if isinstance(node, ast.FunctionDef):
            funcs[node.name] = FunctionParser(source, names).parse(node)
        elif isinstance(node, ast.ClassDef):
            module = True
            funcs.update(_class_functions(source, node, names))
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            raise source.error(node, "expected a @T.prim_func def or an @I.ir_module class")
    if not funcs and not module:
        raise source.error(None, "no function found in the text")
    if len(funcs) == 1 and not module:
        return next(iter(funcs.values()))
    return IRModule(funcs)


def _class_functions(source: Source, node: ast.ClassDef, names: dict) -> dict[str, PrimFunc]:
    out = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            out[item.name] = FunctionParser(source, names).parse(item)
        elif not isinstance(item, (ast.Pass, ast.Expr)):
            raise source.error(item, "an @I.ir_module class holds @T.prim_func defs only")
    return out


def ir_module(cls: type | None = None, *, check_well_formed: bool = True) -> Any:
    """``@I.ir_module class Module:``: the module of the class's ``@T.prim_func``s.

    ``@I.ir_module(check_well_formed=False)`` is accepted as in TVM (tirlite's
    parser does not check well-formedness)."""
    if cls is None:
        return ir_module
    funcs = {name: value for name, value in vars(cls).items() if isinstance(value, PrimFunc)}
    return IRModule(funcs)


def _parse_text(source: Source) -> ast.Module:
    try:
        with deep_recursion():  # CPython bounds the ast's depth by the recursion limit
            return ast.parse(source.text)
    except SyntaxError as err:
        raise source.syntax_error(err) from None
    except RecursionError:
        raise source.error(None, "the text nests too deeply for Python's parser") from None


def _indent_removed(text: str, dedented: str) -> int:
    for line, new in zip(text.splitlines(), dedented.splitlines()):
        if new.strip():
            return len(line) - len(new)
    return 0


def _closure(func: Any) -> dict[str, Any]:
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    out = {}
    for name, cell in zip(code.co_freevars if code else (), cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            pass
    return out


def _caller_locals(depth: int) -> list[dict[str, Any]]:
    """The locals of the frame that applied the decorator, and of the one around it
    (a class body's enclosing function), innermost first."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return []
    out = []
    for _ in range(2):
        if frame is None:
            break
        out.append(frame.f_locals)
        frame = frame.f_back
    return out
