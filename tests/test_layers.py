"""The layers point down (DESIGN.md): every import of every module, checked against the rules.

tir < target < transform < codegen < tirlite; inside codegen, the LLVM emitter and the
runtime meet only in ``codegen.abi`` and ``codegen.machine``. Imports inside functions
count too: a lazy import is still an edge.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: package (a dotted prefix) -> the packages it must not import.
FORBIDDEN = {
    "tir": ("target", "transform", "codegen", "tirlite"),
    "target": ("transform", "codegen", "tirlite"),
    "transform": ("codegen", "tirlite"),
    "codegen": ("tirlite",),
    "codegen.llvm": ("codegen.runtime", "codegen.interp", "codegen.emulation", "codegen.build"),
    "codegen.runtime": ("codegen.llvm", "codegen.interp", "codegen.emulation", "codegen.build"),
    "codegen.abi": ("codegen.llvm.", "codegen.runtime"),
    "codegen.machine": ("codegen.llvm.", "codegen.runtime"),
}


#: Edges the rules would refuse, each with why it is kept.
ALLOWED = {
    ("codegen.runtime.disk_cache", "tirlite"):
        "a cache entry's key holds the distribution's version, tirlite.__version__",
}


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: pathlib.Path) -> set[str]:
    """The absolute names of every module ``path`` imports (``from`` targets included)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def violations(rules: dict = FORBIDDEN) -> list[str]:
    out = []
    for top in ("tir", "target", "transform", "codegen"):
        for path in sorted((ROOT / top).rglob("*.py")):
            name = module_name(path)
            for imported in imports_of(path):
                for layer, banned in rules.items():
                    if not (name == layer or name.startswith(layer + ".")):
                        continue
                    for b in banned:
                        prefix = b if b.endswith(".") else b + "."
                        hit = imported == b or imported.startswith(prefix)
                        if hit and (name, imported) not in ALLOWED:
                            out.append(f"{name} imports {imported} ({layer} must not import {b})")
    return sorted(set(out))


def test_every_import_points_down():
    assert violations() == []


def test_the_check_finds_an_edge_that_points_up():
    # The rules are only worth something if breaking one is seen.
    rules = {"codegen.runtime": ("codegen.abi",)}
    assert any("codegen.runtime.module imports codegen.abi" in v for v in violations(rules))


@pytest.mark.parametrize("package", ["tir", "target", "transform", "codegen"])
def test_the_packages_exist(package):
    assert (ROOT / package / "__init__.py").exists()
