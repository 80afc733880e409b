"""The disk cache (codegen.disk_cache): hits across processes, misses, concurrency, damage, size."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen import machine
from codegen.runtime import cached_module, disk_cache
from tir import ir_builder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kernel_module(scale=2.0, name="A"):
    """``main``: B = A * scale + 1 (parallel rows, vectorized columns); ``copy``: a bound check."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n, 16), "float32", name=name)
    B = tir.decl_buffer((n, 16), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="parallel") as i:
        with ib.for_range(0, 16, name="j", kind="vectorize") as j:
            b[i, j] = a[i, j] * tir.const(scale, "float32") + tir.const(1.0, "float32")
    main = tir.PrimFunc([A, B], ib.get())
    # m is not tied to X's shape, so the pipeline asserts X[i] in bounds at run time.
    m = tir.var("m")
    X = tir.decl_buffer((16,), "float32", name="X")
    ib = ir_builder.create()
    x = ib.buffer_ptr(X)
    with ib.for_range(0, m, name="k") as k:
        x[k] = tir.const(0.0, "float32")
    return tir.IRModule({"main": main, "copy": tir.PrimFunc([X, m], ib.get())})


def check_results(lib, scale=2.0):
    """Whether ``lib`` computes its kernels, checks arguments and reports assertions."""
    a = np.random.default_rng(0).standard_normal((40, 16)).astype("float32")
    b = np.zeros_like(a)
    lib["main"](a, b)
    np.testing.assert_allclose(b, a * np.float32(scale) + 1, rtol=1e-6, atol=1e-6)  # FMA
    with pytest.raises(TypeError, match="main: argument 'B' expects a float32 array"):
        lib["main"](a, b.astype("float64"))
    with pytest.raises(RuntimeError, match=r"copy: assertion failed: index out of bounds: X\[k\]"):
        lib["copy"](np.ones(16, "float32"), 17)
    return True


def settings(directory, **extra):
    return {"codegen.disk_cache": {"enabled": True, "dir": str(directory), **extra}}


# A process building kernel_module() with the config in argv[1]; it reports whether the
# module came from disk and how often LLVM's optimizer ran.
CHILD = """
import json, sys
sys.path.insert(0, "tests/codegen")
import codegen, transform
from codegen import machine
from test_disk_cache import check_results, kernel_module
runs, optimize = [], machine.optimize
machine.optimize = lambda *args: (runs.append(1), optimize(*args))[1]
with transform.PassContext(config=json.loads(sys.argv[1])):
    lib = codegen.build(kernel_module())
print(json.dumps({"loaded": lib.loaded_from_cache, "optimized": len(runs),
                  "correct": check_results(lib), "remarks": [str(r) for r in lib.remarks],
                  "tir": lib.get_source("tir"), "entry": str(lib.cache_entry)}))
"""


def start_child(directory):
    return subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(settings(directory))],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(child):
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    return json.loads(out)


def entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(disk_cache.SUFFIX))


@pytest.fixture
def fresh(monkeypatch):
    """No in-process cache between builds; count LLVM optimizer runs."""
    codegen.clear_cache()
    runs = []
    optimize = machine.optimize
    monkeypatch.setattr(machine, "optimize", lambda *a: (runs.append(1), optimize(*a))[1])
    yield runs
    codegen.clear_cache()


def build(mod, config, target="llvm"):
    codegen.clear_cache()  # the in-process cache would answer first
    with transform.PassContext(config=config):
        return codegen.build(mod, target)


# ------------------------------------------------------------------ hits


def test_a_second_process_loads_the_kernel_without_compiling(tmp_path):
    first = finish(start_child(tmp_path))
    second = finish(start_child(tmp_path))
    assert (first["loaded"], first["optimized"]) == (False, 1)
    assert (second["loaded"], second["optimized"]) == (True, 0)
    assert first["correct"] and second["correct"]
    assert second["remarks"] == first["remarks"] == ["main: loop j (16 lanes): vectorized"]
    assert second["tir"] == first["tir"] and "T.Broadcast" in second["tir"]
    assert entries(tmp_path) == [os.path.basename(first["entry"])]


def test_a_hit_has_the_sources_and_remarks_of_a_build(tmp_path, fresh):
    plain = build(kernel_module(), {})
    stored = build(kernel_module(), settings(tmp_path))
    loaded = build(kernel_module(), settings(tmp_path))
    assert (stored.loaded_from_cache, loaded.loaded_from_cache) == (False, True)
    assert len(fresh) == 2  # the plain build and the stored one; the hit optimized nothing
    for fmt in ("ll", "tir", "asm"):
        assert loaded.get_source(fmt) == stored.get_source(fmt) == plain.get_source(fmt)
    assert "T.Broadcast" in loaded.get_source("tir")  # the lowered TIR, not a signature
    assert loaded.remarks == plain.remarks and type(loaded.remarks[0]).__name__ == "VectorizeRemark"
    assert check_results(loaded)


# ------------------------------------------------------------------ misses


@pytest.mark.parametrize(
    ("change", "config", "target"),
    [
        ("config", {"tir.disable_vectorize": True}, "llvm"),
        ("opt level", {"codegen.llvm.opt_level": 2}, "llvm"),
        ("CPU", {}, "llvm -mcpu=x86-64"),  # baseline x86-64: runs on every host
        ("IR", {}, "llvm"),
        ("a buffer name", {}, "llvm"),
    ],
)
def test_a_change_misses(tmp_path, fresh, change, config, target):
    build(kernel_module(), settings(tmp_path))
    mod = {"IR": kernel_module(scale=3.0), "a buffer name": kernel_module(name="In")}.get(
        change, kernel_module())
    lib = build(mod, {**settings(tmp_path), **config}, target)
    assert not lib.loaded_from_cache, change
    assert len(entries(tmp_path)) == 2
    assert check_results(lib, scale=3.0 if change == "IR" else 2.0)
    if change == "a buffer name":  # error messages quote the new name
        with pytest.raises(TypeError, match="main: argument 'In' expects a float32 array"):
            lib["main"](np.zeros((2, 16), "float64"), np.zeros((2, 16), "float32"))


def test_the_key_covers_the_compiler_and_llvm(monkeypatch):
    ctx = transform.PassContext()
    target = codegen.Target("llvm")
    key = disk_cache.entry_key(kernel_module(), target, ctx)
    assert disk_cache.entry_key(kernel_module(), target, ctx) == key
    monkeypatch.setattr(disk_cache, "compiler_digest", lambda: "an edited compiler")
    assert disk_cache.entry_key(kernel_module(), target, ctx) != key
    monkeypatch.undo()
    monkeypatch.setattr("llvmlite.__version__", "0.0.0")
    assert disk_cache.entry_key(kernel_module(), target, ctx) != key


# ------------------------------------------------------------------ concurrency and damage


def test_two_processes_building_at_once_both_succeed(tmp_path):
    results = [finish(c) for c in [start_child(tmp_path), start_child(tmp_path)]]
    assert all(r["correct"] for r in results)
    (name,) = entries(tmp_path)  # one entry; no temporary file left behind
    assert os.listdir(tmp_path) == [name]
    key = name[: -len(disk_cache.SUFFIX)]
    header, obj = disk_cache.DiskCache(tmp_path).read(key)
    assert header["key"] == key and obj.startswith(b"\x7fELF")
    assert finish(start_child(tmp_path))["loaded"]


@pytest.mark.parametrize("damage", ["truncated", "garbled", "empty", "another file"])
def test_a_damaged_entry_is_ignored_and_replaced(tmp_path, fresh, damage):
    path = build(kernel_module(), settings(tmp_path)).cache_entry
    data = path.read_bytes()
    damaged = {"truncated": data[: len(data) // 2],
               "garbled": data[:-100] + bytes(b ^ 0x5A for b in data[-100:]),
               "empty": b"", "another file": b"\x7fELF" + data[4:]}[damage]
    path.write_bytes(damaged)
    lib = build(kernel_module(), settings(tmp_path))
    assert not lib.loaded_from_cache and check_results(lib)
    assert path.read_bytes() == data  # replaced by a valid entry
    assert build(kernel_module(), settings(tmp_path)).loaded_from_cache


def test_the_size_limit_evicts_the_least_recently_used(tmp_path, fresh):
    mods = {s: kernel_module(scale=s) for s in (2.0, 3.0, 4.0)}
    first = build(mods[2.0], settings(tmp_path)).cache_entry
    size = first.stat().st_size
    limit = settings(tmp_path, max_bytes=int(size * 2.5))
    second = build(mods[3.0], limit).cache_entry
    os.utime(first, (1e9, 1e9))  # both long unused, the first the longest ...
    os.utime(second, (1e9 + 1, 1e9 + 1))
    assert build(mods[2.0], limit).loaded_from_cache  # ... until a hit touches it
    third = build(mods[4.0], limit).cache_entry
    assert sorted(entries(tmp_path)) == sorted([first.name, third.name])
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= size * 2.5


# ------------------------------------------------------------------ never in the way


def test_an_unwritable_directory_warns_once_and_builds(tmp_path, fresh, monkeypatch):
    monkeypatch.setattr(disk_cache, "_warned", False)
    (tmp_path / "file").write_text("not a directory")
    config = settings(tmp_path / "file" / "cache")
    with pytest.warns(RuntimeWarning, match="tirlite disk cache: writing to .* failed"):
        lib = build(kernel_module(), config)
    assert check_results(lib) and lib.cache_entry is None
    with warnings.catch_warnings():  # the second failure is silent
        warnings.simplefilter("error")
        assert check_results(build(kernel_module(scale=3.0), config), scale=3.0)


def test_off_by_default_and_bypassed_under_instruments(tmp_path, fresh, monkeypatch):
    monkeypatch.setenv(disk_cache.DIR_ENV, str(tmp_path / "env"))
    assert disk_cache.default_dir() == tmp_path / "env"
    assert not isinstance(build(kernel_module(), {}), cached_module.CachedModule)
    codegen.clear_cache()
    with transform.PassContext(config=settings(tmp_path),
                               instruments=[transform.PassTimingInstrument()]):
        codegen.build(kernel_module())
    assert not (tmp_path / "env").exists() and entries(tmp_path) == []
    lib = build(kernel_module(), {"codegen.disk_cache": {"enabled": True}})  # the env's dir
    assert lib.cache_entry.parent == tmp_path / "env"


def test_bad_settings_are_config_errors():
    with pytest.raises(ValueError, match="unknown sub-key of config 'codegen.disk_cache': 'size'"):
        transform.PassContext(config={"codegen.disk_cache": {"size": 1}})
    with pytest.raises(ValueError, match="max_bytes must be positive"):
        transform.PassContext(config={"codegen.disk_cache": {"max_bytes": 0}})
    with pytest.raises(TypeError, match="'codegen.disk_cache.dir' expects a str"):
        transform.PassContext(config={"codegen.disk_cache": {"dir": 3}})


# ------------------------------------------------------------------ only our own code runs


def refused(directory, config, match):
    """Build with ``config``: it warns ``match``, computes right and writes nothing."""
    before = entries(directory) if os.path.exists(directory) else None
    with pytest.warns(disk_cache.UnsafeCacheWarning, match=match):
        lib = build(kernel_module(), config)
    assert check_results(lib)
    assert not isinstance(lib, cached_module.CachedModule)
    assert (entries(directory) if os.path.exists(directory) else None) == before


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_a_directory_others_can_write_is_refused(tmp_path, fresh, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)  # 0o1777: sticky, like /tmp, which protects only what is inside
    refused(shared, settings(shared),
            rf"cache directory {shared} is writable by group or others \(mode {mode:#o}\).*"
            rf"chmod go-w {shared}")
    sub = shared / "sub"
    if mode == 0o777:  # anyone could rename sub away and put theirs in its place
        refused(sub, settings(sub), rf"{shared}, a parent of the cache directory {sub}, is "
                "world-writable without the sticky bit")
    else:  # sub is made 0o700; sticky (or group-only) parents let no stranger replace it
        assert build(kernel_module(), settings(sub)).cache_entry.parent == sub
    assert entries(shared) == []


def test_tmp_itself_is_refused_through_the_environment(fresh, monkeypatch):
    monkeypatch.setenv(disk_cache.DIR_ENV, "/tmp")
    if os.stat("/tmp").st_mode & 0o022 == 0:
        pytest.skip("/tmp is not writable by others here")
    refused("/tmp", {"codegen.disk_cache": {"enabled": True}}, "/tmp is writable by group or "
            "others|/tmp is owned by uid")


def test_a_directory_of_another_user_is_refused(tmp_path, fresh):
    if os.geteuid() == 0:  # as root, hand a directory to nobody
        other = tmp_path / "other"
        other.mkdir(mode=0o755)
        os.chown(other, 65534, 65534)
    else:  # a non-root user cannot give a file away; "/" belongs to root
        other = "/"
        if os.stat(other).st_uid == os.geteuid():
            pytest.skip("chown needs root, and / belongs to this user")
    uid = os.stat(other).st_uid
    refused(other, settings(other), rf"is owned by uid {uid}, not by this user.*directory you own")


def test_an_entry_others_can_write_is_not_loaded(tmp_path, fresh):
    path = build(kernel_module(), settings(tmp_path)).cache_entry
    assert os.stat(path).st_mode & 0o777 == 0o600
    os.chmod(path, 0o666)
    with pytest.warns(disk_cache.UnsafeCacheWarning,
                      match=rf"the entry {path} is writable by group or others \(mode 0o666\)"):
        lib = build(kernel_module(), settings(tmp_path))
    assert not lib.loaded_from_cache and check_results(lib)
    assert os.stat(path).st_mode & 0o777 == 0o600  # replaced by a private entry
    assert build(kernel_module(), settings(tmp_path)).loaded_from_cache


def test_an_entry_of_another_user_is_not_loaded(tmp_path, fresh):
    if os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    path = build(kernel_module(), settings(tmp_path)).cache_entry
    os.chown(path, 65534, 65534)
    with pytest.warns(disk_cache.UnsafeCacheWarning, match="is owned by uid 65534"):
        assert not build(kernel_module(), settings(tmp_path)).loaded_from_cache


def test_the_default_directory_is_private_and_caches(tmp_path, fresh, monkeypatch):
    home = tmp_path / "home"
    (home / ".cache").mkdir(parents=True, mode=0o775)  # group-writable, as umask 002 makes it
    os.chmod(home / ".cache", 0o775)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(disk_cache.DIR_ENV, raising=False)
    config = {"codegen.disk_cache": {"enabled": True}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = build(kernel_module(), config)
        loaded = build(kernel_module(), config)
    assert stored.cache_entry.parent == home / ".cache" / "tirlite"
    assert (stored.loaded_from_cache, loaded.loaded_from_cache) == (False, True)
    assert os.stat(home / ".cache" / "tirlite").st_mode & 0o777 == 0o700
    assert os.stat(stored.cache_entry).st_mode & 0o777 == 0o600
    assert check_results(loaded)


def test_missing_levels_are_made_private(tmp_path, fresh):
    deep = tmp_path / "a" / "b" / "c"
    assert build(kernel_module(), settings(deep)).cache_entry.parent == deep
    for level in (tmp_path / "a", tmp_path / "a" / "b", deep):
        assert os.stat(level).st_mode & 0o777 == 0o700, level
