"""If-converted kernels built end to end: masked LLVM accesses and selects, vectorized
remarks, the same bits as the serial build and the interpreter, and no read of memory the
serial program does not read."""

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from kernels import conv3x3_guarded_func, conv3x3_reference

import codegen
import tir
import transform
from tir import ir_builder

F32, I32 = "float32", "int32"
#: Lanes of a float32 / int32 vector register on this host (never hard-coded).
VL = codegen.Target("llvm").vector_width_bits // 32
STRICT_FP = {"codegen.llvm.fp_contract": False}
SERIAL = {**STRICT_FP, "tir.disable_vectorize": True}
EXTENTS = range(0, 101)


def _loop(names, dtype=F32, extra=()):
    """An ir_builder, the buffers ``names`` of shape (n,), their pointers and ``n``."""
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n,), dtype, name=name) for name in names]
    bufs += [tir.decl_buffer(shape, dtype, name=name) for name, shape in extra]
    ib = ir_builder.create()
    return ib, bufs, [ib.buffer_ptr(b) for b in bufs], n


def if_else_kernel() -> tir.PrimFunc:
    """``C = A * B + 1 if A > 0 else B[j + 1] - A`` (the else reads one past the end)."""
    ib, bufs, (a, b, c), n = _loop("ABC")
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        with ib.if_scope(a[j] > 0.0):
            c[j] = a[j] * b[j] + 1.0
        with ib.else_scope(), ib.if_scope(j < n - 1):
            c[j] = b[j + 1] - a[j]
    return tir.PrimFunc(bufs, ib.get())


def nested_let_kernel() -> tir.PrimFunc:
    """Nested ifs, a let in a branch and an if without else."""
    ib, bufs, (a, b, c), n = _loop("ABC")
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        with ib.if_scope(a[j] >= 0.0):
            t = ib.let("t", b[j] * 2.0)
            with ib.if_scope(t < a[j]):
                c[j] = t
            with ib.else_scope():
                c[j] = -t
        with ib.if_scope(b[j] != b[j]):  # NaN
            a[j] = tir.const(-0.0, F32)
    return tir.PrimFunc(bufs, ib.get())


def division_kernel() -> tir.PrimFunc:
    """``C = A // B`` where ``B != 0 and B != -1``, else ``A % 7``: no lane may trap."""
    ib, bufs, (a, b, c), n = _loop("ABC", I32)
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        with ib.if_scope(tir.all(b[j] != 0, b[j] != -1)):
            c[j] = tir.floordiv(a[j], b[j]) + tir.truncmod(a[j], b[j])
        with ib.else_scope():
            c[j] = tir.floormod(a[j], 7)
    return tir.PrimFunc(bufs, ib.get())


def last_positive_kernel() -> tir.PrimFunc:
    """``if A[j] > 0: L[0] = A[j]``: every iteration may store to one element (scalarized)."""
    ib, bufs, (a, b, c, last), n = _loop("ABC", extra=[("L", (1,))])
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        with ib.if_scope(a[j] > 0.0):
            last[0] = a[j]
            c[j] = b[j]
    return tir.PrimFunc(bufs, ib.get())


KERNELS = {"if_else": if_else_kernel, "nested_let": nested_let_kernel,
           "division": division_kernel, "last_positive": last_positive_kernel}


def _build(func, config, target="llvm"):
    with transform.PassContext(config=config) as ctx:
        return codegen.build(func, target=target), ctx.remarks


def special_floats(rng, n):
    """Normal values mixed with NaN, +-0, +-inf, huge and tiny ones."""
    out = rng.standard_normal(n).astype(np.float32)
    specials = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 3e38, -3e38, 1e-45], np.float32)
    pick = rng.random(n) < 0.3
    out[pick] = rng.choice(specials, pick.sum())
    return out


def extreme_ints(rng, n):
    """Small values (many 0 and -1 divisors) mixed with INT_MIN, INT_MAX and random ones."""
    out = rng.integers(-3, 4, n, dtype=np.int32)
    info = np.iinfo(np.int32)
    specials = np.array([info.min, info.max, info.min + 1, -1, 0, 1], np.int32)
    pick = rng.random(n) < 0.4
    out[pick] = rng.choice(specials, pick.sum())
    wide = rng.random(n) < 0.2
    out[wide] = rng.integers(info.min, info.max, wide.sum(), dtype=np.int32)
    return out


def _inputs(func, rng, n):
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        size = n if len(buf.shape) == 1 and not isinstance(buf.shape[0], tir.IntImm) else 1
        maker = special_floats if buf.dtype == F32 else extreme_ints
        arrays.append(maker(rng, size))
    return arrays


@pytest.mark.parametrize("name", KERNELS)
def test_matches_serial_build_and_interpreter_bit_for_bit(name):
    func = KERNELS[name]()
    vector, _ = _build(func, STRICT_FP)
    serial, _ = _build(func, SERIAL)
    interp, _ = _build(func, STRICT_FP, target="interp")
    rng = np.random.default_rng(14)
    for n in EXTENTS:
        inputs = _inputs(func, rng, n)
        results = []
        for run in (vector, serial, interp):
            arrays = [x.copy() for x in inputs]
            run(*arrays)
            results.append(arrays)
        assert _bits(results[0]) == _bits(results[1]), (name, n, "vector vs serial")
        # IEEE 754 leaves the sign and payload of an arithmetic NaN open (x86 keeps the
        # operand's, NumPy may not): against the interpreter every NaN counts as one.
        assert _bits(results[0], True) == _bits(results[2], True), (name, n, "vs interpreter")


def _bits(arrays, one_nan=False) -> bytes:
    if one_nan:
        arrays = [np.where(np.isnan(x), np.float32(np.nan), x) if x.dtype == np.float32
                  else x for x in arrays]
    return b"".join(x.tobytes() for x in arrays)


def test_if_else_builds_masked_accesses_and_vectorizes():
    lib, remarks = _build(if_else_kernel(), STRICT_FP)
    ir = lib.get_source("ll")
    assert f"@llvm.masked.load.v{VL}f32" in ir and f"@llvm.masked.store.v{VL}f32" in ir
    # One remark: the if-conversion of the full vectors and of the tail said once.
    [remark] = [r for r in remarks if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "vectorized" and remark.line.count("if-converted: if ") == 1
    assert remark.reason.endswith("; predicated tail"), remark


def test_same_location_if_else_is_a_vector_select():
    ib, bufs, (a, b, c), n = _loop("ABC")
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        with ib.if_scope(a[j] > b[j]):
            c[j] = a[j]
        with ib.else_scope():
            c[j] = b[j]
    lib, remarks = _build(tir.PrimFunc(bufs, ib.get()), STRICT_FP)
    assert f"select <{VL} x i1>" in lib.get_source("ll")
    [remark] = [r for r in remarks if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "vectorized" and remark.reason.endswith("; predicated tail")


def test_without_the_pass_the_same_kernel_is_scalarized():
    _, remarks = _build(if_else_kernel(), {"tir.vectorize.if_conversion": False})
    [remark] = remarks  # the tail's remark is a detail: why it is not predicated either
    assert remark.outcome == "scalarized" and "if condition depends on j" in remark.reason
    assert "; tail scalarized: if condition depends on j (not predicated" in remark.reason


@pytest.mark.parametrize("w", [1, 2, 3, 4, VL - 1, VL, VL + 2, VL + 3, 2 * VL + 5, 3 * VL + 2])
def test_guarded_conv3x3_vectorizes_and_matches_serial(w):
    func = conv3x3_guarded_func()
    vector, remarks = _build(func, STRICT_FP)
    serial, _ = _build(func, SERIAL)
    # One remark for loop x; its if in the user's index (x + 2 < w), said once.
    [remark] = [r for r in remarks if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "vectorized" and remark.reason.endswith("; predicated tail")
    assert remark.line.count("; if-converted: if x + 2 < w (") == 1, remark
    rng = np.random.default_rng(w)
    img = special_floats(rng, 6 * w).reshape(6, w)
    weights = rng.standard_normal(9).astype(np.float32)
    outs = []
    for run in (vector, serial):
        out = np.full((6, w), 7.0, np.float32)
        run(img, weights, out)
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    finite = np.isfinite(img).all()
    if finite:
        np.testing.assert_allclose(outs[0], conv3x3_reference(img, weights,
                                                              np.full((6, w), 7.0, np.float32)),
                                   rtol=1e-5, atol=1e-5)


# B ends where an inaccessible page begins: the else branch's B[j + 1] on the last lane
# would touch it. The vector build must neither fault nor read it (run in a subprocess).
_GUARD_PAGE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, {test_dir!r})
    from test_if_convert_build import if_else_kernel
    from guard_page import at_page_end

    with transform.PassContext(config={{"tir.instrument_bound_checkers": False}}):
        lib = codegen.build(if_else_kernel(), target="llvm")
    for n in range(1, 70):
        keep = [at_page_end(n) for _ in range(3)]
        a, b, c = (arr for _, arr in keep)
        a[:] = -1.0  # every lane takes the else branch, the last one reads nothing
        b[:] = np.arange(n, dtype=np.float32)
        lib(a, b, c)
        assert (c[:-1] == b[1:] + 1).all(), n
    print("ok")
""")


def test_untaken_branch_load_past_the_end_does_not_fault():
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_guard_page_catches_the_same_load_unmasked():
    """The control: with every load taken for in bounds (so unmasked), the script crashes."""
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent)).replace(
        "import codegen, transform",
        "import codegen, transform\nimport transform.vector.if_convert_vector_loops as ic\n"
        "ic.is_in_bounds = lambda *args, **kwargs: True")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]
