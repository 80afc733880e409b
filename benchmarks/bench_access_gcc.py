"""The access benchmark's gcc peer: the same kernels as plain C loops, ``gcc -O3``.

bench_access.py times them beside tirlite, NumPy, numba, TVM and Halide. Each
kernel is the loop a C programmer writes (no intrinsics, no pragmas), built
once into a shared library with ``gcc -O3 -march=CPU`` and called through
ctypes on the NumPy arrays. ``CPU`` is the one tirlite targets: ``native``,
or the ``-mcpu`` of ``TIRLITE_HOST_TARGET`` (``znver3`` for the AVX2 rows),
so both compilers see the same instruction set. The float sums are compiled
with ``-fassociative-math -fno-signed-zeros -fno-trapping-math`` (what lets
gcc reassociate them into vector partial sums, as tirlite does by default
and numba with ``fastmath``); no other kernel has an operation those flags
change.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from collections.abc import Callable

import numpy as np

#: The C source of every kernel; ``n`` is the number of output elements.
SOURCE = r"""
#include <stdint.h>
void copy_s2(const float *restrict a, float *restrict b, long n) {
    for (long i = 0; i < n; i++) b[i] = a[2 * i];
}
void copy_s3(const float *restrict a, float *restrict b, long n) {
    for (long i = 0; i < n; i++) b[i] = a[3 * i];
}
void store_s2(const float *restrict a, float *restrict b, long n) {
    for (long i = 0; i < n; i++) b[2 * i] = a[i];
}
void group5(const float *restrict a, float *restrict b, long n) {
    for (long i = 0; i < n; i++)
        b[i] = a[5 * i] + a[5 * i + 1] + a[5 * i + 2] + a[5 * i + 3] + a[5 * i + 4];
}
void sum_s2(const float *restrict a, float *restrict s, long n) {
    float acc = 0.0f;
    for (long i = 0; i < n; i++) acc += a[2 * i];
    s[0] = acc;
}
void sum_s3(const float *restrict a, float *restrict s, long n) {
    float acc = 0.0f;
    for (long i = 0; i < n; i++) acc += a[3 * i];
    s[0] = acc;
}
void reverse(const float *restrict a, float *restrict b, long n) {
    for (long i = 0; i < n; i++) b[i] = a[n - 1 - i];
}
void cmul(const float *restrict x, const float *restrict y, float *restrict c, long n) {
    for (long i = 0; i < n; i++) {
        float xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
        c[2 * i] = xr * yr - xi * yi;
        c[2 * i + 1] = xr * yi + xi * yr;
    }
}
void rgb_gray_f32(const float *restrict rgb, float *restrict g, long n) {
    for (long i = 0; i < n; i++)
        g[i] = 0.299f * rgb[3 * i] + 0.587f * rgb[3 * i + 1] + 0.114f * rgb[3 * i + 2];
}
void rgb_gray_u8(const uint8_t *restrict rgb, uint8_t *restrict g, long n) {
    for (long i = 0; i < n; i++)
        g[i] = (uint8_t)((77 * (int32_t)rgb[3 * i] + 150 * (int32_t)rgb[3 * i + 1]
                          + 29 * (int32_t)rgb[3 * i + 2] + 128) >> 8);
}
void transpose(const float *restrict a, float *restrict b, long side, long tile) {
    for (long io = 0; io < side; io += tile)
        for (long jo = 0; jo < side; jo += tile)
            for (long i = io; i < io + tile; i++)
                for (long j = jo; j < jo + tile; j++)
                    b[i * side + j] = a[j * side + i];
}
void colscan(const float *restrict a, float *restrict b, long side) {
    for (long i = 0; i < side; i++) b[i] = a[i];
    for (long i = 0; i < side; i++)
        for (long j = 1; j < side; j++)
            b[j * side + i] = b[(j - 1) * side + i] + a[j * side + i];
}
void dot_i8(const int8_t *restrict a, const int8_t *restrict b, int32_t *restrict s, long n) {
    int32_t acc = 0;
    for (long i = 0; i < n; i++) acc += (int32_t)a[i] * (int32_t)b[i];
    s[0] = acc;
}
void gather(const float *restrict a, const int32_t *restrict idx, float *restrict c, long n) {
    for (long i = 0; i < n; i++) c[i] = a[idx[i]];
}
"""

_SUMS = ("sum_s2", "sum_s3")


def march() -> str:
    """gcc's ``-march``: the CPU of ``TIRLITE_HOST_TARGET``'s ``-mcpu``, else ``native``."""
    for word in os.environ.get("TIRLITE_HOST_TARGET", "").split():
        if word.startswith("-mcpu="):
            return word.split("=", 1)[1]
    return "native"


def build(directory: str) -> tuple[ctypes.CDLL, ctypes.CDLL, str]:
    """The kernels' libraries (plain, and with reassociation for the sums) and gcc's version.

    Raises:
        RuntimeError: no gcc, or it failed (its message).
    """
    gcc = shutil.which("gcc")
    if gcc is None:
        raise RuntimeError("gcc not found")
    src = os.path.join(directory, "kernels.c")
    with open(src, "w") as f:
        f.write(SOURCE)
    libs = []
    for name, extra in (("plain", []), ("assoc", ["-fassociative-math", "-fno-signed-zeros",
                                                  "-fno-trapping-math"])):
        out = os.path.join(directory, f"{name}.so")
        cmd = [gcc, "-O3", f"-march={march()}", *extra, "-shared", "-fPIC", "-o", out, src]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()[-300:]}")
        libs.append(ctypes.CDLL(out))
    version = subprocess.run([gcc, "-dumpfullversion"], capture_output=True, text=True,
                             check=False).stdout.strip()
    return libs[0], libs[1], f"gcc {version} -O3 -march={march()}"


def _ptr(a: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(a.ctypes.data)


def kernel(plain: ctypes.CDLL, assoc: ctypes.CDLL, name: str, args: list,
           transpose_tile: int) -> Callable[[], None]:
    """A no-argument call of C kernel ``name`` on ``args`` (bench_access_common.arrays)."""
    fn = getattr(assoc if name in _SUMS else plain, name)
    fn.restype = None
    out = args[-1]
    if name == "transpose":
        side = out.shape[0]
        call = (_ptr(args[0]), _ptr(out), ctypes.c_long(side), ctypes.c_long(transpose_tile))
    elif name == "colscan":
        call = (_ptr(args[0]), _ptr(out), ctypes.c_long(out.shape[0]))
    else:
        n = args[0].size if name in ("store_s2", "dot_i8") else (
            args[0].size // int(name[-1]) if name in _SUMS else out.size)
        if name in ("cmul",):
            n = out.size // 2
        call = (*(_ptr(a) for a in args), ctypes.c_long(n))
    return lambda: fn(*call)
