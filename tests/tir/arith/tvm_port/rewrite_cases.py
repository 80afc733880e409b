"""TVM v0.16.0's rewrite-simplifier test cases, as tables (generated; do not edit).

Source: apache/tvm, tests/python/arith/test_arith_rewrite_simplify.py (Apache-2.0,
Copyright the Apache Software Foundation). Regenerate with
``scripts/port_tvm_arith_tests.py``; only names differ from TVM's file. Each
function is one TVM test class; its rows are ``lambda: Case(before, expected,
preconditions)``. ``test_tvm_rewrite_simplify.py`` runs them.
"""

# ruff: noqa
from __future__ import annotations

import tir
from tir import arith
from tir import floordiv as fld
from tir import floormod as flm
from tir import truncdiv as tdiv
from tir import truncmod as tmod

from .case import Case, TestCase



def vector():
    """TVM's TestVector."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    x64 = tir.var("x", dtype="int64")
    vx = tir.var("vx", dtype="int32x2")
    vc = tir.var("vc", dtype="uint1")
    return [
        lambda: TestCase(tir.Ramp(x, 1, 4) + tir.Ramp(y, 2, 4), tir.Ramp(x + y, 3, 4)),
        lambda: TestCase(tir.Ramp(x, 1, 2) + y, tir.Ramp(x + y, 1, 2)),
        lambda: TestCase(y + tir.Ramp(x, 1, 2), tir.Ramp(y + x, 1, 2)),
        lambda: TestCase(
                    tir.Ramp(x, 1, tir.vscale() * 4) + tir.Ramp(y, 2, tir.vscale() * 4),
                    tir.Ramp(x + y, 3, tir.vscale() * 4),
                ),
        lambda: TestCase(y.astype("int32x2") + x.astype("int32x2"), (y + x).astype("int32x2")),
        lambda: TestCase(tir.Broadcast(0, 4) + y, tir.Broadcast(y, 4)),
        lambda: TestCase(
                    tir.Broadcast(x, 4) + tir.Ramp(0, 1, tir.IntImm(dtype="int64", value=4)),
                    tir.Ramp(x, 1, 4),
                ),
        lambda: TestCase(
                    tir.Broadcast(x, tir.IntImm(dtype="int64", value=4)) + tir.Ramp(0, 1, 4),
                    tir.Ramp(x, 1, 4),
                ),
        lambda: TestCase(
                    tir.Broadcast(x64, 4) + tir.Ramp(tir.IntImm(dtype="int64", value=0), 1, 4),
                    tir.Ramp(x64, 1, 4),
                ),
        lambda: TestCase(
                    tir.Broadcast(0, tir.vscale() * 8) + y, tir.Broadcast(y, tir.vscale() * 8)
                ),
        lambda: TestCase(
                    tir.Ramp(x, 1, 4).astype("float32x4") + tir.Broadcast(0.0, 4),
                    tir.Ramp(x, 1, 4).astype("float32x4"),
                ),
        lambda: TestCase(tir.Ramp(x, 4, 4) - tir.Ramp(y, 2, 4), tir.Ramp(x - y, 2, 4)),
        lambda: TestCase(tir.Ramp(x, 1, 2) - y, tir.Ramp(x - y, 1, 2)),
        lambda: TestCase(y - tir.Ramp(x, 1, 2), tir.Ramp(y - x, -1, 2)),
        lambda: TestCase(y.astype("int32x2") - x.astype("int32x2"), (y - x).astype("int32x2")),
        lambda: TestCase(y.astype("int32x2") * x.astype("int32x2"), (y * x).astype("int32x2")),
        lambda: TestCase(tir.Ramp(x, 4, 4) * 2, tir.Ramp(x * 2, 8, 4)),
        lambda: TestCase(2 * tir.Ramp(x, 4, 4), tir.Ramp(x * 2, 8, 4)),
        lambda: TestCase(tir.Broadcast(0, 4) * x, tir.Broadcast(0, 4)),
        lambda: TestCase(tir.Broadcast(0.0, 4) * x, tir.Broadcast(0.0, 4)),
        lambda: TestCase(tdiv(y.astype("int32x2"), x.astype("int32x2")), tdiv(y, x).astype("int32x2")),
        lambda: TestCase(tdiv(tir.Ramp(x, 4, 4), 2), tir.Ramp(tdiv(x, 2), 2, 4)),
        lambda: TestCase(
                    tdiv(tir.Ramp(x, 4, tir.vscale() * 5), 2),
                    tir.Ramp(tdiv(x, 2), 2, tir.vscale() * 5),
                ),
        lambda: TestCase(tdiv(tir.Ramp(x * 8 + 1, 1, 4), 8), x.astype("int32x4"), x >= 0),
        lambda: TestCase(tdiv(tir.Ramp(x * 8 + 15, 1, 4), 8), tdiv(tir.Ramp(x * 8 + 15, 1, 4), 8)),
        lambda: TestCase(tmod(y.astype("int32x2"), x.astype("int32x2")), tmod(y, x).astype("int32x2")),
        lambda: TestCase(tmod(tir.Ramp(x, 4, 4), 2), tir.Broadcast(tmod(x, 2), 4)),
        lambda: TestCase(tmod(tir.Ramp(x * 8 + 1, 1, 4), 8), tir.Ramp(1, 1, 4), x >= 0),
        lambda: TestCase(
                    tmod(tir.Ramp(x * 8 + 1, 1, tir.vscale() * 4), 8),
                    tmod(tir.Ramp(1, 1, tir.vscale() * 4), 8),
                    x >= 0,
                ),
        lambda: TestCase(tmod(tir.Ramp(x * 8 + 1, 15, 4), 8), tmod(tir.Ramp(1, 15, 4), 8), x >= 0),
        lambda: TestCase(fld(y.astype("int32x2"), x.astype("int32x2")), fld(y, x).astype("int32x2")),
        lambda: TestCase(fld(tir.Ramp(x, 4, 4), 2), tir.Ramp(fld(x, 2), 2, 4)),
        lambda: TestCase(
                    fld(tir.Ramp(x, 4, tir.vscale() * 4), 2),
                    tir.Ramp(fld(x, 2), 2, tir.vscale() * 4),
                ),
        lambda: TestCase(fld(tir.Ramp(x * 8 + 1, 1, 4), 8), (x).astype("int32x4")),
        lambda: TestCase(fld(tir.Ramp(x * 8 + 15, 1, 4), 8), fld(tir.Ramp(x * 8 + 15, 1, 4), 8)),
        lambda: TestCase(
                    fld(tir.Ramp(x, 8, 5), tir.Broadcast(4, 5)), tir.Ramp(fld(x, 4), 2, 5)
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x, 8, tir.vscale() * 4), tir.Broadcast(4, tir.vscale() * 4)),
                    tir.Ramp(fld(x, 4), 2, tir.vscale() * 4),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(flm(x * 4, 256), 1, 4), tir.Broadcast(8, 4)),
                    tir.Broadcast(fld(flm(x * 4, 256), 8), 4),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x, 7, 4), tir.Broadcast(4, 4)),
                    fld(tir.Ramp(x, 7, 4), tir.Broadcast(4, 4)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 8, 1, 4), tir.Broadcast(4, 4)), tir.Broadcast(x * 2, 4)
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 8, 1, tir.vscale() * 4), tir.Broadcast(4, tir.vscale() * 4)),
                    fld(tir.Ramp(x * 8, 1, tir.vscale() * 4), tir.Broadcast(4, tir.vscale() * 4)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 8, 3, 4), tir.Broadcast(4, 4)),
                    fld(tir.Ramp(x * 8, 3, 4), tir.Broadcast(4, 4)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 8 + 15, 1, 4), tir.Broadcast(4, 4)),
                    fld(tir.Ramp(x * 8 + 15, 1, 4), tir.Broadcast(4, 4)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 4, 1, 4), tir.Broadcast(64, 4)),
                    tir.Broadcast(fld(x, 16), 4),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 8, 2, 4), tir.Broadcast(64, 4)),
                    tir.Broadcast(fld(x, 8), 4),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 4, 1, 5), tir.Broadcast(64, 5)),
                    fld(tir.Ramp(x * 4, 1, 5), tir.Broadcast(64, 5)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 4 + 3, 1, 4), tir.Broadcast(64, 4)),
                    fld(tir.Ramp(x * 4 + 3, 1, 4), tir.Broadcast(64, 4)),
                ),
        lambda: TestCase(
                    fld(tir.Ramp(x * 7, 1, 4), tir.Broadcast(64, 4)),
                    fld(tir.Ramp(x * 7, 1, 4), tir.Broadcast(64, 4)),
                ),
        lambda: TestCase(flm(y.astype("int32x2"), x.astype("int32x2")), flm(y, x).astype("int32x2")),
        lambda: TestCase(flm(tir.Ramp(x, 4, 4), 2), tir.Broadcast(flm(x, 2), 4)),
        lambda: TestCase(
                    flm(tir.Ramp(x, 4, tir.vscale() * 8), 2),
                    tir.Broadcast(flm(x, 2), tir.vscale() * 8),
                ),
        lambda: TestCase(flm(tir.Ramp(x * 8 + 1, 1, 4), 8), tir.Ramp(1, 1, 4)),
        lambda: TestCase(
                    flm(tir.Ramp(x * 8 + 1, 1, tir.vscale() * 4), 8),
                    flm(tir.Ramp(1, 1, tir.vscale() * 4), 8),
                ),
        lambda: TestCase(flm(tir.Ramp(x * 8 + 1, 15, 4), 8), flm(tir.Ramp(1, 15, 4), 8)),
        lambda: TestCase(
                    flm(tir.Ramp(x, 8, 4), tir.Broadcast(4, 4)), tir.Broadcast(flm(x, 4), 4)
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x, 7, 4), tir.Broadcast(4, 4)),
                    flm(tir.Ramp(x, 7, 4), tir.Broadcast(4, 4)),
                ),
        lambda: TestCase(flm(tir.Ramp(x * 8, 1, 4), tir.Broadcast(4, 4)), tir.Ramp(0, 1, 4)),
        lambda: TestCase(
                    flm(tir.Ramp(x * 8, 1, 5), tir.Broadcast(4, 5)),
                    flm(tir.Ramp(0, 1, 5), tir.Broadcast(4, 5)),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 8 + 7, 1, 4), tir.Broadcast(4, 4)),
                    flm(tir.Ramp(3, 1, 4), tir.Broadcast(4, 4)),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 4, 1, 4), tir.Broadcast(64, 4)),
                    tir.Ramp(flm(x * 4, 64), 1, 4),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 8, 2, 4), tir.Broadcast(64, 4)),
                    tir.Ramp(flm(x * 8, 64), 2, 4),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 4, 1, 5), tir.Broadcast(64, 5)),
                    flm(tir.Ramp(x * 4, 1, 5), tir.Broadcast(64, 5)),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 4 + 3, 1, 4), tir.Broadcast(64, 4)),
                    flm(tir.Ramp(x * 4 + 3, 1, 4), tir.Broadcast(64, 4)),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 2, 1, 8), tir.Broadcast(20, 8)),
                    flm(tir.Ramp(x * 2, 1, 8), tir.Broadcast(20, 8)),
                ),
        lambda: TestCase(
                    flm(tir.Ramp(x * 7, 1, 4), tir.Broadcast(64, 4)),
                    flm(tir.Ramp(x * 7, 1, 4), tir.Broadcast(64, 4)),
                ),
        lambda: TestCase(
                    tir.min(y.astype("int32x2"), x.astype("int32x2")), tir.min(y, x).astype("int32x2")
                ),
        lambda: TestCase(
                    tir.min(tir.min(vx, y.astype("int32x2")), x.astype("int32x2")),
                    tir.min(vx, tir.min(y, x).astype("int32x2")),
                ),
        lambda: TestCase(
                    tir.max(y.astype("int32x2"), x.astype("int32x2")), tir.max(y, x).astype("int32x2")
                ),
        lambda: TestCase(
                    tir.max(tir.max(vx, y.astype("int32x2")), x.astype("int32x2")),
                    tir.max(vx, tir.max(y, x).astype("int32x2")),
                ),
        lambda: TestCase(y.astype("int32x2").equal(x.astype("int32x2")), (y.equal(x)).astype("uint1x2")),
        lambda: TestCase(
                    tir.NE(y.astype("int32x2"), (x.astype("int32x2"))),
                    (tir.NE(y, x)).astype("uint1x2"),
                ),
        lambda: TestCase(y.astype("int32x2") > x.astype("int32x2"), (x < y).astype("uint1x2")),
        lambda: TestCase(y.astype("int32x2") >= x.astype("int32x2"), (x <= y).astype("uint1x2")),
        lambda: TestCase(y.astype("int32x2") < x.astype("int32x2"), (y < x).astype("uint1x2")),
        lambda: TestCase(y.astype("int32x2") <= x.astype("int32x2"), (y <= x).astype("uint1x2")),
        lambda: TestCase(
                    tir.And(y.astype("int32x2") <= x.astype("int32x2"), vc.astype("uint1x2")),
                    (tir.And(y <= x, vc)).astype("uint1x2"),
                ),
        lambda: TestCase(
                    tir.Or(y.astype("int32x2") <= x.astype("int32x2"), vc.astype("uint1x2")),
                    (tir.Or(y <= x, vc)).astype("uint1x2"),
                ),
    ]


def select():
    """TVM's TestSelect."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(
                    tir.Select(x < 0, y, 0) + tir.Select(x < 0, 1, z),
                    tir.Select(x < 0, y + 1, z),
                ),
        lambda: TestCase(
                    tir.Select(x < 0, y, 1) - tir.Select(x < 0, 1, z),
                    tir.Select(x < 0, y + (-1), 1 - z),
                ),
        lambda: TestCase(tir.Select(x < 0, y, z) - y, tir.Select(x < 0, 0, z - y)),
        lambda: TestCase(tir.Select(x < 0, y, z) - z, tir.Select(x < 0, y - z, 0)),
        lambda: TestCase(
                    tir.min(tir.Select(x < 0, y, 0), tir.Select(x < 0, 1, z)),
                    tir.Select(x < 0, tir.min(y, 1), tir.min(0, z)),
                ),
        lambda: TestCase(
                    tir.max(tir.Select(x < 0, y, 0), tir.Select(x < 0, 1, z)),
                    tir.Select(x < 0, tir.max(y, 1), tir.max(0, z)),
                ),
        lambda: TestCase(tir.Select(x * 3 + 1 != 0, y, z), y),
        lambda: TestCase(tir.Select(x * 3 + 1 == 0, y, z), z),
        lambda: TestCase(tir.Select(x > 0, y + 1, y + 1), y + 1),
    ]


def add_index():
    """TVM's TestAddIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(x + (y - x), y),
        lambda: TestCase(x - (y + 1) + (y + 1), x),
        lambda: TestCase((x - 10) + (10 - z), x - z),
        lambda: TestCase((x - y) + (z - x), z - y),
        lambda: TestCase(tir.min(x, y - z) + z, tir.min(x + z, y)),
        lambda: TestCase(tir.min(x - z, y) + z, tir.min(x, y + z)),
        lambda: TestCase(tir.max(x, y - 10) + 10, tir.max(x + 10, y)),
        lambda: TestCase(tir.max(x - 11, y) + 11, tir.max(x, y + 11)),
        lambda: TestCase(tir.max(x, y * 2) + tir.min(x, y * 2), x + y * 2),
        lambda: TestCase(tir.min(x, y * 2) + tir.max(x, y * 2), x + y * 2),
        lambda: TestCase(tir.max(x, y + 2) + (-2), tir.max(x + (-2), y)),
        lambda: TestCase(tir.min(x, y + 2) + (-2), tir.min(x + (-2), y)),
        lambda: TestCase(tir.min(x + 2, y + 3) + (-2), tir.min(x, y + 1)),
        lambda: TestCase(tir.max(0, 1 - x * 4) + x * 4, tir.max(x * 4, 1)),
        lambda: TestCase(tir.max(2 - x * 4, 0) + x * 4, tir.max(x * 4, 2)),
        lambda: TestCase(tir.min(0, 1 - x * 4) + x * 4, tir.min(x * 4, 1)),
        lambda: TestCase(tir.min(2 - x * 4, 0) + x * 4, tir.min(x * 4, 2)),
        lambda: TestCase(x * y + x * 10, x * (y + 10)),
        lambda: TestCase(y * x + x * 10, x * (y + 10)),
        lambda: TestCase(y * x + 10 * x, x * (y + 10)),
        lambda: TestCase(x * y + 10 * x, x * (y + 10)),
        lambda: TestCase((2 * z) + tir.min(x, y - (2 * z)), tir.min(x + (z * 2), y)),
        lambda: TestCase(y * x + x, x * (y + 1)),
        lambda: TestCase(x * y + x, x * (y + 1)),
        lambda: TestCase((x + 10) + 13, x + 23),
        lambda: TestCase((x + 10) + (13 + z), x + z + 23),
        lambda: TestCase(x * y + 10 * x, x * (y + 10)),
        lambda: TestCase(y * x + x * 3, x * (y + 3)),
        lambda: TestCase(x + 3 + y, x + y + 3),
        lambda: TestCase((3 - y) + x, x - y + 3),
        lambda: TestCase(x + 2 + 3 + 4 + x, x * 2 + 9),
        lambda: TestCase(x + 2 + 3 + 4 + x * 3, x * 4 + 9),
        lambda: TestCase(y * tmod(x, 8) + 10 * tmod(x, 8), tmod(x, 8) * (y + 10)),
        lambda: TestCase(tdiv(x, 8) * 8 + tmod(x, 8), x),
        lambda: TestCase(y * flm(x, 8) + 10 * flm(x, 8), flm(x, 8) * (y + 10)),
        lambda: TestCase(fld(x, 8) * 8 + flm(x, 8), x),
        lambda: TestCase(fld(flm(x, 2) + 7, 2) + fld(x, 2), fld(x + 7, 2)),
    ]


def sub_index():
    """TVM's TestSubIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    a, b = tir.Any(), tir.Any()
    return [
        lambda: TestCase(x + y - y, x),
        lambda: TestCase(x + y - x, y),
        lambda: TestCase(x - (y + x), 0 - y),
        lambda: TestCase(x - (x + y), 0 - y),
        lambda: TestCase(tir.min(x, y) - x, tir.min(0, y - x)),
        lambda: TestCase(tir.min(x, y) - y, tir.min(x - y, 0)),
        lambda: TestCase(tir.max(x, y) - x, tir.max(0, y - x)),
        lambda: TestCase(tir.max(x, y) - y, tir.max(x - y, 0)),
        lambda: TestCase(x - tir.min(x, y), tir.max(0, x - y)),
        lambda: TestCase(y - tir.min(x, y), tir.max(y - x, 0)),
        lambda: TestCase(x - tir.max(x, y), tir.min(0, x - y)),
        lambda: TestCase(y - tir.max(x, y), tir.min(y - x, 0)),
        lambda: TestCase(x - x, 0),
        lambda: TestCase(a - a, 0),
        lambda: TestCase(a - b, a - b),
        lambda: TestCase(x * y - x, x * (y + (-1))),
        lambda: TestCase(x * y - 10 * x, x * (y + (-10))),
        lambda: TestCase(y * x - x * z, x * (y - z)),
        lambda: TestCase(y * x - z * x, x * (y - z)),
        lambda: TestCase(x + 10 - 20, x + (-10)),
        lambda: TestCase((x + y) - (x + z), y - z),
        lambda: TestCase((y + x) - (x + z), y - z),
        lambda: TestCase((x + y) - (z + x), y - z),
        lambda: TestCase((y + x) - (z + x), y - z),
        lambda: TestCase(tir.min(x + y, z) - x, tir.min(y, z - x)),
        lambda: TestCase(tir.min(y + x, z) - x, tir.min(y, z - x)),
        lambda: TestCase(tir.min(z, x + y) - x, tir.min(z - x, y)),
        lambda: TestCase(tir.min(z, y + x) - x, tir.min(z - x, y)),
        lambda: TestCase(tir.max(x + y, z) - x, tir.max(y, z - x)),
        lambda: TestCase(tir.max(y + x, z) - x, tir.max(y, z - x)),
        lambda: TestCase(tir.max(z, x + y) - x, tir.max(z - x, y)),
        lambda: TestCase(tir.max(z, y + x) - x, tir.max(z - x, y)),
        lambda: TestCase(x - tir.min(x + y, z), tir.max(0 - y, x - z)),
        lambda: TestCase(x - tir.min(y + x, z), tir.max(0 - y, x - z)),
        lambda: TestCase(x - tir.min(z, x + y), tir.max(x - z, 0 - y)),
        lambda: TestCase(x - tir.min(z, y + x), tir.max(x - z, 0 - y)),
        lambda: TestCase(tir.min(x, y) - tir.min(y, x), 0),
        lambda: TestCase(tir.max(x, y) - tir.max(y, x), 0),
        lambda: TestCase(tir.min(x, y) - tir.min(x + 10, y + 10), -10),
        lambda: TestCase(tir.min(x + 10, y + 1) - tir.min(x, y - 9), 10),
        lambda: TestCase(x - tir.max(x + y, 0), tir.min(0 - y, x)),
        lambda: TestCase(x - tir.max(0, x + y), tir.min(x, 0 - y)),
        lambda: TestCase(x - tir.min(x + y, 0), tir.max(0 - y, x)),
        lambda: TestCase(x - tir.min(0, x + y), tir.max(x, 0 - y)),
        lambda: TestCase(x - tdiv(x, 3) * 3, tmod(x, 3)),
        lambda: TestCase(tdiv(x + 5, 3) - tdiv(x, 3), tdiv(tmod(x, 3) + 5, 3), x >= 0),
        lambda: TestCase(tdiv(x + 5, 3) - tdiv(x + 1, 3), tdiv(tmod(x + 1, 3) + 4, 3), x >= -1),
        lambda: TestCase(y - tdiv(y, (-5)) * (-5), tmod(y, 5)),
        lambda: TestCase(tdiv(y, 3) * 3 - y, 0 - tmod(y, 3)),
        lambda: TestCase(y - tdiv(y - 6, 5) * 5, tmod(y + (-6), 5) + 6),
        lambda: TestCase(tdiv(y - 6, 5) * 5 - y, (-6) - tmod(y + (-6), 5)),
        lambda: TestCase(y - tdiv(y + z, 5) * 5, tmod(y + z, 5) - z),
        lambda: TestCase(tdiv(y + z, 5) * 5 - y, z - tmod(y + z, 5)),
        lambda: TestCase(y - tdiv(y - z, 5) * 5, tmod(y - z, 5) + z),
        lambda: TestCase(tdiv(y - z, 5) * 5 - y, 0 - tmod(y - z, 5) - z),
        lambda: TestCase(y * 3 - tdiv(y, 2) * 6, tmod(y, 2) * 3),
        lambda: TestCase(tdiv(y, 3) * 6 - y * 2, tmod(y, 3) * (-2)),
        lambda: TestCase(y * 5 - tdiv(y + z, 2) * 10, (tmod(y + z, 2) - z) * 5),
        lambda: TestCase(y * 5 - tdiv(y - z, 2) * 10, (tmod(y - z, 2) + z) * 5),
        lambda: TestCase(tdiv(y + z, 3) * 6 - y * 2, (z - tmod(y + z, 3)) * 2),
        lambda: TestCase(tdiv(y - z, 3) * 6 - y * 2, (0 - tmod(y - z, 3) - z) * 2),
        lambda: TestCase(5 * y - tdiv(y + z, 2) * 10, (tmod(y + z, 2) - z) * 5),
        lambda: TestCase(5 * y - 10 * tdiv(y - z, 2), (tmod(y - z, 2) + z) * 5),
        lambda: TestCase(6 * tdiv(y + z, 3) - y * 2, (z - tmod(y + z, 3)) * 2),
        lambda: TestCase(tdiv(y - z, 3) * 6 - 2 * y, (0 - tmod(y - z, 3) - z) * 2),
        lambda: TestCase(x - fld(x, 3) * 3, flm(x, 3)),
        lambda: TestCase(fld(x + 5, 3) - fld(x, 3), fld(flm(x, 3) + 5, 3)),
        lambda: TestCase(fld(x + 5, 3) - fld(x + 2, 3), fld(flm(x + 2, 3), 3) + 1),
        lambda: TestCase(fld(y, 3) * 3 - y, 0 - flm(y, 3)),
        lambda: TestCase(y - fld(y - 6, 5) * 5, flm(y + 4, 5) + 6),
        lambda: TestCase(fld(y - 6, 5) * 5 - y, (-6) - flm(y + 4, 5)),
        lambda: TestCase(y - fld(y + z, 5) * 5, flm(y + z, 5) - z),
        lambda: TestCase(fld(y + z, 5) * 5 - y, z - flm(y + z, 5)),
        lambda: TestCase(y - fld(y - z, 5) * 5, flm(y - z, 5) + z),
        lambda: TestCase(fld(y - z, 5) * 5 - y, 0 - flm(y - z, 5) - z),
        lambda: TestCase(y * 3 - fld(y, 2) * 6, flm(y, 2) * 3),
        lambda: TestCase(fld(y, 3) * 6 - y * 2, flm(y, 3) * (-2)),
        lambda: TestCase(y * 5 - fld(y + z, 2) * 10, (flm(y + z, 2) - z) * 5),
        lambda: TestCase(y * 5 - fld(y - z, 2) * 10, (flm(y - z, 2) + z) * 5),
        lambda: TestCase(fld(y + z, 3) * 6 - y * 2, (z - flm(y + z, 3)) * 2),
        lambda: TestCase(fld(y - z, 3) * 6 - y * 2, (0 - flm(y - z, 3) - z) * 2),
        lambda: TestCase(5 * y - fld(y + z, 2) * 10, (flm(y + z, 2) - z) * 5),
        lambda: TestCase(5 * y - 10 * fld(y - z, 2), (flm(y - z, 2) + z) * 5),
        lambda: TestCase(6 * fld(y + z, 3) - y * 2, (z - flm(y + z, 3)) * 2),
        lambda: TestCase(fld(y - z, 3) * 6 - 2 * y, (0 - flm(y - z, 3) - z) * 2),
    ]


def mul_index():
    """TVM's TestMulIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase((x + 2) * 3, x * 3 + 6),
        lambda: TestCase((x * 2) * 3, x * 6),
        lambda: TestCase(tir.min(x, y) * tir.max(x, y), x * y),
        lambda: TestCase(tir.max(x, y) * tir.min(x, y), x * y),
        lambda: TestCase((x - y) * (-2), (y - x) * 2),
    ]


def div_index():
    """TVM's TestDivIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    non_negative = [x >= 0, y >= 0, z >= 0]
    return [
        lambda: TestCase(tdiv(x, x), 1),
        lambda: TestCase(tdiv(tdiv(x, 2), 3), tdiv(x, 6)),
        lambda: TestCase(tdiv(tdiv(x, 2) + 1, 3), tdiv(x + 2, 6), non_negative),
        lambda: TestCase(tdiv(x * 2, 4), tdiv(x, 2)),
        lambda: TestCase(tdiv(x * 4, 2), x * 2),
        lambda: TestCase(tdiv(x * 4 + y, 2), x * 2 + tdiv(y, 2), non_negative),
        lambda: TestCase(tdiv(tir.min(x * 6, y), 2), tir.min(x * 3, tdiv(y, 2)), non_negative),
        lambda: TestCase(tdiv(tir.max(x * 6, y), 2), tir.max(x * 3, tdiv(y, 2)), non_negative),
        lambda: TestCase(tdiv(y + x * 4, 2), tdiv(y, 2) + x * 2, non_negative),
        lambda: TestCase(tdiv(tir.min(y, x * 6), 2), tir.min(tdiv(y, 2), x * 3), non_negative),
        lambda: TestCase(tdiv(tir.max(y, x * 6), 2), tir.max(tdiv(y, 2), x * 3), non_negative),
        lambda: TestCase(tdiv(x * 6 + y + z, 2), x * 3 + tdiv(y + z, 2), non_negative),
        lambda: TestCase(tdiv(x * 6 - y + (y + 3), 2), x * 3 + 1, non_negative),
        lambda: TestCase(tdiv(x * 6 + (y + 3) - y, 2), x * 3 + 1, non_negative),
        lambda: TestCase(tdiv(y + x * 6 + z, 2), x * 3 + tdiv(y + z, 2), non_negative),
        lambda: TestCase(tdiv(x + 4, 2), tdiv(x, 2) + 2, non_negative),
        lambda: TestCase(tdiv(x + y, x), tdiv(y, x) + 1, non_negative),
        lambda: TestCase(tdiv(y + x, x), tdiv(y, x) + 1, non_negative),
        lambda: TestCase(tdiv((x + y) + z, x), tdiv(y + z, x) + 1, non_negative),
        lambda: TestCase(tdiv((y + x) + z, x), tdiv(y + z, x) + 1, non_negative),
        lambda: TestCase(tdiv(y + (x + z), x), tdiv(y + z, x) + 1, non_negative),
        lambda: TestCase(tdiv(y + (z + x), x), tdiv(y + z, x) + 1, non_negative),
        lambda: TestCase(tdiv(x * y, y), x, non_negative),
        lambda: TestCase(tdiv(y * x, y), x, non_negative),
        lambda: TestCase(tdiv(x * z + y, z), x + tdiv(y, z), non_negative),
        lambda: TestCase(tdiv(z * x + y, z), x + tdiv(y, z), non_negative),
        lambda: TestCase(tdiv(y + x * z, z), tdiv(y, z) + x, non_negative),
        lambda: TestCase(tdiv(y + z * x, z), tdiv(y, z) + x, non_negative),
    ]


def floordiv_index():
    """TVM's TestFloordivIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(fld(fld(x, 2), 3), fld(x, 6)),
        lambda: TestCase(fld(fld(x, 2) + 1, 3), fld(x + 2, 6)),
        lambda: TestCase(fld(x - flm(x, 21), 21), fld(x, 21)),
        lambda: TestCase(fld(x * 2, 4), fld(x, 2)),
        lambda: TestCase(fld(x * 4, 2), x * 2),
        lambda: TestCase(fld(x * 8 + 7, 16), fld(x, 2)),
        lambda: TestCase(fld(x * 8 + 39, 16), fld(x, 2) + 2),
        lambda: TestCase(fld(x * 8 - 1, 16), fld(x * 8 + -1, 16)),
        lambda: TestCase(fld(x * 8 - 9, 16), fld(x, 2) + -1),
        lambda: TestCase(fld(x * 360 + y, 16), x * 22, [x >= 0, x < 2, y >= 0, y < 7]),
        lambda: TestCase(fld(x * 360 + y, 25), x * 14, [x >= 0, x < 2, y >= 0, y < 7]),
        lambda: TestCase(fld(x * 360 - 8, 25), fld(x * 360 + -8, 25)),
        lambda: TestCase(fld(x * 4 + y, 2), x * 2 + fld(y, 2)),
        lambda: TestCase(fld(tir.min(x * 6, y), 2), tir.min(x * 3, fld(y, 2))),
        lambda: TestCase(fld(tir.max(x * 6, y), 2), tir.max(x * 3, fld(y, 2))),
        lambda: TestCase(fld(y + x * 4, 2), x * 2 + fld(y, 2)),
        lambda: TestCase(fld(tir.min(y, x * 6), 2), tir.min(fld(y, 2), x * 3)),
        lambda: TestCase(fld(tir.max(y, x * 6), 2), tir.max(fld(y, 2), x * 3)),
        lambda: TestCase(fld(x * 6 + y + z, 2), x * 3 + fld(y + z, 2)),
        lambda: TestCase(fld(x * 6 - y + (y + 3), 2), x * 3 + 1),
        lambda: TestCase(fld(x * 6 + (y + 3) - y, 2), x * 3 + 1),
        lambda: TestCase(fld(y + x * 6 + z, 2), x * 3 + fld(y + z, 2)),
        lambda: TestCase(fld(x + 4, 2), fld(x, 2) + 2),
        lambda: TestCase(fld(x + y, x), fld(y, x) + 1, x >= 0),
        lambda: TestCase(fld(y + x, x), fld(y, x) + 1, x >= 0),
        lambda: TestCase(fld((x + y) + z, x), fld(y + z, x) + 1, x >= 0),
        lambda: TestCase(fld((y + x) + z, x), fld(y + z, x) + 1, x >= 0),
        lambda: TestCase(fld(y + (x + z), x), fld(y + z, x) + 1, x >= 0),
        lambda: TestCase(fld(y + (z + x), x), fld(y + z, x) + 1, x >= 0),
        lambda: TestCase(fld(x * y, y), x, y >= 0),
        lambda: TestCase(fld(y * x, y), x, y >= 0),
        lambda: TestCase(fld(x * z + y, z), x + fld(y, z), z >= 0),
        lambda: TestCase(fld(z * x + y, z), x + fld(y, z), z >= 0),
        lambda: TestCase(fld(y + x * z, z), fld(y, z) + x, z >= 0),
        lambda: TestCase(fld(y + z * x, z), fld(y, z) + x, z >= 0),
        lambda: TestCase(fld(x * 32 + y, 64), fld(x, 2), [y >= 0, y < 32]),
        lambda: TestCase(fld(x * 128 + y * 4 + z, 512), fld(x, 4), [y >= 0, y < 32, z >= 0, z < 4]),
    ]


def mod_index():
    """TVM's TestModIndex."""
    x, y, nx, ny, z = tir.var("x"), tir.var("y"), tir.var("nx"), tir.var("ny"), tir.var("z")
    return [
        lambda: TestCase(tmod(x * 10, 2), 0, x >= 0),
        lambda: TestCase(tmod(x * 10 + y, 2), tmod(y, 2), [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x + 10, 2), tmod(x, 2), x >= 0),
        lambda: TestCase(tmod(x + y * 10, 2), tmod(x, 2), [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x * 10 + 1 + y * 2 + 2, 2), 1, [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x * 10, -2), 0, x <= 0),
        lambda: TestCase(tmod(x * 10 + y, -2), tmod(y, 2), [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x + 10, -2), tmod(x, 2), x >= 0),
        lambda: TestCase(tmod(x + y * 10, -2), tmod(x, 2), [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x * 10 + 1 + y * 2 + 2, -2), 1, [x >= 0, y >= 0]),
        lambda: TestCase(tmod(x * (-10), 2), 0),
        lambda: TestCase(tmod(x * (-10) + y, 2), tmod(x * (-10) + y, 2)),
        lambda: TestCase(tmod(x + (-10), 2), tmod(x + (-10), 2)),
        lambda: TestCase(tmod(x + y * (-10), 2), tmod(x + y * (-10), 2)),
        lambda: TestCase(tmod(x * (-10), -2), 0),
        lambda: TestCase(tmod(nx * 10, 2), 0),
        lambda: TestCase(tmod(nx * (-10) + y, 2), tmod(y, 2), [nx <= 0, y >= 0]),
        lambda: TestCase(tmod(x + ny * (-10), 2), tmod(x, 2), [x >= 0, ny <= 0]),
        lambda: TestCase(tmod(nx * (-10) + 1 + ny * (-2) + 2, 2), 1, [nx <= 0, ny <= 0]),
        lambda: TestCase(tmod(nx * 10, -2), 0),
        lambda: TestCase(tmod(nx * (-10) + y, -2), tmod(y, 2), [nx <= 0, y >= 0]),
        lambda: TestCase(tmod(x + ny * (-10), -2), tmod(x, 2), [x >= 0, ny <= 0]),
    ]


def floormod_index():
    """TVM's TestFloormodIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(flm(x * 10, 2), 0),
        lambda: TestCase(flm(x * 9600, 6400), flm(x * 3200, 6400)),
        lambda: TestCase(flm(x * 10 + y, 2), flm(y, 2)),
        lambda: TestCase(flm(x * 360 + y, 16), flm(x * 8 + y, 16)),
        lambda: TestCase(flm(x + 10, 2), flm(x, 2)),
        lambda: TestCase(flm(x + y * 10, 2), flm(x, 2)),
        lambda: TestCase(flm(x + y * 360, 16), flm(x + y * 8, 16)),
        lambda: TestCase(flm(x * (-10), 2), 0),
        lambda: TestCase(flm(x * (-10) + y, 2), flm(y, 2)),
        lambda: TestCase(flm(x + (-10), 2), flm(x, 2)),
        lambda: TestCase(flm(x + y * (-10), 2), flm(x, 2)),
        lambda: TestCase(flm(x * 32 + y, 64), flm(x, 2) * 32 + y, [y >= 0, y < 32]),
        lambda: TestCase(flm(x * 32 - y, 64), flm(x * 32 - y, 64), [y >= 0, y < 32]),
    ]


def floor_mod_two():
    """TVM's TestFloorModTwo."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(flm(x, 2) + flm(x + 1, 2), 1),
        lambda: TestCase(flm(x + 1, 2) + flm(x, 2), 1),
        lambda: TestCase(fld(x + 1, 2) - fld(x, 2), flm(x, 2)),
        lambda: TestCase(fld(x, 2) - fld(x - 1, 2), flm(x, 2) * -1 + 1),
        lambda: TestCase(fld(x + 5, 2) - fld(x - 2, 2), flm(x, 2) + 3),
        lambda: TestCase(fld(x + 5, 2) - fld(x - 3, 2), 4),
        lambda: TestCase(fld(flm(x, 2) + 1, 2), flm(x, 2)),
        lambda: TestCase(fld(x + 1, 2) - flm(x, 2), fld(x, 2)),
        lambda: TestCase(fld(x, 2) + flm(x, 2), fld(x + 1, 2)),
        lambda: TestCase(flm(x + 1, 2), flm(x + 1, 2)),
        lambda: TestCase(flm(x + 5, 2), flm(x + 1, 2)),
        lambda: TestCase(flm(x + 1, 2) * 8192, flm(x + 1, 2) * 8192, [x >= 0, x < 2]),
    ]


def floor_mod_padded():
    """TVM's TestFloorModPadded."""
    x, y = tir.var("x"), tir.var("y")
    return [
        lambda: TestCase(flm(x - flm(x, 9), 9), 0),
        lambda: TestCase(flm(x - flm(x, -9), 9), 0),
        lambda: TestCase(flm(x + flm(-x, 9), 9), 0),
        lambda: TestCase(flm(x + flm(8 * x, 9), 9), 0),
        lambda: TestCase(flm(x - flm(x, y), y), 0),
        lambda: TestCase(flm(x - flm(x, -y), y), 0),
        lambda: TestCase(flm(x + flm(-x, y), y), 0),
    ]


def min_index():
    """TVM's TestMinIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(tir.min(tmod(x, 2), tmod(y, 2) + 10), tmod(x, 2)),
        lambda: TestCase(tir.min(flm(x, 2), flm(y, 2) + 10), flm(x, 2)),
        lambda: TestCase(tir.min(x + 1, x + 10), x + 1),
        lambda: TestCase(tir.min(x + 111, x + 10), x + 10),
        lambda: TestCase(tir.min(x + 1, x), x),
        lambda: TestCase(tir.min(x, x + 2), x),
        lambda: TestCase(tir.min(1 - x, 2 - x), 1 - x),
        lambda: TestCase(tir.min(3 - x, 2 - x), 2 - x),
        lambda: TestCase(tir.min(tir.max(x, y), tir.min(x, y)), tir.min(x, y)),
        lambda: TestCase(tir.min(tir.max(x, y), tir.min(y, x)), tir.min(x, y)),
        lambda: TestCase(tir.min(tir.max(x, y), x), x),
        lambda: TestCase(tir.min(tir.max(y, x), x), x),
        lambda: TestCase(tir.min(tir.min(x, y), x), tir.min(x, y)),
        lambda: TestCase(tir.min(tir.min(x, y), y), tir.min(x, y)),
        lambda: TestCase(tir.min(x, tir.max(x, y)), x),
        lambda: TestCase(tir.min(x, tir.max(y, x)), x),
        lambda: TestCase(tir.min(x, tir.min(x, y)), tir.min(x, y)),
        lambda: TestCase(tir.min(y, tir.min(x, y)), tir.min(x, y)),
        lambda: TestCase(tir.min(tir.min(tir.min(x, y), z), y), tir.min(tir.min(x, y), z)),
        lambda: TestCase(
                    tir.min(tir.min(tir.min(tir.min(x, y), z), x * 2), y),
                    tir.min(tir.min(tir.min(x, y), z), x * 2),
                ),
        lambda: TestCase(
                    tir.min(tir.min(tir.min(tir.min(tir.min(x, y), z), x * 2), z * 2), y),
                    tir.min(tir.min(tir.min(tir.min(x, y), z), x * 2), z * 2),
                ),
        lambda: TestCase(tir.min(tir.max(x, y), tir.max(x, z)), tir.max(tir.min(y, z), x)),
        lambda: TestCase(tir.min(tir.max(x, y), tir.max(z, x)), tir.max(tir.min(y, z), x)),
        lambda: TestCase(tir.min(tir.max(y, x), tir.max(x, z)), tir.max(tir.min(y, z), x)),
        lambda: TestCase(tir.min(tir.max(y, x), tir.max(z, x)), tir.max(tir.min(y, z), x)),
        lambda: TestCase(tir.min(y + x, z + x), tir.min(y, z) + x),
        lambda: TestCase(tir.min(y + x, x + z), tir.min(y, z) + x),
        lambda: TestCase(tir.min(x + y, z + x), tir.min(y, z) + x),
        lambda: TestCase(tir.min(x + y, x + z), tir.min(y, z) + x),
        lambda: TestCase(tir.min(x - y, x - z), x - tir.max(y, z)),
        lambda: TestCase(tir.min(y - x, z - x), tir.min(y, z) - x),
        lambda: TestCase(tir.min(tir.min(x, 1), 10), tir.min(x, 1)),
        lambda: TestCase(tir.min(tir.min(x, 11), 10), tir.min(x, 10)),
        lambda: TestCase(tir.min(x * 3, 9), tir.min(x, 3) * 3),
        lambda: TestCase(tir.min(x * 2, 0), tir.min(x, 0) * 2),
        lambda: TestCase(tir.min(0 - x * 2, 0), tir.max(x, 0) * -2),
        lambda: TestCase(tir.min(3 - x, 2), 3 - tir.max(x, 1)),
        lambda: TestCase(tir.min(x * (-2), -4), tir.max(x, 2) * -2),
        lambda: TestCase(tir.min(x * (-2), 4), tir.max(x, -2) * -2),
        lambda: TestCase(tir.min(x * (0), 4), 0),
        lambda: TestCase(tir.min(x * (0), -4), -4),
        lambda: TestCase(tir.min(tdiv(x + 3, 4) * 4, x), x),
        lambda: TestCase(tir.min(x, tdiv(x + 3, 4) * 4), x),
        lambda: TestCase(tir.min(tdiv(x + 3, 4) * 4, tir.max(x, 4)), tir.max(x, 4), x > 0),
        lambda: TestCase(tir.min(tir.max(x, 4), tdiv(x + 3, 4) * 4), tir.max(x, 4), x > 0),
        lambda: TestCase(tir.min(tdiv(x, 10), tdiv(y, 10)), tdiv(tir.min(x, y), 10)),
        lambda: TestCase(tir.min(tdiv(x, (-10)), tdiv(y, (-10))), tdiv(tir.max(x, y), (-10))),
        lambda: TestCase(tir.min(fld(x + 3, 4) * 4, x), x),
        lambda: TestCase(tir.min(x, fld(x + 3, 4) * 4), x),
        lambda: TestCase(tir.min(x, fld(x, 4) * 4), fld(x, 4) * 4),
        lambda: TestCase(tir.min(fld(x + 3, 4) * 4, tir.max(x, 4)), tir.max(x, 4), x > 0),
        lambda: TestCase(tir.min(tir.max(x, 4), fld(x + 3, 4) * 4), tir.max(x, 4), x > 0),
        lambda: TestCase(tir.min(fld(x, 10), fld(y, 10)), fld(tir.min(x, y), 10)),
        lambda: TestCase(tir.min(fld(x, (-10)), fld(y, (-10))), fld(tir.max(x, y), (-10))),
    ]


def max_index():
    """TVM's TestMaxIndex."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(tir.max(tmod(x, 2), tmod(y, 2) + 10), tmod(y, 2) + 10),
        lambda: TestCase(tir.max(flm(x, 2), flm(y, 2) + 10), flm(y, 2) + 10),
        lambda: TestCase(tir.max(x + 1, x + 10), x + 10),
        lambda: TestCase(tir.max(x + 111, x + 10), x + 111),
        lambda: TestCase(tir.max(x + 1, x), x + 1),
        lambda: TestCase(tir.max(x, x + 2), x + 2),
        lambda: TestCase(tir.max(1 - x, 2 - x), 2 - x),
        lambda: TestCase(tir.max(3 - x, 2 - x), 3 - x),
        lambda: TestCase(tir.max(tir.min(x, y), tir.max(x, y)), tir.max(x, y)),
        lambda: TestCase(tir.max(tir.min(x, y), tir.max(y, x)), tir.max(x, y)),
        lambda: TestCase(tir.max(tir.min(x, y), x), x),
        lambda: TestCase(tir.max(tir.min(y, x), x), x),
        lambda: TestCase(tir.max(tir.max(x, y), x), tir.max(x, y)),
        lambda: TestCase(tir.max(tir.max(x, y), y), tir.max(x, y)),
        lambda: TestCase(tir.max(x, tir.min(x, y)), x),
        lambda: TestCase(tir.max(x, tir.min(y, x)), x),
        lambda: TestCase(tir.max(x, tir.max(x, y)), tir.max(x, y)),
        lambda: TestCase(tir.max(y, tir.max(x, y)), tir.max(x, y)),
        lambda: TestCase(tir.max(tir.max(tir.max(x, y), z), y), tir.max(tir.max(x, y), z)),
        lambda: TestCase(
                    tir.max(tir.max(tir.max(tir.max(x, y), z), x * 2), y),
                    tir.max(tir.max(tir.max(x, y), z), x * 2),
                ),
        lambda: TestCase(
                    tir.max(tir.max(tir.max(tir.max(tir.max(x, y), z), x * 2), z * 2), y),
                    tir.max(tir.max(tir.max(tir.max(x, y), z), x * 2), z * 2),
                ),
        lambda: TestCase(tir.max(tir.min(x, y), tir.min(x, z)), tir.min(tir.max(y, z), x)),
        lambda: TestCase(tir.max(tir.min(x, y), tir.min(z, x)), tir.min(tir.max(y, z), x)),
        lambda: TestCase(tir.max(tir.min(y, x), tir.min(x, z)), tir.min(tir.max(y, z), x)),
        lambda: TestCase(tir.max(tir.min(y, x), tir.min(z, x)), tir.min(tir.max(y, z), x)),
        lambda: TestCase(tir.max(y + x, z + x), tir.max(y, z) + x),
        lambda: TestCase(tir.max(y + x, x + z), tir.max(y, z) + x),
        lambda: TestCase(tir.max(x + y, z + x), tir.max(y, z) + x),
        lambda: TestCase(tir.max(x + y, x + z), tir.max(y, z) + x),
        lambda: TestCase(tir.max(x - y, x - z), x - tir.min(y, z)),
        lambda: TestCase(tir.max(y - x, z - x), tir.max(y, z) - x),
        lambda: TestCase(tir.max(tir.max(x, 1), 10), tir.max(x, 10)),
        lambda: TestCase(tir.max(tir.max(x, 11), 10), tir.max(x, 11)),
        lambda: TestCase(tir.max(x * 3, 9), tir.max(x, 3) * 3),
        lambda: TestCase(tir.max(3 - x, 1), 3 - tir.min(x, 2)),
        lambda: TestCase(tir.max(x * 2, 0), tir.max(x, 0) * 2),
        lambda: TestCase(tir.max(0 - x * 2, 0), tir.min(x, 0) * -2),
        lambda: TestCase(tir.max(x * (-2), -4), tir.min(x, 2) * -2),
        lambda: TestCase(tir.max(x * (-2), 4), tir.min(x, -2) * -2),
        lambda: TestCase(tir.max(x * (0), 4), 4),
        lambda: TestCase(tir.max(x * (0), -4), 0),
        lambda: TestCase(tir.max(tdiv(x, 10), tdiv(y, 10)), tdiv(tir.max(x, y), 10)),
        lambda: TestCase(tir.max(tdiv(x, (-10)), tdiv(y, (-10))), tdiv(tir.min(x, y), (-10))),
        lambda: TestCase(tir.max(tdiv(x + 3, 4) * 4, x), tdiv(x + 3, 4) * 4),
        lambda: TestCase(tir.max(fld(x, 10), fld(y, 10)), fld(tir.max(x, y), 10)),
        lambda: TestCase(tir.max(fld(x, (-10)), fld(y, (-10))), fld(tir.min(x, y), (-10))),
        lambda: TestCase(tir.max(fld(x + 3, 4) * 4, x), fld(x + 3, 4) * 4),
        lambda: TestCase(tir.max(fld(x, 4) * 4, x), x),
        lambda: TestCase(tir.max(x, fld(x, 4) * 4), x),
    ]


def comparisons():
    """TVM's TestComparisons."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase((tmod(x, 2) + 10).equal(0), tir.const(0, "bool")),
        lambda: TestCase(tir.NE(tmod(x, 2) + 10, 0), tir.const(1, "bool")),
        lambda: TestCase(tmod(x, 2) + 10 > 1, tir.const(1, "bool")),
        lambda: TestCase(tmod(x, 2) + 10 <= 1, tir.const(0, "bool")),
        lambda: TestCase(flm(x, 2) + 2 > 1, tir.const(1, "bool")),
        lambda: TestCase(flm(x, 2) + 10 <= 1, tir.const(0, "bool")),
        lambda: TestCase(x * 3 + 10 == 0, tir.const(0, "bool")),
        lambda: TestCase(x * 3 + 10 != 0, tir.const(1, "bool")),
        lambda: TestCase((x - 10).equal(0), x.equal(10)),
        lambda: TestCase((10 - x).equal(0), x.equal(10)),
        lambda: TestCase((x * y).equal(0), tir.Or(x.equal(0), y.equal(0))),
        lambda: TestCase(x - 1 < y, x <= y),
        lambda: TestCase(x + (-1) < y, x <= y),
        lambda: TestCase(x < y - (-1), x <= y),
        lambda: TestCase(x < y + 1, x <= y),
        lambda: TestCase(x + 2 < y + 3, x <= y),
        lambda: TestCase(x - 3 < y - 2, x <= y),
        lambda: TestCase(x - 3 < y + (-2), x <= y),
        lambda: TestCase(x + (-3) < y - 2, x <= y),
        lambda: TestCase(x + 10 < y + 10, x < y),
        lambda: TestCase(x + 5 < y + 10, x < y + 5),
        lambda: TestCase(x + 10 < y + 5, x + 5 < y),
        lambda: TestCase(x - 5 < y - 10, x + 5 < y),
        lambda: TestCase(x - 10 < y - 5, x < y + 5),
        lambda: TestCase(x < y - 10, x + 10 < y),
        lambda: TestCase(x - 10 < y, x < y + 10),
        lambda: TestCase(x + y < x + z, y < z),
        lambda: TestCase(x + y < z + x, y < z),
        lambda: TestCase(y + x < x + z, y < z),
        lambda: TestCase(y + x < z + x, y < z),
        lambda: TestCase(y - x < z - x, y < z),
        lambda: TestCase(x - y < x - z, z < y),
        lambda: TestCase(x < z + x, tir.LT(0, z)),
        lambda: TestCase(x < x + z, tir.LT(0, z)),
        lambda: TestCase(100 < x + 1, tir.LT(99, x)),
        lambda: TestCase(1 < 100 - x, tir.LT(x, 99)),
        lambda: TestCase(x * 3 < y * 3, x < y),
        lambda: TestCase(x * (-3) < y * (-3), y < x),
        lambda: TestCase(x * 3 >= y * 3, y <= x),
        lambda: TestCase(x * 4 >= 2, tir.LE(1, x)),
        lambda: TestCase(x * 2 >= 50, tir.LE(25, x)),
        lambda: TestCase(x * 4 <= 2, x <= 0),
        lambda: TestCase((0 - x * 3) <= 0, tir.LE(0, x)),
        lambda: TestCase((0 - x * 3) >= 0, tir.LE(x, 0)),
        lambda: TestCase(2 * x <= 0, x <= 0),
        lambda: TestCase(x * 2 >= 3, tir.LE(2, x)),
        lambda: TestCase(x * 2 >= 2, tir.LE(1, x)),
        lambda: TestCase(x * 2 >= 1, tir.LE(1, x)),
        lambda: TestCase(x * 2 >= 0, tir.LE(0, x)),
        lambda: TestCase(x * 2 >= -1, tir.LE(0, x)),
        lambda: TestCase(x * 2 >= -2, tir.LE(-1, x)),
        lambda: TestCase(x * 2 >= -3, tir.LE(-1, x)),
        lambda: TestCase(x * 2 <= 3, tir.LE(x, 1)),
        lambda: TestCase(x * 2 <= 2, tir.LE(x, 1)),
        lambda: TestCase(x * 2 <= 1, tir.LE(x, 0)),
        lambda: TestCase(x * 2 <= 0, tir.LE(x, 0)),
        lambda: TestCase(x * 2 <= -1, tir.LE(x, -1)),
        lambda: TestCase(x * 2 <= -2, tir.LE(x, -1)),
        lambda: TestCase(x * 2 <= -3, tir.LE(x, -2)),
        lambda: TestCase(x * (-2) >= 3, tir.LE(x, -2)),
        lambda: TestCase(x * (-2) >= 2, tir.LE(x, -1)),
        lambda: TestCase(x * (-2) >= 1, tir.LE(x, -1)),
        lambda: TestCase(x * (-2) >= 0, tir.LE(x, 0)),
        lambda: TestCase(x * (-2) >= -1, tir.LE(x, 0)),
        lambda: TestCase(x * (-2) >= -2, tir.LE(x, 1)),
        lambda: TestCase(x * (-2) >= -3, tir.LE(x, 1)),
        lambda: TestCase(x * (-2) <= 3, tir.LE(-1, x)),
        lambda: TestCase(x * (-2) <= 2, tir.LE(-1, x)),
        lambda: TestCase(x * (-2) <= 1, tir.LE(0, x)),
        lambda: TestCase(x * (-2) <= 0, tir.LE(0, x)),
        lambda: TestCase(x * (-2) <= -1, tir.LE(1, x)),
        lambda: TestCase(x * (-2) <= -2, tir.LE(1, x)),
        lambda: TestCase(x * (-2) <= -3, tir.LE(2, x)),
        lambda: TestCase(tdiv(x, 2) < 3, x < 6),
        lambda: TestCase(3 < tdiv(x, 2), tir.LT(7, x)),
        lambda: TestCase(tdiv(x, 3) >= 0, tir.LE(-2, x)),
        lambda: TestCase(tdiv(x, 2) >= 1, tir.LE(2, x)),
        lambda: TestCase(tdiv(x, 2) >= 0, tir.LE(-1, x)),
        lambda: TestCase(tdiv(x, 2) >= -1, tir.LE(-3, x)),
        lambda: TestCase(tdiv(x, 2) <= 1, tir.LE(x, 3)),
        lambda: TestCase(tdiv(x, 2) <= 0, tir.LE(x, 1)),
        lambda: TestCase(tdiv(x, 2) <= -1, tir.LE(x, -2)),
        lambda: TestCase(tdiv(x, 4) * 4 < x, tir.LT(0, tmod(x, 4))),
        lambda: TestCase(tdiv(x, 4) * 4 >= x, tir.LE(tmod(x, 4), 0)),
        lambda: TestCase(tdiv(x, 4) * 4 < x + y, tir.LT(0, tmod(x, 4) + y)),
        lambda: TestCase(tdiv(x, 4) * 4 < x - y, tir.LT(y, tmod(x, 4))),
        lambda: TestCase(tdiv(x + 2, 4) * 4 >= x, tir.LE(tmod(x + 2, 4), 2)),
        lambda: TestCase(tdiv(x + 2, 4) * 4 >= x + y, tir.LE(tmod(x + 2, 4) + y, 2)),
        lambda: TestCase(tdiv(x + 2, 4) * 4 >= x - y, tir.LE(tmod(x + 2, 4), y + 2)),
        lambda: TestCase(fld(x, 2) < 3, x < 6),
        lambda: TestCase(3 < fld(x, 2), tir.LT(7, x)),
        lambda: TestCase(-3 < fld(x, 2), tir.LT(-5, x)),
        lambda: TestCase(fld(x, 3) >= 0, tir.LE(0, x)),
        lambda: TestCase(fld(x, 2) >= 1, tir.LE(2, x)),
        lambda: TestCase(fld(x, 2) >= 0, tir.LE(0, x)),
        lambda: TestCase(fld(x, 2) >= -1, tir.LE(-2, x)),
        lambda: TestCase(fld(x, 2) <= 1, tir.LE(x, 3)),
        lambda: TestCase(fld(x, 2) <= 0, tir.LE(x, 1)),
        lambda: TestCase(fld(x, 2) <= -1, tir.LE(x, -1)),
        lambda: TestCase(fld(x, 4) * 4 < x, tir.LT(0, flm(x, 4))),
        lambda: TestCase(fld(x, 4) * 4 >= x, tir.EQ(flm(x, 4), 0)),
        lambda: TestCase(fld(x, 4) * 4 < x + y, tir.LT(0, flm(x, 4) + y)),
        lambda: TestCase(fld(x, 4) * 4 < x - y, tir.LT(y, flm(x, 4))),
        lambda: TestCase(fld(x + 2, 4) * 4 >= x, tir.LE(flm(x + 2, 4), 2)),
        lambda: TestCase(fld(x + 2, 4) * 4 >= x + y, tir.LE(flm(x + 2, 4) + y, 2)),
        lambda: TestCase(fld(x + 2, 4) * 4 >= x - y, tir.LE(flm(x + 2, 4), y + 2)),
        lambda: TestCase(tir.all(fld(x, 8) == 3, flm(x, 8) == 4), x == 28),
        lambda: TestCase(tir.all(flm(x, 8) == 4, fld(x, 8) == 3), x == 28),
        lambda: TestCase(tir.all(fld(x, 8) == -3, flm(x, 8) == 4), x == -20),
        lambda: TestCase(tir.all(flm(x, 8) == 4, fld(x, 8) == -3), x == -20),
        lambda: TestCase(tir.all(tir.convert(0) <= x - y * 5, x - y * 5 < 5), y == fld(x, 5)),
        lambda: TestCase(tir.all(x - y * 5 < 5, tir.convert(0) <= x - y * 5), y == fld(x, 5)),
        lambda: TestCase(tir.all(x < 20, flm(x, 5) < 2), tir.all(x < 17, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x < 18, flm(x, 5) < 2), tir.all(x < 17, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x <= 19, flm(x, 5) < 2), tir.all(x < 17, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x <= 18, flm(x, 5) < 2), tir.all(x < 17, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x < -20, flm(x, 5) < 2), tir.all(x < -23, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x < 18 - 40, flm(x, 5) < 2), tir.all(x < 17 - 40, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x <= -21, flm(x, 5) < 2), tir.all(x < -23, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x <= -22, flm(x, 5) < 2), tir.all(x < -23, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x < 16, flm(x, 5) < 2), tir.all(x < 16, flm(x, 5) < 2)),
        lambda: TestCase(tir.all(x <= 15, flm(x, 5) < 2), tir.all(x <= 15, flm(x, 5) < 2)),
        lambda: TestCase(
                    tir.all(fld(x, 10) == 5, flm(x, 10) < 7),
                    tir.all(tir.convert(50) <= x, x < 57),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == 5, flm(x, 10) <= 7),
                    tir.all(tir.convert(50) <= x, x <= 57),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == -5, flm(x, 10) < 7),
                    tir.all(tir.convert(-50) <= x, x < -43),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == -5, flm(x, 10) <= 7),
                    tir.all(tir.convert(-50) <= x, x <= -43),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == 5, tir.convert(7) < flm(x, 10)),
                    tir.all(tir.convert(57) < x, x < 60),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == 5, tir.convert(7) <= flm(x, 10)),
                    tir.all(tir.convert(57) <= x, x < 60),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == -5, tir.convert(7) < flm(x, 10)),
                    tir.all(tir.convert(-43) < x, x < -40),
                ),
        lambda: TestCase(
                    tir.all(fld(x, 10) == -5, tir.convert(7) <= flm(x, 10)),
                    tir.all(tir.convert(-43) <= x, x < -40),
                ),
        lambda: TestCase(tir.min(x, 11) < 10, x < 10),
        lambda: TestCase(tir.min(x, 8) < 10, tir.const(1, "bool")),
        lambda: TestCase(tir.max(8, x) > 10, tir.LT(10, x)),
        lambda: TestCase(x + 1 < tir.max(8, x), x < 7),
        lambda: TestCase(x < 11, tir.const(1, "bool"), x <= 10),
        lambda: TestCase(x <= 10, tir.const(1, "bool"), x <= 10),
        lambda: TestCase(z <= 5, tir.const(1, "bool"), z <= 5),
        lambda: TestCase(x + y <= 10, tir.const(1, "bool"), [x <= 10, y <= 0]),
        lambda: TestCase(x + y >= -10, tir.const(1, "bool"), [x >= 0, y >= -10]),
        lambda: TestCase(z - 5 <= y + 10, tir.const(1, "bool"), [z <= 5, y >= -10]),
        lambda: TestCase(tir.all(x > -1, z <= x + 5), tir.const(1, "bool"), [x >= 0, z <= 5]),
        lambda: TestCase(x * y <= 0, tir.const(1, "bool"), [x >= 0, y <= 0]),
        lambda: TestCase((x + 1) * (y - 1) < 0, tir.const(1, "bool"), [x >= 0, y <= 0]),
        lambda: TestCase(y * y >= 0, tir.const(1, "bool"), y <= 0),
        lambda: TestCase(x * 6 <= -3, tir.const(0, "bool"), x >= 0),
        lambda: TestCase(tmod(y - 1, 3) == 0, tmod(y + (-1), 3) == 0),
    ]


def comparison_of_product_and_sum():
    """TVM's TestComparisonOfProductAndSum."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(
                    x * y < (x + y) * 2048,
                    tir.const(1, "bool"),
                    [x > 0, y > 0, x < 2048],
                ),
        lambda: TestCase(
                    x * y < (x + y) * 2048,
                    tir.const(1, "bool"),
                    [x > 0, y > 0, x < 4096, y < 4096],
                ),
        lambda: TestCase(
                    # Both sides are divisible by 8192
                    x * y * 8192 < (y + x) * 16777216,
                    tir.const(1, "bool"),
                    [x > 0, y > 0, x < 4096, y < 4096],
                ),
        lambda: TestCase(
                    # The two sides have co-prime factors, but the bounds are
                    # still sufficient to prove the inequality.
                    x * y * 59 < (y + x) * 176128,
                    tir.const(1, "bool"),
                    [x > 0, y > 0, x < 4096, y < 4096],
                ),
    ]


def logical():
    """TVM's TestLogical."""
    x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
    return [
        lambda: TestCase(tir.And(tir.EQ(x, y), tir.NE(x, y)), tir.const(False, "bool")),
        lambda: TestCase(tir.And(tir.NE(x, y), tir.EQ(x, y)), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x > 1, tir.Not(x > 1)), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x <= y, y < x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(y < x, x <= y), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x < 1, 0 < x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x < 0, 1 < x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x < 1, 1 <= x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x <= 1, 1 < x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(1 <= x, x < 1), tir.const(False, "bool")),
        lambda: TestCase(tir.And(1 < x, x <= 1), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x <= 1, 2 <= x), tir.const(False, "bool")),
        lambda: TestCase(tir.And(2 <= x, x <= 1), tir.const(False, "bool")),
        lambda: TestCase(tir.And(x == 1, x != 2), x == 1),
        lambda: TestCase(tir.And(x == 1, x == 2), tir.const(False, "bool")),
        lambda: TestCase(tir.Or(tir.EQ(x, y), tir.NE(x, y)), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(tir.NE(x, y), tir.EQ(x, y)), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x > y, tir.Not(x > y)), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x <= y, y < x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(y < x, y >= x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x < 1, 0 < x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(0 < x, x < 1), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x < 1, 1 <= x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x <= 1, 1 < x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(1 <= x, x < 1), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(1 < x, x <= 1), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x <= 1, 2 <= x), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(2 <= x, x <= 1), tir.const(True, "bool")),
        lambda: TestCase(tir.Or(x != 1, x == 2), x != 1),
        lambda: TestCase(tir.Or(x != 1, x != 2), tir.const(True, "bool")),
        lambda: TestCase(
                    tir.Or(x == 1, tir.Or(y == 1, z == 1)),
                    tir.Or(tir.Or(x == 1, y == 1), z == 1),
                ),
        lambda: TestCase(
                    tir.And(x == 1, tir.And(y == 1, z == 1)),
                    tir.And(tir.And(x == 1, y == 1), z == 1),
                ),
    ]


def let():
    """TVM's TestLet."""
    x, y = tir.var("x"), tir.var("y")
    z = tir.Let(x, 1, x + 1)
    return [
        lambda: TestCase(z + z, 4),
    ]


def cast():
    """TVM's TestCast."""
    def _generate_tests():
            x = tir.var("x")
            dtypes = ["float32", "float16", "int32", "int8", "bool"]
            for dtype1 in dtypes:
                yield TestCase(tir.Cast(dtype1, x - x), tir.const(0, dtype1))
                yield TestCase(tir.Cast(dtype1, x == x), tir.const(1, dtype1))
                for dtype2 in dtypes:
                    for i in [0, 1, 2, 3]:
                        if i <= 1 or (dtype1 != "bool" and dtype2 != "bool"):
                            yield TestCase(
                                tir.Cast(dtype1, tir.const(i, dtype2)), tir.const(i, dtype1)
                            )
    return [
        *[lambda c=c: c for c in _generate_tests()],
    ]


def shift_left():
    """TVM's TestShiftLeft."""
    z = tir.call_intrin("int32", "tir.shift_left", 1, 10)
    return [
        lambda: TestCase(z, tir.const(1 << 10, "int32")),
    ]


def div_zero():
    """TVM's TestDivZero."""
    ramp = tir.Ramp(1, 1, 2)
    broadcast = tir.Broadcast(0, 2)
    return [
        lambda: TestCase(tir.Div(ramp, broadcast), tir.TVMError),
        lambda: TestCase(tir.Mod(ramp, broadcast), tir.TVMError),
        lambda: TestCase(tir.FloorDiv(ramp, broadcast), tir.TVMError),
        lambda: TestCase(tir.FloorMod(ramp, broadcast), tir.TVMError),
    ]


def sub_bufferload():
    """TVM's TestSubBufferload."""
    buf = tir.decl_buffer([1], dtype="float32")
    load = tir.BufferLoad(buf, [0])
    return [
        lambda: TestCase(load - load, 0.0),
    ]


def if_then_else():
    """TVM's TestIfThenElse."""
    x = tir.var("x", "int32")
    return [
        lambda: TestCase(
                    tir.if_then_else(x < 5, tir.if_then_else(x > 1, 1, 0), 0),
                    tir.if_then_else(tir.And(tir.LT(x, 5), tir.LT(1, x)), 1, 0),
                ),
        lambda: TestCase(
                    tir.if_then_else(x > 2, tir.if_then_else(x > 1, 1, 0), 0),
                    tir.if_then_else(tir.LT(2, x), 1, 0),
                ),
    ]


def clz():
    """TVM's TestCLZ."""
    return [
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", 0), 32),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", 1), 31),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", 2), 30),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", 128), 24),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", tir.IntImm("int64", 0)), 64),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", tir.IntImm("int64", 1)), 63),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", tir.IntImm("int64", 2)), 62),
        lambda: TestCase(tir.call_intrin("int32", "tir.clz", tir.IntImm("int64", 128)), 56),
    ]


#: (TVM class, rows, the analyzer extension the class enables)
CLASSES = [
    ('TestVector', vector, None),
    ('TestSelect', select, None),
    ('TestAddIndex', add_index, None),
    ('TestSubIndex', sub_index, None),
    ('TestMulIndex', mul_index, None),
    ('TestDivIndex', div_index, None),
    ('TestFloordivIndex', floordiv_index, None),
    ('TestModIndex', mod_index, None),
    ('TestFloormodIndex', floormod_index, None),
    ('TestFloorModTwo', floor_mod_two, None),
    ('TestFloorModPadded', floor_mod_padded, None),
    ('TestMinIndex', min_index, None),
    ('TestMaxIndex', max_index, None),
    ('TestComparisons', comparisons, None),
    ('TestComparisonOfProductAndSum', comparison_of_product_and_sum, 'ComparisonOfProductAndSum'),
    ('TestLogical', logical, None),
    ('TestLet', let, None),
    ('TestCast', cast, None),
    ('TestShiftLeft', shift_left, None),
    ('TestDivZero', div_zero, None),
    ('TestSubBufferload', sub_bufferload, None),
    ('TestIfThenElse', if_then_else, None),
    ('TestCLZ', clz, None),
]
