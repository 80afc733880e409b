"""``codegen.build_for_tuning``: the same results as ``build``, without the bounds checks;
``build_tuning_artifact`` / ``load_artifact``: that code as bytes, loaded here or elsewhere.

Scheduled kernels (a packed, tiled matmul; a conv computed per tile) give
NumPy's results through both builds; a function with an unproven access gets
an assert from ``build`` only, and one always out of bounds is rejected by
``build`` only. No timing here (benchmarks/bench_build_time.py times builds).
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import te
from tir.functor import post_order_visit
from tir.stmt import AssertStmt

LANES = 8  # vectors of 8 float32: AVX2 registers, half an AVX-512 one


def _matmul(m: int) -> tir.PrimFunc:
    """C = A @ B: B packed in panels of 2 * LANES columns, C in 4 x 2-vector tiles."""
    a = te.placeholder((m, m), "float32", "A")
    b = te.placeholder((m, m), "float32", "B")
    k = te.reduce_axis((0, m), "k")
    c = te.compute((m, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([a, b, c]))
    block = sch.get_block("C")
    panel = 2 * LANES
    packed = sch.cache_read(block, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // panel, kk, jj % panel))
    i, j, kk = sch.get_loops(block)
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, panel])
    sch.reorder(jo, io, kk, ii, ji)
    local = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(local, io)
    sch.vectorize(sch.get_loops(local)[-1])
    sch.vectorize(ji)
    sch.unroll(ii)
    sch.decompose_reduction(block, kk)
    return sch.mod["main"]


def _conv(n: int, ci: int, co: int, h: int, w: int) -> tir.PrimFunc:
    """3x3 conv + bias + ReLU, the conv computed per tile of 4 pixels x LANES channels,
    bias as the reduction's init."""
    inp = te.placeholder((n, h + 2, w + 2, ci), "float32", "inp")
    filt = te.placeholder((ci, 3, 3, co), "float32", "filt")
    bias = te.placeholder((co,), "float32", "bias")
    ry, rx, rc = te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"), te.reduce_axis(
        (0, ci), "rc")
    conv = te.compute((n, h, w, co), lambda b, y, x, c: te.sum(
        filt[rc, ry, rx, c] * inp[b, y + ry, x + rx, rc], axis=[ry, rx, rc], init=bias[c]),
        name="conv")
    relu = te.compute((n, h, w, co), lambda b, y, x, c: tir.max(
        conv[b, y, x, c], tir.const(0, "float32")), name="relu")
    sch = tir.Schedule(te.create_prim_func([inp, filt, bias, relu]))
    _, _, x, c = sch.get_loops(sch.get_block("relu"))
    co_, ci_ = sch.split(c, [None, LANES])
    xo, xi = sch.split(x, [None, 4])
    sch.reorder(co_, xo, xi, ci_)
    block = sch.get_block("conv")
    sch.compute_at(block, xo)
    px, ch, ky, kx, kc = sch.get_loops(block)[-5:]
    sch.reorder(ky, kx, kc, px, ch)  # the tile's accumulators inside the reduction
    init = sch.decompose_reduction(block, ky)
    for pixels, channels in ((xi, ci_), (px, ch), tuple(sch.get_loops(init)[-2:])):
        sch.vectorize(channels)
        sch.unroll(pixels)
    return sch.mod["main"]


def _conv_reference(inp, filt, bias):
    n, h2, w2, _ = inp.shape
    out = np.zeros((n, h2 - 2, w2 - 2, filt.shape[3]), "float32") + bias
    for ky in range(3):
        for kx in range(3):
            out += np.einsum("nyxc,co->nyxo", inp[:, ky:ky + h2 - 2, kx:kx + w2 - 2, :],
                             filt[:, ky, kx, :])
    return np.maximum(out, 0)


def _artifact_build(func, target):
    """``build_tuning_artifact`` through bytes, as a tuner's runner loads it."""
    return codegen.load_artifact(bytes(codegen.build_tuning_artifact(func, target)))


BUILDS = [codegen.build, codegen.build_for_tuning, _artifact_build]


@pytest.mark.parametrize("build", BUILDS)
def test_scheduled_matmul_matches_numpy(build):
    m = 48  # 3 panels of 16 columns, 12 tiles of 4 rows
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (m, m)).astype("float32") for _ in range(2))
    c = np.zeros((m, m), "float32")
    build(_matmul(m), "llvm")(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("build", BUILDS)
def test_scheduled_conv_matches_numpy(build):
    n, ci, co, h, w = 2, 5, 16, 3, 8
    rng = np.random.default_rng(1)
    inp = rng.uniform(-1, 1, (n, h + 2, w + 2, ci)).astype("float32")
    filt = rng.uniform(-1, 1, (ci, 3, 3, co)).astype("float32")
    bias = rng.uniform(-1, 1, co).astype("float32")
    out = np.zeros((n, h, w, co), "float32")
    build(_conv(n, ci, co, h, w), "llvm")(inp, filt, bias, out)
    np.testing.assert_allclose(out, _conv_reference(inp, filt, bias), rtol=1e-4, atol=1e-4)


def _scaled_add(offset: int) -> tir.PrimFunc:
    """``A[i * s + offset] += 1`` for i < 4, ``s`` a parameter: unprovable in bounds."""
    s = tir.var("s")
    i = tir.var("i")
    A = tir.decl_buffer((16,), "float32", name="A")
    index = i * s + offset
    body = tir.BufferStore(A, tir.BufferLoad(A, [index]) + tir.const(1, "float32"), [index])
    return tir.PrimFunc([A, s], tir.For(i, 0, 4, tir.ForKind.SERIAL, body))


def _asserts(func: tir.PrimFunc) -> list:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, AssertStmt)
                         else None)
    return found


def test_tuning_config_drops_the_run_time_checks():
    func = _scaled_add(0)
    assert _asserts(codegen.lower(func)["main"])
    with transform.PassContext(config=codegen.TUNING_BUILD_CONFIG):
        assert not _asserts(codegen.lower(func)["main"])
    with pytest.raises(RuntimeError, match="index out of bounds"):
        codegen.build(func, "llvm")(np.zeros(16, "float32"), 6)  # i = 3 stores A[18]
    tuned = codegen.build_for_tuning(func, "llvm")
    assert "index out of bounds" not in tuned.get_source("ll")
    a = np.zeros(16, "float32")
    tuned(a, 2)
    assert a.tolist() == [1, 0, 1, 0, 1, 0, 1] + [0] * 9


def test_tuning_build_skips_the_build_time_rejection():
    func = _scaled_add(16)  # A[i * s + 16]: A[16] at i = 0, whatever s is
    with pytest.raises(ValueError, match="out of bounds on every execution"):
        codegen.build(func, "llvm")
    codegen.build_for_tuning(func, "llvm")  # compiles; a tuner's output check rejects it


class _LastModule(transform.PassInstrument):
    """Keeps the module after the last pass that ran."""

    def run_after_pass(self, mod, info):
        self.mod = mod


def _ramps(mod) -> list:
    found = []
    post_order_visit(mod["main"].body, lambda n: found.append(n)
                         if isinstance(n, tir.Ramp) else None)
    return found


def test_tuning_build_keeps_the_current_context():
    func = _matmul(16)
    last = _LastModule()
    with transform.PassContext(config={"tir.disable_vectorize": True}, instruments=[last]):
        codegen.build_for_tuning(func, "llvm")
    assert not _ramps(last.mod)  # the outer config holds; so does its instrument
    with transform.PassContext(instruments=[last]):
        codegen.build_for_tuning(func, "llvm")
    assert _ramps(last.mod)


def test_tuning_config_is_read_only():
    with pytest.raises(TypeError):
        codegen.TUNING_BUILD_CONFIG["tir.instrument_bound_checkers"] = True


def test_artifact_has_no_run_time_checks_but_checks_its_arguments():
    func = _scaled_add(0)
    data = codegen.build_tuning_artifact(func, "llvm")
    a = np.zeros(16, "float32")
    codegen.load_artifact(data)(a, 2)
    assert a.tolist() == [1, 0, 1, 0, 1, 0, 1] + [0] * 9
    with pytest.raises(TypeError, match="expects 2 arguments"):
        codegen.load_artifact(data)(a)  # the signatures travel with the code
    with pytest.raises((TypeError, ValueError), match="float32"):
        codegen.load_artifact(data)(np.zeros(16, "float64"), 2)


def test_artifact_loads_in_another_process(tmp_path):
    import subprocess
    import sys

    m = 32
    path = tmp_path / "matmul.artifact"
    path.write_bytes(codegen.build_tuning_artifact(_matmul(m), "llvm"))
    script = f"""
import numpy as np, codegen
mod = codegen.load_artifact(open({str(path)!r}, "rb").read())
rng = np.random.default_rng(0)
a, b = (rng.uniform(-1, 1, ({m}, {m})).astype("float32") for _ in range(2))
c = np.zeros(({m}, {m}), "float32")
mod(a, b, c)
np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def _repacked(data: bytes, **changes) -> bytes:
    from codegen.runtime import disk_cache

    header, obj = disk_cache.unpack(data)
    return disk_cache.pack({**header, **changes}, obj)


def test_bad_artifacts_are_value_errors():
    data = codegen.build_tuning_artifact(_scaled_add(0), "llvm")
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    for bad in (data[:-10], bytes(flipped), b"", b"\x7fELF not an artifact", data[:40]):
        with pytest.raises(ValueError, match="not a tirlite artifact"):
            codegen.load_artifact(bad)
    with pytest.raises(ValueError, match="no_such_function_xyz"):
        codegen.load_artifact(_repacked(data, externals=["no_such_function_xyz"]))
