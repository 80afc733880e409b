"""How many of TVM's TVMScript test functions tirlite's parser reads.

Usage::

    python benchmarks/tvmscript_coverage.py /path/to/tvm [--tag v0.16.0] [--show N]

Reads (with ``git show``, nothing is copied into this repository) TVM's
vectorize, simplify, remove_no_op and unroll_loop transform tests and every
``tests/python/tir-schedule`` file at the tag, extracts each ``@T.prim_func``
function and ``@I.ir_module`` class (at any depth: module level, inside test
functions, and the undecorated ``before``/``expected`` of Before/After test
classes) with ``ast``, and parses it with ``tir.script.from_source``. The
``tvm`` names a script uses (``tvm.tir.const``, ``tvm.script.tir``) resolve to
tirlite's, and the file's module-level constants are available. Prints the
count that parse and the most common reasons for the rest.
"""

from __future__ import annotations

import argparse
import ast
import collections
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from tir.script import ParseError, from_source  # noqa: E402
from tir.script import builtins as T  # noqa: E402
from tir.script import ir as I  # noqa: E402

TRANSFORM_FILES = [f"tests/python/tir-transform/test_tir_transform_{name}.py"
                   for name in ("vectorize", "simplify", "remove_no_op", "unroll_loop")]
SCHEDULE_DIR = "tests/python/tir-schedule"


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def files_at(repo: str, tag: str) -> list[str]:
    names = git(repo, "ls-tree", "-r", "--name-only", tag, "--", SCHEDULE_DIR).split()
    return TRANSFORM_FILES + sorted(n for n in names if n.endswith(".py"))


def _decorated(node: ast.AST, name: str) -> bool:
    for dec in getattr(node, "decorator_list", ()):
        target = dec.func if isinstance(dec, ast.Call) else dec
        text = ast.unparse(target)
        if text.endswith(name):
            return True
    return False


def _is_before_after(node: ast.FunctionDef, parent: ast.AST) -> bool:
    """An undecorated ``before``/``expected`` of a TVM Before/After test class."""
    return (isinstance(parent, ast.ClassDef) and node.name in ("before", "expected")
            and not node.decorator_list and bool(node.args.args)
            and node.args.args[0].arg != "self")


def extract(tree: ast.Module) -> list[tuple[ast.AST, list[ast.FunctionDef]]]:
    """Every TVMScript function and module class of a test file, with the functions
    around it (whose pytest parameters it may use)."""
    found = []

    def walk(node: ast.AST, outer: list) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and _decorated(child, "ir_module"):
                found.append((child, outer))
                continue
            if isinstance(child, ast.FunctionDef) and (
                    _decorated(child, "prim_func") or _is_before_after(child, node)):
                found.append((child, outer))
                continue
            walk(child, outer + [child] if isinstance(child, ast.FunctionDef) else outer)

    walk(tree, [])
    return found


def first_parameters(funcs: list[ast.FunctionDef], names: dict) -> dict:
    """The first case of each ``@pytest.mark.parametrize`` on the enclosing test functions
    (a script inside a parametrized test uses its parameters, such as ``extent``)."""
    out = {}
    for func in funcs:
        for dec in func.decorator_list:
            if not (isinstance(dec, ast.Call) and ast.unparse(dec.func).endswith("parametrize")
                    and len(dec.args) >= 2 and isinstance(dec.args[0], ast.Constant)):
                continue
            keys = [k.strip() for k in dec.args[0].value.split(",")]
            try:
                cases = eval(compile(ast.Expression(dec.args[1]), "<params>", "eval"),  # noqa: S307
                             {"T": T, **names})
                first = cases[0] if len(keys) > 1 else (cases[0],)
                out.update(zip(keys, first))
            except Exception:  # noqa: BLE001  (a parameter list we cannot evaluate: skip it)
                pass
    return out


def module_constants(tree: ast.Module) -> dict:
    """The file's module-level ``NAME = literal`` assignments."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                pass
    return out


def tvm_shim() -> types.SimpleNamespace:
    """``tvm.tir``/``tvm.script`` as tirlite's modules, for names scripts use directly."""
    script = types.SimpleNamespace(tir=T, ir=I, ir_module=I.ir_module)
    return types.SimpleNamespace(tir=tir, script=script, te=tir.te,
                                 ir=types.SimpleNamespace(IRModule=tir.IRModule))


def source_of(text: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(text, node, padded=True)
    decorators = [ast.get_source_segment(text, d) for d in getattr(node, "decorator_list", [])]
    head = "".join(f"@{d}\n" for d in decorators)
    return head + textwrap.dedent(segment)


def round_trips_of(ir) -> bool:
    """Whether ``ir`` prints to text that parses back equal and prints the same."""
    text = ir.script()
    try:
        again = from_source(text)
    except ParseError:
        return False
    return tir.structural_equal(again, ir, map_free_vars=True) and again.script() == text


_NORMALIZE = [
    (re.compile(r"undefined name '[^']*'"), "undefined name (a test parameter or helper)"),
    (re.compile(r"(T\.\w+) is not supported"), r"\1 is not supported"),
]


def reason(err: Exception) -> str:
    text = getattr(err, "reason", None) or str(err).splitlines()[0]
    for pattern, repl in _NORMALIZE:
        m = pattern.search(text)
        if m:
            return m.expand(repl) if "\\1" in repl else repl
    text = re.sub(r"\b\d+\b", "N", text)
    return text[:110]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tvm", help="a TVM git checkout (or bare repository)")
    ap.add_argument("--tag", default="v0.16.0", help="the TVM version to read (default v0.16.0)")
    ap.add_argument("--show", type=int, default=0, help="print N failing examples")
    args = ap.parse_args(argv)
    tag = f"refs/tags/{args.tag}" if not args.tag.startswith("refs/") else args.tag
    total, ok = collections.Counter(), collections.Counter()
    reasons: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    round_trips = 0
    for path in files_at(args.tvm, tag):
        text = git(args.tvm, "show", f"{tag}:{path}")
        tree = ast.parse(text)
        names = {"tvm": tvm_shim(), **module_constants(tree)}
        group = "tir-schedule" if path.startswith(SCHEDULE_DIR) else Path(path).stem
        for node, outer in extract(tree):
            total[group] += 1
            params = first_parameters(outer, names)
            try:
                ir = from_source(source_of(text, node), extra_vars={**names, **params},
                                 filename=path)
            except (ParseError, ValueError, TypeError) as err:
                key = reason(err)
                reasons[key] += 1
                examples.setdefault(key, f"{path}: {err}")
                continue
            ok[group] += 1
            round_trips += round_trips_of(ir)
    for group in total:
        print(f"{group:45s} {ok[group]:4d} / {total[group]:4d}")
    print(f"{'total':45s} {sum(ok.values()):4d} / {sum(total.values()):4d} "
          f"({100 * sum(ok.values()) / max(1, sum(total.values())):.1f}%)")
    print(f"{round_trips} of the {sum(ok.values())} print and parse back structurally equal")
    print("\nwhy the others do not parse:")
    for key, count in reasons.most_common(15):
        print(f"  {count:4d}  {key}")
    for key, example in list(examples.items())[:args.show]:
        print(f"\n--- {key}\n{example}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
