"""The native call path (codegen/runtime/fastcall.py) against the Python checks it stands in for.

Every call below is made twice, through the native builtin (``pf(*args)``) and
through ``pf.call_checked(*args)`` (every check in Python): the results, or the
exception type and message, must be the same. A counter on ``ArgBinder.bind``
shows which calls the native checks accepted on their own.
"""

import gc
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import codegen
import tir
from codegen.runtime import fastcall
from tir import ir_builder


def saxpy_like(dtype="float32", scalar_dtype="float32"):
    """C[i] = A[i] * s + B[i] over a symbolic n."""
    n = tir.size_var("n")
    A, B, C = (tir.decl_buffer((n,), dtype, name=x) for x in "ABC")
    s = tir.Var("s", scalar_dtype)
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in (A, B, C))
    with ib.for_range(0, n, name="i") as i:
        c[i] = a[i] * tir.Cast(dtype, s) + b[i]
    return tir.PrimFunc([A, B, C, s], ib.get())


def outcome(call, args):
    """What a call did: the arrays after it, or the exception's type and message."""
    copies = [a.copy() if isinstance(a, np.ndarray) and a.flags.writeable else a for a in args]
    try:
        call(*copies)
    except Exception as err:  # the comparison is the point
        return type(err).__name__, str(err)
    return [a for a in copies if isinstance(a, np.ndarray)]


def same(fast, slow):
    if isinstance(fast, tuple) or isinstance(slow, tuple):
        assert fast == slow
        return
    for f, s in zip(fast, slow):
        np.testing.assert_array_equal(f, s)


def test_the_layout_checks_pass_on_cpython():
    # On a standard CPython build with NumPy the fast path must be on; if this
    # fails, every call silently takes the slow path.
    if sys.implementation.name == "cpython" and getattr(sys, "_is_gil_enabled", lambda: True)():
        assert fastcall.available()


def test_valid_calls_never_reach_the_python_checks(binds):
    pf = codegen.build(saxpy_like())["main"]
    assert pf.is_native
    x, y = np.arange(5, dtype="float32"), np.ones(5, "float32")
    z = np.zeros(5, "float32")
    for scalar in (2.0, -0.5, float("inf"), float("nan")):
        pf(x, y, z, scalar)
        with np.errstate(invalid="ignore"):  # 0 * inf
            np.testing.assert_array_equal(z, x * np.float32(scalar) + y)
    pf(x[:0], y[:0], z[:0], 1.0)  # empty arrays: n = 0
    assert binds[0] == 0


def _bad_calls():
    x, y, z = (np.zeros(8, "float32") for _ in range(3))
    ro = np.zeros(8, "float32")
    ro.flags.writeable = False
    unaligned = np.frombuffer(np.zeros(33, "uint8").data, "uint8")[1:].view("float32")
    return {
        "count": (x, y, z),
        "too_many": (x, y, z, 1.0, 2.0),
        "dtype": (x.astype("float64"), y, z, 1.0),
        "not_array": ([0.0] * 8, y, z, 1.0),
        "none": (x, None, z, 1.0),
        "rank": (x.reshape(2, 4), y, z, 1.0),
        "shape_disagrees": (x, y[:7], z, 1.0),
        "strided": (np.zeros(16, "float32")[::2], y, z, 1.0),
        "read_only_output": (x, y, ro, 1.0),
        "read_only_input": (ro, y, z, 1.0),
        "unaligned": (unaligned, y, z, 1.0),
        "big_endian": (x.astype(">f4"), y, z, 1.0),
        "matrix": (np.asmatrix(x), y, z, 1.0),
        "subclass": (x.view(type("Sub", (np.ndarray,), {})), y, z, 1.0),
        "scalar_str": (x, y, z, "1.0"),
        "scalar_bool": (x, y, z, True),
        "scalar_int": (x, y, z, 3),
        "scalar_np_float": (x, y, z, np.float32(2.5)),
        "scalar_np_float64": (x, y, z, np.float64(2.5)),
        "scalar_too_big": (x, y, z, 1e300),
        "scalar_complex": (x, y, z, 1j),
    }


with warnings.catch_warnings():  # np.asmatrix warns that np.matrix is not recommended
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    BAD_CALLS = list(_bad_calls())


@pytest.mark.filterwarnings("ignore:the matrix subclass")
@pytest.mark.parametrize("case", BAD_CALLS)
def test_every_other_call_does_what_the_python_checks_do(case, binds):
    pf = codegen.build(saxpy_like())["main"]
    args = _bad_calls()[case]
    same(outcome(pf, args), outcome(pf.call_checked, args))
    assert binds[0] >= 1  # it went to the Python checks


def _shared_memory_calls():
    """Calls of saxpy_like whose arrays share memory (outcome() would copy them apart)."""
    x = np.arange(16, dtype="float32")
    z = np.zeros(8, "float32")
    return {
        "output_is_input": (x[:8], x[8:], x[:8], 1.0),
        "output_overlaps_input": (x[:8], x[8:], x[4:12], 1.0),
        "inputs_shared": (x[:8], x[:8], z, 1.0),
        "adjacent": (x[:8], x[8:], z, 1.0),
        "empty": (x[:0], x[:0], x[:0], 1.0),
    }


@pytest.mark.parametrize("case", list(_shared_memory_calls()))
def test_shared_memory_calls_do_what_the_python_checks_do(case, binds):
    pf = codegen.build(saxpy_like())["main"]
    results = []
    for call in (pf, pf.call_checked):
        args = _shared_memory_calls()[case]  # fresh arrays, their views shared as given
        try:
            call(*args)
            results.append([a if a.base is None else a.base for a in args[:3]])
        except ValueError as err:
            results.append(str(err))
    if isinstance(results[0], str) or isinstance(results[1], str):
        assert results[0] == results[1] and "share memory" in results[0]
        assert case.startswith("output_")
    else:
        for f, s in zip(*results):
            np.testing.assert_array_equal(f, s)
        assert binds[0] == 1  # only call_checked reached the Python checks


def test_keyword_arguments_are_refused():
    pf = codegen.build(saxpy_like())["main"]
    x = np.zeros(4, "float32")
    with pytest.raises(TypeError, match="keyword"):
        pf(x, x, x, s=1.0)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32",
                                   "uint64"])
def test_integer_scalars_at_and_beyond_their_range(dtype, binds):
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), dtype, name="A")
    k = tir.Var("k", dtype)
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i:
        a[i] = k
    pf = codegen.build(tir.PrimFunc([A, k], ib.get()))["main"]
    info = np.iinfo(dtype)
    for value in (int(info.min), int(info.max), int(info.min) - 1, int(info.max) + 1, 0, 2**70,
                  -2**70, np.int64(5), True):
        args = (np.zeros(3, dtype), value)
        fast, slow = outcome(pf, args), outcome(pf.call_checked, args)
        same(fast, slow)
        if not isinstance(fast, tuple):
            assert (fast[0] == value).all()


def test_symbolic_shapes_bind_across_buffers_and_scalars(binds):
    n, m = tir.size_var("n"), tir.size_var("m")
    A = tir.decl_buffer((n, m), "int32", name="A")
    B = tir.decl_buffer((m,), "int32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i") as i, ib.for_range(0, m, name="j") as j:
        a[i, j] = b[j] + i + n
    pf = codegen.build(tir.PrimFunc([A, B, n], ib.get()))["main"]
    good = (np.zeros((3, 4), "int32"), np.arange(4, dtype="int32"), 3)
    out = outcome(pf, good)
    np.testing.assert_array_equal(out[0], np.arange(4) + np.arange(3)[:, None] + 3)
    assert binds[0] == 0
    for args in [(good[0], np.arange(5, dtype="int32"), 3), (good[0], good[1], 4),
                 (good[0], good[1], -1)]:
        same(outcome(pf, args), outcome(pf.call_checked, args))


def test_a_failing_assertion_raises_through_the_native_path():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    ib.emit(tir.AssertStmt(n > 0, "n must be positive", tir.Evaluate(0)))
    A[0] = 1.0
    pf = codegen.build(tir.PrimFunc([A, n], ib.get()))["main"]
    assert pf.is_native
    with pytest.raises(RuntimeError, match="main: assertion failed: n must be positive"):
        pf(np.zeros(1, "float32"), 0)
    a = np.zeros(1, "float32")
    pf(a, 1)
    assert a[0] == 1.0


def test_bool_params_and_buffers():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "bool", name="A")
    flag = tir.Var("flag", "bool")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i:
        a[i] = a[i] != flag
    pf = codegen.build(tir.PrimFunc([A, flag], ib.get()))["main"]
    for value in (True, False, np.bool_(True), 1, None):
        args = (np.array([True, False, True]), value)
        same(outcome(pf, args), outcome(pf.call_checked, args))


def test_no_reference_is_leaked_or_lost():
    pf = codegen.build(saxpy_like())["main"]
    x, y, z = (np.zeros(4, "float32") for _ in range(3))
    gc.disable()  # a collection in between would move the counts by itself
    try:
        before = sys.getrefcount(None), sys.getrefcount(x)
        for _ in range(1000):  # a reference gained or lost per call shows as +-1000
            pf(x, x, z, 1.0)  # x only read, twice: allowed
        for _ in range(100):
            with pytest.raises(ValueError):
                pf(x, y[:3], z, 1.0)
            with pytest.raises(ValueError, match="share memory"):
                pf(x, y, x, 1.0)
        after = sys.getrefcount(None), sys.getrefcount(x)
    finally:
        gc.enable()
    assert abs(after[0] - before[0]) < 50 and after[1] == before[1]


def test_calls_from_threads_release_the_gil_and_agree():
    pf = codegen.build(saxpy_like("float64", "float64"))["main"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(100_000), rng.standard_normal(100_000)
    outs = [np.zeros_like(a) for _ in range(4)]
    want = [np.zeros_like(a) for _ in range(4)]
    for k, w in enumerate(want):  # one thread first: the same code gives the same bits
        pf(a, b, w, float(k))

    def work(out, k):
        for _ in range(20):
            pf(a, b, out, float(k))

    threads = [threading.Thread(target=work, args=(out, k)) for k, out in enumerate(outs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out, w in zip(outs, want):
        np.testing.assert_array_equal(out, w)
    np.testing.assert_allclose(want[3], a * 3.0 + b, rtol=1e-15, atol=1e-15)


def test_interfaces_the_native_checks_do_not_cover_use_the_python_path():
    n = tir.size_var("n")
    A = tir.decl_buffer((n * 2,), "float32", name="A")  # a composite shape expression
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n * 2, name="i") as i:
        a[i] = a[i] + 1.0
    pf = codegen.build(tir.PrimFunc([A, n], ib.get()))["main"]
    assert not pf.is_native
    x = np.zeros(6, "float32")
    pf(x, 3)
    assert (x == 1).all()


def test_native_calls_can_be_turned_off():
    code = (
        "import numpy as np, codegen, tir\n"
        "from tir import ir_builder\n"
        "ib = ir_builder.create(); A = ib.pointer('float32', name='A'); A[0] = 2.0\n"
        "pf = codegen.build(tir.PrimFunc([A], ib.get()))['main']\n"
        "a = np.zeros(1, 'float32'); pf(a); print(pf.is_native, a[0])\n"
    )
    env = {"TIRLITE_NATIVE_CALLS": "0", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert out.stdout.split() == ["False", "2.0"]


def test_kernels_sharing_a_wrapper_check_their_own_sizes(binds):
    def add(n):
        A, B = tir.decl_buffer((n, 3), "float32", name="A"), tir.decl_buffer((n,), "int8", name="B")
        ib = ir_builder.create()
        a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
        with ib.for_range(0, n, name="i") as i:
            b[i] = tir.Cast("int8", a[i, 2])
        return codegen.build(tir.PrimFunc([A, B], ib.get()))["main"]

    small, large = add(4), add(6)  # one interface, so one compiled wrapper
    for pf, n in ((small, 4), (large, 6)):
        a = np.arange(n * 3, dtype="float32").reshape(n, 3)
        b = np.zeros(n, "int8")
        pf(a, b)
        np.testing.assert_array_equal(b, a[:, 2].astype("int8"))
    assert binds[0] == 0
    for pf, n in ((small, 6), (large, 4)):
        args = (np.zeros((n, 3), "float32"), np.zeros(n, "int8"))
        fast = outcome(pf, args)
        assert fast == outcome(pf.call_checked, args) and fast[0] == "ValueError"
