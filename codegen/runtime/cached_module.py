"""Modules to and from object code: disk cache entries and tuning artifacts.

``store`` turns an optimized LLVM module into object code, writes the cache
entry (see disk_cache.py) and loads the object back; ``load`` does the same
from an entry already on disk, so a new build and a cache hit run the very
same code. Loading mirrors ``module.jit_module``: support libraries first,
external functions checked, an MCJIT engine (here made from an empty LLVM
module plus the object file), the parallel launcher installed.

``to_bytes`` / ``from_bytes`` carry the same entry, without its sources, from
one process to another: a tuner's builder compiles a candidate once to object
code (no JIT, no linker) and its runner loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from target.target import Target

from . import disk_cache, metadata
from .disk_cache import DiskCache, warn_once
from .module import Module, check_externals, load_support_libraries, process_library


class CachedModule(Module):
    """A ``Module`` whose code went through the disk cache; same interface.

    Its functions carry their signatures only (as a loaded library's do), so
    ``get_source("tir")`` returns the lowered TIR text stored with the entry.
    """

    def __init__(self, *args: Any, tir_source: str, cache_entry: Path, loaded_from_cache: bool,
                 **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.tir_source = tir_source
        #: The entry file the code was stored in or loaded from.
        self.cache_entry = cache_entry
        #: True when the code was loaded from disk (no pass or LLVM ran for it).
        self.loaded_from_cache = loaded_from_cache

    def get_source(self, fmt: str = "ll") -> str:
        """As ``Module.get_source``; ``"tir"`` is the text stored with the entry."""
        if fmt == "tir":
            return self.tir_source
        return super().get_source(fmt)


def load(cache: DiskCache, key: str, target: Target) -> CachedModule | None:
    """The module stored for ``key``, or None on a miss (absent, invalid or not loadable).

    Raises:
        ValueError: the code calls an external function this process lacks
            (what a fresh build would raise too).
    """
    entry = cache.read(key)
    if entry is None:
        return None
    header, obj = entry
    try:
        remarks = tuple(_decode_remarks(header["remarks"]))
        externals = [str(name) for name in header["externals"]]
    except (KeyError, TypeError, ValueError, AttributeError, ImportError):
        return None  # a header this version does not understand: compile and replace it
    _check_names_defined(externals)
    try:
        module = _instantiate(header, obj, target, cache.path(key), loaded=True)
    except Exception as err:  # noqa: BLE001 - any failure here is a miss
        warn_once("loading an entry", err)
        return None
    module.remarks = remarks
    return module


def store(cache: DiskCache, key: str, target: Target, funcs: dict, symbols: dict[str, str],
          messages: list[str], llvm_module: Any, remarks: tuple) -> CachedModule | None:
    """Compile ``llvm_module`` to object code, store it under ``key``, load it back.

    None when the entry cannot be made or written (the caller JIT-compiles
    instead); an unwritable directory warns once.
    """
    check_externals(llvm_module)  # a user error, raised as a build without the cache does
    encoded = _encode_remarks(remarks)
    if encoded is None:
        return None
    header, obj = make_entry(target, funcs, symbols, messages, llvm_module, encoded)
    try:
        path = cache.write(key, header, obj)
    except OSError as err:
        warn_once(f"writing to {cache.directory}", err)
        path = None
    try:
        module = _instantiate(header, obj, target, path, loaded=False)
    except Exception as err:  # noqa: BLE001 - the caller compiles without the cache
        warn_once("loading a new entry", err)
        return None
    module.remarks = tuple(remarks)
    return module


def make_entry(target: Target, funcs: dict, symbols: dict[str, str], messages: list[str],
               llvm_module: Any, encoded_remarks: list, sources: bool = True
               ) -> tuple[dict, bytes]:
    """``(header, object code)`` of an optimized ``llvm_module``: what an entry holds.

    Without ``sources`` the header leaves out the optimized LLVM IR and the
    lowered TIR text (printing them is a tenth of a tuning candidate's build).
    """
    from .. import machine
    from ..abi import LAUNCHER_SYMBOL

    llvm_ir = str(llvm_module)
    machine_target = machine.machine_target(target, llvm_ir)
    header = {
        "target": str(target),
        "functions": {name: metadata.describe(f, symbols[name]) for name, f in funcs.items()},
        "messages": list(messages),
        "llvm_ir": llvm_ir if sources else None,
        "tir": "\n".join(f.script() for f in funcs.values()) if sources else "",
        "remarks": encoded_remarks,
        "machine_target": str(machine_target),
        "externals": [fn.name for fn in llvm_module.functions
                      if fn.is_declaration and not fn.name.startswith("llvm.")],
        "launcher": any(g.name == LAUNCHER_SYMBOL for g in llvm_module.global_variables),
    }
    return header, machine.target_machine(machine_target).emit_object(llvm_module)


def to_bytes(target: Target, funcs: dict, symbols: dict[str, str], messages: list[str],
             llvm_module: Any) -> bytes:
    """An artifact: a cache entry's bytes (no sources, no remarks) for ``from_bytes``."""
    check_externals(llvm_module)
    header, obj = make_entry(target, funcs, symbols, messages, llvm_module, [], sources=False)
    return disk_cache.pack(header, obj)


def from_bytes(data: bytes) -> CachedModule:
    """The runnable module of an artifact made by ``to_bytes`` (in this or another process).

    Raises:
        ValueError: ``data`` is not an artifact (truncated, altered, another
            format), or its code calls an external function this process lacks.
    """
    entry = disk_cache.unpack(bytes(data))
    if entry is None or "target" not in entry[0]:
        raise ValueError("load_artifact: not a tirlite artifact (truncated, altered or "
                         "another format)")
    header, obj = entry
    _check_names_defined([str(name) for name in header["externals"]])
    return _instantiate(header, obj, Target(header["target"]), None, loaded=True)


def _instantiate(header: dict, obj: bytes, target: Target, path: Path | None,
                 loaded: bool) -> CachedModule:
    """A runnable module from an entry's header and object code."""
    import llvmlite.binding as llvm

    from .. import machine
    from ..abi import LAUNCHER_SYMBOL
    from . import parallel

    machine_target = Target(header["machine_target"])
    load_support_libraries()
    empty = llvm.parse_assembly("")
    empty.triple = machine_target.triple
    engine = llvm.create_mcjit_compiler(empty, machine.jit_target_machine(machine_target))
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    if header["launcher"]:
        parallel.install(engine.get_global_value_address(LAUNCHER_SYMBOL))
    described = header["functions"]
    return CachedModule(
        target, {name: metadata.signature_func(d) for name, d in described.items()},
        {name: d["symbol"] for name, d in described.items()}, header["messages"],
        engine.get_function_address, llvm_ir=header["llvm_ir"], keepalive=engine,
        machine_target=machine_target, tir_source=header["tir"], cache_entry=path,
        loaded_from_cache=loaded,
    )


def _check_names_defined(names: list[str]) -> None:
    """``module.check_externals`` for names read from an entry."""
    import llvmlite.binding as llvm

    process = process_library()
    for name in names:
        if not llvm.address_of_symbol(name) and not hasattr(process, name):
            raise ValueError(
                f"build: the external function {name!r} is not defined in this process; "
                "load a library defining it (llvmlite.binding.load_library_permanently)"
            )


# ------------------------------------------------------------------ remarks

_PLAIN = (str, int, float, bool, type(None))


def _encode_remarks(remarks: tuple) -> list | None:
    """Remarks as JSON data, or None if one would not come back equal."""
    out = []
    for remark in remarks:
        cls = type(remark)
        if cls is str:
            out.append(remark)
            continue
        if not attrs.has(cls) or "<locals>" in cls.__qualname__:
            return None
        fields = attrs.asdict(remark, recurse=False)
        if not all(type(v) in _PLAIN for v in fields.values()):
            return None
        out.append({"class": f"{cls.__module__}:{cls.__qualname__}", "fields": fields})
    if _decode_remarks(out) != list(remarks):  # e.g. a class comparing by identity
        return None
    return out


def _decode_remarks(encoded: list) -> list:
    import importlib

    out = []
    for item in encoded:
        if isinstance(item, str):
            out.append(item)
            continue
        module, _, qualname = item["class"].partition(":")
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not attrs.has(cls):
            raise ValueError(f"{item['class']} is not an attrs class")
        out.append(cls(**item["fields"]))
    return out
