"""Buffer arguments that share memory: refused, unless the function declares its params may alias.

Buffer params are compiled ``noalias``. A call whose arrays overlap for two of
them (one array twice, overlapping views of one array) is a ``ValueError``
naming both, on the native path (codegen/runtime/fastcall.py) and the Python one
(codegen/runtime/args.py) alike, when the function stores into either. A function
with the attribute ``"tir.noalias": False`` takes any overlap and computes the
serial reading of its body, vectorized loops included.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.runtime.args import ArgBinder, check_overlap
from tir import ir_builder

MAY_ALIAS = {"tir.noalias": False}
SHARE = r"arguments '{}' and '{}' share memory \(overlapping ranges\); buffer parameters must " \
    r"not alias\. Pass a copy \({}\.copy\(\)\) or declare .*tir\.noalias.*False"


def shift(attrs=None):
    """``B[i + 1] = A[i] * 2`` in a vectorized loop (the issue's reproducer)."""
    n = tir.size_var("n")
    A, B = (tir.decl_buffer((n,), "float32", name=x) for x in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n - 1, kind="vectorize", name="i") as i:
        b[i + 1] = a[i] * 2.0
    return tir.PrimFunc([A, B], ib.get(), attrs=attrs)


def add():
    """``C[i] = A[i] + B[i]``: A and B only read."""
    n = tir.size_var("n")
    A, B, C = (tir.decl_buffer((n,), "float32", name=x) for x in "ABC")
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in (A, B, C))
    with ib.for_range(0, n, name="i") as i:
        c[i] = a[i] + b[i]
    return tir.PrimFunc([A, B, C], ib.get())


def fill():
    """``A[:] = 1; B[:] = 2`` over sizes of their own: both written."""
    A = tir.decl_buffer((tir.size_var("n"),), "float32", name="A")
    B = tir.decl_buffer((tir.size_var("m"),), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, A.shape[0], name="i") as i:
        a[i] = 1.0
    with ib.for_range(0, B.shape[0], name="j") as j:
        b[j] = 2.0
    return tir.PrimFunc([A, B], ib.get())


def strided():
    """``B[i, j] = A[i, j] + 1`` on 2-d buffers with symbolic strides (any view)."""
    m, n = tir.size_var("m"), tir.size_var("n")
    A, B = (tir.decl_buffer((m, n), "float32", name=x, strides=[tir.var(x + "s0"),
                                                                tir.var(x + "s1")])
            for x in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, m, name="i") as i:
        with ib.for_range(0, n, name="j") as j:
            b[i, j] = a[i, j] + 1.0
    return tir.PrimFunc([A, B], ib.get())


def rows():
    """``B[0, j] = A[0, j]`` on (1, n) buffers: a (1, n) view reversed on axis 0 is
    C-contiguous with a negative stride."""
    n = tir.size_var("n")
    A, B = (tir.decl_buffer((1, n), "float32", name=x) for x in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="j") as j:
        b[0, j] = a[0, j]
    return tir.PrimFunc([A, B], ib.get())


KERNELS = {"shift": shift, "add": add, "fill": fill, "strided": strided, "rows": rows}


def x64():
    return np.arange(1, 65, dtype="float32")


def grid():
    return np.arange(16, dtype="float32").reshape(4, 4)


def reversed_row(x):
    return x.reshape(1, -1)[::-1]


#: name -> (kernel, the arguments, None if accepted or (first, second, copied) if refused)
CASES = {
    "same_array": ("shift", lambda: (lambda x: (x, x))(x64()), ("A", "B", "A")),
    "views_3_apart": ("shift", lambda: (lambda x: (x[:-3], x[3:]))(x64()), ("A", "B", "A")),
    "views_1_apart_reversed_roles": ("shift", lambda: (lambda x: (x[1:], x[:-1]))(x64()),
                                     ("A", "B", "A")),
    "one_element_inside": ("fill", lambda: (lambda x: (x, x[3:4]))(x64()), ("A", "B", "B")),
    "read_and_written": ("add", lambda: (lambda x: (x, np.ones(64, "float32"), x))(x64()),
                         ("A", "C", "A")),
    "transposed": ("strided", lambda: (lambda x: (x, x.T))(grid()), ("A", "B", "A")),
    "columns_interleaved": ("strided", lambda: (lambda x: (x[:, :2], x[:, 2:]))(grid()),
                            ("A", "B", "A")),  # byte ranges overlap: refused, conservatively
    "negative_stride": ("rows", lambda: (lambda x: (x.reshape(1, -1), reversed_row(x)))(x64()),
                        ("A", "B", "A")),
    "negative_stride_disjoint": ("rows", lambda: (lambda x: (reversed_row(x[:32]),
                                                             x[32:].reshape(1, -1)))(x64()),
                                 None),
    "halves": ("shift", lambda: (lambda x: (x[:32], x[32:]))(x64()), None),
    "halves_swapped": ("shift", lambda: (lambda x: (x[32:], x[:32]))(x64()), None),
    "rows_of_a_grid": ("strided", lambda: (lambda x: (x[:2], x[2:]))(grid()), None),
    "empty_twice": ("shift", lambda: (lambda x: (x[5:5], x[5:5]))(x64()), None),
    "empty_inside": ("fill", lambda: (lambda x: (x, x[3:3]))(x64()), None),
    "inputs_shared": ("add", lambda: (lambda x: (x, x, np.zeros(64, "float32")))(x64()), None),
}


def outcome(call, args):
    """What a call did: the arrays' bases after it, or the exception's type and message."""
    try:
        call(*args)
    except Exception as err:  # the comparison is the point
        return type(err).__name__, str(err)
    return [a.base if a.base is not None else a for a in args]


@pytest.mark.parametrize("case", list(CASES))
def test_native_and_python_checks_agree_on_shared_memory(case, binds):
    kernel, make, refused = CASES[case]
    pf = codegen.build(KERNELS[kernel]())["main"]
    fast, slow = outcome(pf, make()), outcome(pf.call_checked, make())
    if isinstance(fast, tuple) or isinstance(slow, tuple):
        assert fast == slow
    else:
        for f, s in zip(fast, slow):
            np.testing.assert_array_equal(f, s)
    if refused is None:
        assert not isinstance(fast, tuple), fast
        # call_checked reached the Python checks; pf too for strided (no native checks)
        assert binds[0] == (2 if kernel == "strided" else 1)
        return
    assert fast[0] == "ValueError"
    with pytest.raises(ValueError, match="main: " + SHARE.format(*refused)):
        pf(*make())
    with pytest.raises(ValueError, match="main: " + SHARE.format(*refused)):
        pf.call_checked(*make())


def test_disjoint_views_compute_as_separate_arrays():
    pf = codegen.build(shift())["main"]
    x = x64()
    pf(x[:32], x[32:])
    want = x64()
    want[33:] = want[:31] * 2
    np.testing.assert_array_equal(x, want)


def _byte_range(a: np.ndarray) -> tuple[int, int]:
    """[lowest byte, highest byte + itemsize) from the data pointer, shape and strides."""
    start = a.__array_interface__["data"][0]
    if a.size == 0:
        return start, start
    low = sum(min(0, (d - 1) * s) for d, s in zip(a.shape, a.strides))
    high = sum(max(0, (d - 1) * s) for d, s in zip(a.shape, a.strides))
    return start + low, start + high + a.itemsize


def _views(x):
    yield from (x, x[:0], x[7:7], x[::-1], x[::-2], x[3:9], x[9:3:-1], x[10:], x[:10],
                x[::3], x[-1:], x[:1], x[20:30][::-1])
    g = x[:60].reshape(6, 10)
    yield from (g.T, g[::-1], g[:, ::-1], g[2:4], g[:, 5:], g[4:, ::-1].T, g[:0, :])


def test_the_overlap_test_is_the_byte_range_compare():
    # Both paths compare [lowest byte, highest byte + itemsize), negative strides
    # included; an empty array overlaps nothing.
    binder = ArgBinder(shift())
    specs = [binder._specs[0], binder._specs[1]]
    x = np.zeros(64, "float32")
    for a in _views(x):
        for b in _views(x):
            (sa, ea), (sb, eb) = _byte_range(a), _byte_range(b)
            overlaps = max(sa, sb) < min(ea, eb)
            if overlaps:
                with pytest.raises(ValueError, match=SHARE.format("A", "B", "A")):
                    check_overlap("main", *specs, a, b)
            else:
                check_overlap("main", *specs, a, b)


def _serial_shift(x: np.ndarray, a_at: int, b_at: int, n: int) -> np.ndarray:
    """The serial reading of ``shift`` on views x[a_at:a_at+n] and x[b_at:b_at+n]."""
    x = x.copy()
    for i in range(n - 1):
        x[b_at + i + 1] = x[a_at + i] * np.float32(2)
    return x


@pytest.mark.parametrize("vectorize", [True, False])
@pytest.mark.parametrize("a_at,b_at", [(0, 0), (0, 1), (1, 0), (0, 5), (5, 0), (0, 40)])
def test_may_alias_computes_the_serial_reading(a_at, b_at, vectorize, binds):
    config = {"tir.disable_vectorize": not vectorize}
    with transform.PassContext(config=config):
        pf = codegen.build(shift(MAY_ALIAS))["main"]
    n = 64 - max(a_at, b_at)
    x = x64()
    want = _serial_shift(x, a_at, b_at, n)
    pf(x[a_at:a_at + n], x[b_at:b_at + n])
    np.testing.assert_array_equal(x, want)
    y = x64()
    pf.call_checked(y[a_at:a_at + n], y[b_at:b_at + n])
    np.testing.assert_array_equal(y, want)
    assert pf.is_native and binds[0] == 1  # only call_checked reached the Python checks


def test_may_alias_keeps_the_vectorized_loop_serial_with_a_remark():
    lib = codegen.build(shift(MAY_ALIAS))
    assert "ptr noalias" not in lib.get_source("ll")
    said = [str(r) for r in lib.remarks if "not vectorized" in str(r)]
    assert said and all("may be the same memory" in s and "tir.noalias False" in s
                        for s in said)
    # Without the attribute, the same loop is vectorized: the params are distinct memory.
    assert not any("not vectorized" in str(r) for r in codegen.build(shift()).remarks)


def test_the_interpreter_agrees_on_aliased_calls():
    lib = codegen.build(shift(MAY_ALIAS), target="interp")
    x = x64()
    lib["main"](x, x)
    np.testing.assert_array_equal(x, _serial_shift(x64(), 0, 0, 64))
    with pytest.raises(ValueError, match=SHARE.format("A", "B", "A")):
        codegen.build(shift(), target="interp")["main"](x, x)


def _reduce(attrs):
    """``S[0] = S[0] + A[i]`` in a vectorized loop (a reduction)."""
    n = tir.size_var("n")
    A, S = tir.decl_buffer((n,), "float32", name="A"), tir.decl_buffer((1,), "float32", name="S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        s[0] = s[0] + a[i]
    return tir.PrimFunc([A, S], ib.get(), attrs=attrs)


def _argmax(attrs):
    """``if A[i] > M[0]: M[0] = A[i]; K[0] = i`` in a vectorized loop (a search)."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    M, K = tir.decl_buffer((1,), "float32", name="M"), tir.decl_buffer((1,), "int32", name="K")
    ib = ir_builder.create()
    a, m, k = ib.buffer_ptr(A), ib.buffer_ptr(M), ib.buffer_ptr(K)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(a[i] > m[0]):
            m[0] = a[i]
            k[0] = i
    return tir.PrimFunc([A, M, K], ib.get(), attrs=attrs)


def test_a_reduction_into_memory_it_reads_stays_serial():
    with transform.collect_remarks() as remarks:
        pf = codegen.build(_reduce(MAY_ALIAS))["main"]
    assert any("S[0] = S[0] + A[i]: S and A may share memory" in str(r) for r in remarks)
    x = x64()
    pf(x, x[5:6])  # S is A[5]: the sum reads its own running value at i = 5
    want = x64()
    for i in range(64):
        want[5] = want[5] + want[i]
    np.testing.assert_array_equal(x, want)
    with pytest.raises(ValueError, match=SHARE.format("A", "S", "A")):
        codegen.build(_reduce(None))["main"](x, x[5:6])


def test_a_search_whose_best_value_is_in_its_input_stays_serial():
    with transform.collect_remarks() as remarks:
        pf = codegen.build(_argmax(MAY_ALIAS))["main"]
    assert any("may share memory" in str(r) for r in remarks)
    rng = np.random.default_rng(3)
    x = rng.random(64, dtype=np.float32)
    want = x.copy()
    k = np.zeros(1, "int32")
    pf(x, x[40:41], k)  # M is A[40]
    want_k = 0
    for i in range(64):
        if want[i] > want[40]:
            want[40] = want[i]
            want_k = i
    np.testing.assert_array_equal(x, want)
    assert k[0] == want_k
