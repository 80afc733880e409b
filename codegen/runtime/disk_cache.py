"""A disk cache of compiled kernels, opt-in (like numba's ``cache=True``).

>>> config = {"codegen.disk_cache": {"enabled": True}}       # doctest: +SKIP
>>> with transform.PassContext(config=config):               # doctest: +SKIP
...     lib = codegen.build(func)   # the next process loads the object code from disk

Config ``codegen.disk_cache`` (a dict): ``enabled`` (default False), ``dir``
(default: ``$TIRLITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tirlite``, else
``~/.cache/tirlite``) and ``max_bytes`` (default 256 MiB; the least recently
used entries are deleted beyond it).

**The key** is a sha256 of everything that shapes the machine code or the
module: the IR with its names (``structural_digest(mod, with_names=True)``:
error messages and the printed TIR quote them), the target as given and
resolved (triple, CPU and feature string), the config the user set and the
opt level and pass lists, the tirlite version and a digest of the compiler's
own source files (tir/, transform/, codegen/; so that an edited compiler
never reuses stale code), and the llvmlite and LLVM versions.

**An entry** is one file ``<key>.kernel``: a magic line, the sha256 of the
rest, then a JSON header (function signatures as codegen/runtime/metadata.py writes
them for libraries, assertion messages, the optimized LLVM IR, the lowered
TIR text, the remarks, the machine target) and the object code. It is
written to a temporary file in the directory and renamed over the entry
(``os.replace``), so concurrent builds never see half a file; one that does
not check out (truncated, garbled, another format) is a miss and is
replaced. A hit touches the file (its mtime orders eviction).

**Only our own code runs:** the cache loads object code and runs it, so a
directory or entry another user could write is refused with a warning
(``UnsafeCacheWarning``) and the build compiles as without the cache: the
cache directory must be owned by this user and not writable by group or
others, no directory above it may be world-writable without the sticky bit
(``/tmp`` has it), and each entry file must be owned by this user and not
writable by group or others (checked on the open file, so a file swapped in
after the check is never read). Directories the cache creates are made
``0o700`` and entries ``0o600``, so the default is safe.

**Never in the way:** an unwritable or full directory, or any other cache
failure, falls back to compiling as without the cache, with one warning per
process. Not cached: cross-compiled targets (nothing runs here), builds under
``PassContext`` instruments (they observe or steer the passes, which a hit
would not run), and builds whose remarks are not plain attrs records (the
vectorizer's ``VectorizeRemark`` is one; other remark objects could not be
restored faithfully, so such builds are compiled every time).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
import struct
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import transform
from target.target import Target
from tir.function import IRModule
from tir.structural import structural_digest

#: The config key of the cache's settings.
CONFIG_KEY = "codegen.disk_cache"
#: The environment variable naming the default cache directory.
DIR_ENV = "TIRLITE_CACHE_DIR"
#: The default size limit of a cache directory.
DEFAULT_MAX_BYTES = 256 << 20
#: The file name ending of entries.
SUFFIX = ".kernel"
#: The first bytes of an entry; a new layout changes the version (and the key).
MAGIC = b"tirlite kernel cache v1\n"
_DIGEST_BYTES = 32
#: Temporary files older than this (seconds) were left by a writer that died.
_STALE_TMP_SECONDS = 3600


def _check_settings(value: Mapping) -> str | None:
    if value["max_bytes"] < 1:
        return f"max_bytes must be positive, got {value['max_bytes']}"
    return None


transform.register_config(
    CONFIG_KEY, dict, {},
    "Keep compiled kernels on disk and reuse them in later processes (opt-in).",
    subkeys={
        "enabled": (bool, False, "Look builds up in the cache and store new ones."),
        "dir": (str, "", f"The cache directory; empty: ${DIR_ENV}, else ~/.cache/tirlite."),
        "max_bytes": (int, DEFAULT_MAX_BYTES,
                      "Delete the least recently used entries beyond this total size."),
    },
    check=_check_settings,
)


def default_dir() -> Path:
    """``$TIRLITE_CACHE_DIR``, else ``$XDG_CACHE_HOME/tirlite``, else ``~/.cache/tirlite``."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "tirlite"


def open_cache(ctx: transform.PassContext, target: Target) -> DiskCache | None:
    """The cache ``ctx`` asks for when ``build`` may use it for ``target``, else None.

    None also when the directory is one another user could write (with an
    ``UnsafeCacheWarning``): its entries would be code this process runs.
    """
    settings = ctx.config.get(CONFIG_KEY)
    if not settings["enabled"] or ctx.instruments or not target.is_host:
        return None
    directory = Path(settings["dir"]).expanduser() if settings["dir"] else default_dir()
    problem = directory_problem(directory)
    if problem is not None:
        warn_unsafe(problem)
        return None
    return DiskCache(directory, settings["max_bytes"])


# ------------------------------------------------------------------ who can write it


class UnsafeCacheWarning(RuntimeWarning):
    """A cache directory or entry another user could write; the build goes on without it."""


def _other_writers(st: os.stat_result) -> str | None:
    """Why users other than this one could write a file or directory with stat ``st``."""
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):#o})"
    return None


_RISK = "another user could put code there that this process would run"
_OWN_DIR = f"set ${DIR_ENV} (or the config's 'dir') to a directory you own"


def directory_problem(directory: Path) -> str | None:
    """Why ``directory`` is no safe place for code this process will run, or None if it is.

    Levels that do not exist yet are fine: the cache creates them ``0o700``.
    """
    real = Path(os.path.realpath(directory))  # a symlink's target is what gets read
    try:
        why = _other_writers(real.stat())
    except OSError:  # missing (made later, privately) or under a file (writing fails)
        why = None
    if why is not None:
        fix = f"`chmod go-w {real}`, or {_OWN_DIR}" if "writable" in why else _OWN_DIR
        return f"the cache directory {real} {why}; {_RISK}. Fix: {fix}"
    for parent in real.parents:
        try:
            mode = parent.stat().st_mode
        except OSError:
            continue
        # Anyone may rename what a world-writable directory holds, unless it is sticky (/tmp).
        if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
            return (f"{parent}, a parent of the cache directory {real}, is world-writable "
                    f"without the sticky bit (mode {stat.S_IMODE(mode):#o}); {_RISK}. "
                    f"Fix: `chmod o-w {parent}`, or {_OWN_DIR}")
    return None


def warn_unsafe(problem: str) -> None:
    """Warn that the cache is not used because of ``problem``."""
    warnings.warn(f"tirlite disk cache: not used: {problem}; compiling without the cache",
                  UnsafeCacheWarning, stacklevel=3)


def make_private_dirs(directory: Path) -> None:
    """Create ``directory`` and its missing parents, each ``0o700``."""
    # Not Path.mkdir(parents=True): it makes the parents with the umask's mode.
    missing = []
    level = Path(directory)
    while not level.exists() and level != level.parent:
        missing.append(level)
        level = level.parent
    for level in reversed(missing):
        try:
            level.mkdir(mode=0o700)
        except FileExistsError:  # made by another process meanwhile: checked after
            pass


# ------------------------------------------------------------------ the key


@functools.cache
def compiler_digest() -> str:
    """sha256 of the compiler's sources (tir/, transform/, codegen/ .py files), once a process."""
    import codegen
    import tir

    h = hashlib.sha256()
    for package in (tir, transform, codegen):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            h.update(f"{package.__name__}/{path.relative_to(root).as_posix()}\0".encode())
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _canonical(value: Any) -> Any:
    """A JSON-ready, order-independent form of a config value."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple, frozenset, set)):
        items = [_canonical(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return f"{type(value).__qualname__}:{value!r}"  # floats too: repr round-trips exactly


def entry_key(mod: IRModule, target: Target, ctx: transform.PassContext) -> str:
    """The sha256 hex key of building ``mod`` for ``target`` under ``ctx``."""
    import llvmlite
    import llvmlite.binding as llvm

    import tirlite

    config = {k: v for k, v in ctx.config.items() if k != CONFIG_KEY}  # where, not what
    parts = {
        "format": MAGIC.decode().strip(),
        "ir": structural_digest(mod, with_names=True),
        "target": [str(target), str(target.resolved())],
        "config": _canonical(config),
        "opt_level": ctx.opt_level,
        "passes": [sorted(ctx.required_pass), sorted(ctx.disabled_pass)],
        "tirlite": [tirlite.__version__, compiler_digest()],
        "llvm": [llvmlite.__version__, list(llvm.llvm_version_info)],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


# ------------------------------------------------------------------ entries


def pack(header: dict, obj: bytes) -> bytes:
    """An entry file's bytes: magic, checksum, header length, JSON header, object code."""
    text = json.dumps(header).encode("utf-8")
    payload = struct.pack("<Q", len(text)) + text + obj
    return MAGIC + hashlib.sha256(payload).digest() + payload


def unpack(data: bytes) -> tuple[dict, bytes] | None:
    """``(header, object code)`` of an entry, or None if it does not check out."""
    start = len(MAGIC) + _DIGEST_BYTES
    if not data.startswith(MAGIC) or len(data) < start + 8:
        return None
    payload = data[start:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):start]:
        return None
    (size,) = struct.unpack_from("<Q", payload)
    try:
        header = json.loads(payload[8:8 + size].decode("utf-8"))
    except ValueError:
        return None
    return (header, payload[8 + size:]) if isinstance(header, dict) else None


class DiskCache:
    """One cache directory: entries read, written atomically, and evicted by size."""

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes

    def path(self, key: str) -> Path:
        """The entry file of ``key``."""
        return self.directory / f"{key}{SUFFIX}"

    def read(self, key: str) -> tuple[dict, bytes] | None:
        """The header and object code stored for ``key``; None if absent or not valid."""
        path = self.path(key)
        try:
            data = _read_own_file(path)
        except OSError:  # absent, evicted meanwhile, or unreadable: a miss
            return None
        if data is None:
            return None
        entry = unpack(data)
        if entry is None or entry[0].get("key") != key:
            return None
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:
            pass  # a read-only cache still serves hits
        return entry

    def write(self, key: str, header: dict, obj: bytes) -> Path:
        """Store an entry for ``key`` atomically, then evict beyond ``max_bytes``.

        Raises:
            OSError: the directory cannot be created or written, or (PermissionError)
                another user could write the directory that now exists there.
        """
        make_private_dirs(self.directory)
        problem = directory_problem(self.directory)  # a level made meanwhile by someone else
        if problem is not None:
            raise PermissionError(problem)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as f:  # mkstemp made it 0o600: private to this user
                f.write(pack(dict(header, key=key), obj))
            os.replace(tmp, self.path(key))
        except BaseException:
            _remove(Path(tmp))
            raise
        self.evict(keep=self.path(key))
        return self.path(key)

    def entries(self) -> list[tuple[Path, os.stat_result]]:
        """The entry files with their stats, least recently used first."""
        found = []
        for path in self.directory.glob(f"*{SUFFIX}"):
            try:
                st = path.stat()
            except OSError:  # removed by another process meanwhile
                continue
            if path.name.startswith(".tmp-"):
                if time.time() - st.st_mtime > _STALE_TMP_SECONDS:
                    _remove(path)
                continue
            found.append((path, st))
        return sorted(found, key=lambda e: e[1].st_mtime_ns)

    def evict(self, keep: Path | None = None) -> None:
        """Delete the least recently used entries until the total is within ``max_bytes``."""
        entries = self.entries()
        total = sum(st.st_size for _, st in entries)
        for path, st in entries:
            if total <= self.max_bytes:
                return
            if path == keep:  # the newest entry stays, even alone above the limit
                continue
            _remove(path)
            total -= st.st_size


def _read_own_file(path: Path) -> bytes | None:
    """The bytes of ``path``, or None (with a warning) if another user could have written it.

    The check is on the open file (``fstat``), so a file swapped in after the
    check is not what gets read; a symlink is not followed.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        why = _other_writers(os.fstat(fd))
        if why is not None:
            fix = "chmod go-w" if "writable" in why else "rm"
            warn_unsafe(f"the entry {path} {why}; {_RISK}. Fix: `{fix} {path}` "
                        "(this build replaces it with a private one)")
            return None
        return f.read()


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass  # already gone (another process evicted it) or not ours to delete


_warned = False


def warn_once(what: str, err: BaseException) -> None:
    """Warn, once a process, that the cache failed and builds go on without it."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(f"tirlite disk cache: {what} failed ({type(err).__name__}: {err}); "
                  "compiling without the cache", RuntimeWarning, stacklevel=3)
