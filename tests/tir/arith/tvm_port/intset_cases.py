"""TVM v0.16.0's int-set tests, as tables.

Ported from apache/tvm tests/python/arith/test_arith_intset.py at v0.16.0
(Apache-2.0, Copyright the Apache Software Foundation). Every ``ck.verify``
and every ``check_region_bound`` call of TVM's file is a row here, in order,
with only names changed (``tvm.arith.X`` -> ``arith.X``, ``te.var`` ->
``tir.var``, ``tvm.te.floordiv`` -> ``tir.floordiv``, ``tvm.ir.Range`` ->
``tir.Range`` ...); the other asserts of TVM's functions are rows too.

Each function is one TVM test function; its rows are ``lambda: Verify(...)``
(``ck.verify(expr, dmap, expected)`` with the analyzer facts TVM set up
before it), ``lambda: Region(...)`` (``check_region_bound``) or ``lambda:
Claim(...)`` (a plain assert). ``test_tvm_intset.py`` runs them.
"""

# ruff: noqa
from __future__ import annotations

from typing import Any, Callable

import tir
from tir import arith


class Verify:
    """``ck.verify(data, dmap, expected)`` on an analyzer prepared by ``setup``."""

    __slots__ = ("data", "dmap", "expected", "setup")

    def __init__(self, data: Any, dmap: dict, expected: tuple, setup: Callable = None) -> None:
        self.data, self.dmap, self.expected, self.setup = data, dmap, expected, setup


class Region:
    """``check_region_bound(expect_region, var_dom, mode, predicate)``."""

    __slots__ = ("expect_region", "var_dom", "mode", "predicate")

    def __init__(self, expect_region: dict, var_dom: dict, mode: str, predicate: Any = None):
        self.expect_region, self.var_dom = expect_region, var_dom
        self.mode, self.predicate = mode, predicate


class Claim:
    """A plain ``assert`` of TVM's test."""

    __slots__ = ("holds", "text")

    def __init__(self, holds: Callable[[], bool], text: str) -> None:
        self.holds, self.text = holds, text


def test_basic():
    return [
        lambda: Claim(lambda: arith.IntervalSet(2, 3).min_value.value == 2,
                      "IntervalSet(2, 3).min_value.value == 2"),
        lambda: Claim(lambda: arith.IntervalSet(2, 3).max_value.value == 3,
                      "IntervalSet(2, 3).max_value.value == 3"),
        lambda: Claim(lambda: arith.IntSet.single_point(2).min_value.value == 2,
                      "IntSet.single_point(2).min_value.value == 2"),
        lambda: Claim(lambda: arith.IntSet.single_point(2).max_value.value == 2,
                      "IntSet.single_point(2).max_value.value == 2"),
    ]


def test_vector():
    base = 10
    stride = 3
    lanes = 2

    def s():
        return arith.IntSet.vector(tir.Ramp(base, stride, lanes))

    return [
        lambda: Claim(lambda: s().min_value.value == base, "s.min_value.value == base"),
        lambda: Claim(lambda: s().max_value.value == base + stride * (lanes - 1),
                      "s.max_value.value == base + stride * (lanes - 1)"),
    ]


def test_scalable_vector():
    base = 5

    def s():
        return arith.IntSet.vector(tir.Ramp(base, 2, tir.vscale() * 4))

    return [
        lambda: Claim(lambda: s().min_value.value == base, "s.min_value.value == base"),
        lambda: Claim(lambda: s().max_value is arith.int_set.pos_inf(),
                      "s.max_value.same_as(pos_inf())"),
    ]


def test_add_sub():
    x, y = tir.var("x"), tir.var("y")
    return [
        lambda: Verify(x + y, {x: arith.IntervalSet(0, 10)}, (y, 10 + y)),
        lambda: Verify(x + y, {x: arith.IntervalSet(0, 10), y: arith.IntervalSet(1, 11)}, (1, 21)),
        lambda: Verify(x - y, {x: arith.IntervalSet(0, 10), y: arith.IntervalSet(1, 11)}, (-11, 9)),
    ]


def test_mul_div():
    x, y = tir.var("x"), tir.var("y")
    tdiv = tir.truncdiv
    fld = tir.floordiv

    def setup(a):
        a.update(y, arith.ConstIntBound(1, 100), override=True)

    return [
        lambda: Verify(x * y, {x: arith.IntervalSet(0, 10)}, (0, 10 * y), setup),
        lambda: Verify(x * 2, {x: arith.IntervalSet(1, 10)}, (2, 20), setup),
        lambda: Verify(x * -2, {x: arith.IntervalSet(1, 10)}, (-20, -2), setup),
        lambda: Verify(tdiv(x, y), {x: arith.IntervalSet(0, 10)}, (0, tdiv(10, y)), setup),
        lambda: Verify(tdiv(x, 2), {x: arith.IntervalSet(1, 10)}, (0, 5), setup),
        lambda: Verify(fld(x, y), {x: arith.IntervalSet(0, 10)}, (0, fld(10, y)), setup),
        lambda: Verify(fld(x, 2), {x: arith.IntervalSet(-1, 10)}, (-1, 5), setup),
    ]


def test_mod():
    x, y = tir.var("x"), tir.var("y")
    tmod = tir.truncmod
    flm = tir.floormod
    fld = tir.floordiv
    z = tir.var("z")

    def setup(a):
        a.update(y, arith.ConstIntBound(1, 100), override=True)

    def setup_bound_x(a):
        setup(a)
        a.bind(x, tir.Range.from_min_extent(0, 3))

    def setup_ck1(a):
        a.bind(x, tir.Range.from_min_extent(0, 2))

    return [
        lambda: Verify(tmod(x, y), {x: arith.IntervalSet(0, 10)}, (0, y - 1), setup),
        lambda: Verify(tmod(x, 10), {x: arith.IntervalSet(1, 10)}, (0, 9), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(-10, 10)}, (0, 9), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(3, 5)}, (3, 5), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(13, 15)}, (3, 5), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(3, 15)}, (0, 9), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(3, 11)}, (0, 9), setup),
        lambda: Verify(flm(x, 10), {x: arith.IntervalSet(1, 21)}, (0, 9), setup),
        lambda: Verify(
            flm(y, 8),
            {y: arith.IntervalSet(z * 8 + x * 4, z * 8 + x * 4 + 3)},
            (
                z * 8 + x * 4 - 8 * fld(z * 8 + x * 4, 8),
                z * 8 + x * 4 + 3 - 8 * fld(z * 8 + x * 4, 8),
            ),
            setup_bound_x,
        ),
        lambda: Verify(
            flm(y, 8), {y: arith.IntervalSet(z * 8 + x * 4, z * 8 + x * 4 + 3)}, (x * 4, x * 4 + 3),
            setup_ck1,
        ),
    ]


def test_max_min():
    x, y = tir.var("x"), tir.var("y")
    return [
        lambda: Verify(tir.max(x, x + 1), {x: arith.IntervalSet(0, 10)}, (1, 11)),
        lambda: Verify(tir.min(x - 1, x + 1), {x: arith.IntervalSet(0, 10)}, (-1, 9)),
        lambda: Verify(tir.min(x, y), {}, (tir.min(x, y), tir.min(x, y))),
        lambda: Verify(tir.max(x, y), {}, (tir.max(x, y), tir.max(x, y))),
    ]


def test_select():
    x, y = tir.var("x"), tir.var("y")
    return [
        lambda: Verify(tir.Select(x > 0, x - 1, x + 1), {x: arith.IntervalSet(0, 10)}, (-1, 11)),
    ]


def test_region_bound_not_independent():
    i = tir.Var("i", "int32")
    var_dom = {
        i: tir.Range(begin=0, end=64),
    }
    i2, j, k = tir.Var("i", "int32"), tir.Var("j", "int32"), tir.Var("k", "int32")
    var_dom2 = {
        i2: tir.Range(begin=0, end=16),
        j: tir.Range(begin=0, end=16),
        k: tir.Range(begin=0, end=16),
    }
    return [
        lambda: Region({(i, i + 2): None, (i + 2, i + 4): None}, var_dom, mode="lowerbound"),
        lambda: Region({(i, i + 2): (0, 65), (i + 2, i + 4): (2, 67)}, var_dom, mode="upperbound"),
        lambda: Region(
            {i2 // 4: None, j * 4 + i2 % 4: None, tir.truncdiv(k, 2): None},
            var_dom2,
            predicate=j * 4 + i2 % 4 > 3,
            mode="lowerbound",
        ),
        lambda: Region(
            {i2 // 4: (0, 4), j * 4 + i2 % 4: (4, 64), tir.truncdiv(k, 2): (0, 8)},
            var_dom2,
            predicate=j * 4 + i2 % 4 > 3,
            mode="upperbound",
        ),
    ]


def test_region_bound_stride_too_wide():
    i = tir.Var("i", "int32")
    var_dom = {i: tir.Range(begin=0, end=64)}
    return [
        lambda: Region({(i * 4, i * 4 + 2): None}, var_dom, mode="lowerbound"),
        lambda: Region({(i * 4, i * 4 + 2): (0, 254)}, var_dom, mode="upperbound"),
    ]


def test_region_bound_small_stride():
    i = tir.Var("i", "int32")
    var_dom = {
        i: tir.Range(begin=0, end=64),
    }
    return [
        lambda: Region({(i * 4, i * 4 + 8): (0, 260)}, var_dom, mode="lowerbound"),
    ]


def test_region_lower_bound_split_predicate():
    x_o = tir.Var("xo", "int32")
    x_i = tir.Var("xi", "int32")
    x = x_o * 4 + x_i
    var_dom = {
        x_o: tir.Range(begin=0, end=16),
        x_i: tir.Range(begin=0, end=4),
    }
    return [
        lambda: Region({(x * 4, x * 4 + 8): (0, 256)}, var_dom, predicate=x < 63,
                       mode="lowerbound"),
        lambda: Region(
            {(x * 4, x * 4 + 8): (0, 256), (x * 3, x * 3 + 5): (0, 191)},
            var_dom,
            predicate=x < 63,
            mode="upperbound",
        ),
    ]


def test_region_lower_bound_multiple_variables():
    div = tir.floordiv
    mod = tir.floormod
    x = tir.Var("x", "int32")
    wid = tir.Var("wid", "int32")
    i = div(x, 16)
    j = div(mod(x, 16), 4) * 8 + mod(x, 4) + div(wid, 32) * 4
    k = wid % 32
    var_dom = {
        x: tir.Range(begin=0, end=32),
        wid: tir.Range(begin=0, end=64),
    }
    return [
        lambda: Region({i: (0, 2), j: (0, 32), k: (0, 32)}, var_dom, mode="lowerbound"),
    ]


def test_region_lower_bound_negative_scale():
    i = tir.Var("i", "int32")
    j = tir.Var("j", "int32")
    var_dom = {
        i: tir.Range(begin=0, end=4),
        j: tir.Range(begin=0, end=4),
    }
    return [
        lambda: Region(
            {(1 - i, 5 - i): (-2, 5), (20 - j * 4, 36 - j * 4): (8, 36)}, var_dom,
            mode="lowerbound"
        ),
    ]


def test_region_lower_bound_for_non_perfect_tile():
    h1 = tir.Var("h1", "int32")
    h2 = tir.Var("h2", "int32")
    h3 = tir.Var("h3", "int32")

    # non-uniform tiling, single inner variable
    var_dom = {
        h2: tir.Range(begin=0, end=10),
    }
    # non-uniform tiling, two inner variables
    var_dom2 = {
        h1: tir.Range(begin=0, end=5),
        h2: tir.Range(begin=0, end=2),
    }
    return [
        lambda: Region(
            {
                h3 * 8
                + h2: {
                    (): (
                        tir.max(h3 * 8, 1),
                        tir.min(0, h3 * 8 - 214) + 224,
                    ),
                    ((h3, 0),): (1, 10),  # h3 == 0: region is [1, 10)
                    ((h3, 10),): (h3 * 8, h3 * 8 + 10),  # 0 < h3 <= 26: region is [h3 * 8, h3 * 8 + 10)
                    ((h3, 27),): (h3 * 8, 224),  # h3 > 26: region is [h3 * 8, 224)
                }
            },
            var_dom,
            predicate=tir.all(1 <= h3 * 8 + h2, h3 * 8 + h2 < 224),
            mode="lowerbound",
        ),
        lambda: Region(
            {
                h3 * 8
                + h2 * 5
                + h1: {
                    (): (
                        tir.max(h3 * 8, 1),
                        tir.min(0, h3 * 8 - 214) + 224,
                    ),
                    ((h3, 0),): (1, 10),
                    ((h3, 10),): (h3 * 8, h3 * 8 + 10),
                    ((h3, 27),): (h3 * 8, 224),
                }
            },
            var_dom2,
            predicate=tir.all(1 <= h3 * 8 + h2 * 5 + h1, h3 * 8 + h2 * 5 + h1 < 224),
            mode="lowerbound",
        ),
        # lowerbound should fail on incompatible predicates
        lambda: Region(
            {h3 * 8 + h2 * 5 + h1: None},
            var_dom2,
            predicate=tir.all(1 <= h3 * 8 + h2 * 5 + h1, h3 * 8 + h1 * 2 + h2 < 224),
            mode="lowerbound",
        ),
        lambda: Region(
            {h3 * 8 + h2 * 5 + h1: (h3 * 8, h3 * 8 + 10)},
            var_dom2,
            predicate=tir.all(1 <= h3 * 8 + h2 * 5 + h1, h3 * 8 + h1 * 2 + h2 < 224),
            mode="upperbound",
        ),
    ]


def test_region_lower_bound_unfusable():
    var_dom = {
        tir.Var("i", "int32"): tir.Range(8),
        tir.Var("j", "int32"): tir.Range(4),
    }
    i, j = var_dom
    return [
        lambda: Region({(i + j) // 2: (0, 6)}, var_dom, mode="lowerbound"),
    ]


def test_union_lower_bound():
    neg_inf = arith.int_set.neg_inf()
    pos_inf = arith.int_set.pos_inf()
    set_0 = arith.IntervalSet(min_value=neg_inf, max_value=0)
    set_1 = arith.IntervalSet(min_value=1, max_value=pos_inf)
    set_2 = arith.IntervalSet(min_value=pos_inf, max_value=neg_inf)

    def result():
        return arith.int_set.union_lower_bound([set_0, set_1])

    def result2():
        return arith.int_set.union_lower_bound([set_0, set_1, set_2])

    return [
        lambda: Claim(lambda: result().min_value is neg_inf, "result.min_value.same_as(neg_inf)"),
        lambda: Claim(lambda: result().max_value is pos_inf, "result.max_value.same_as(pos_inf)"),
        lambda: Claim(lambda: result2().min_value is neg_inf,
                      "result.min_value.same_as(neg_inf)"),
        lambda: Claim(lambda: result2().max_value is pos_inf,
                      "result.max_value.same_as(pos_inf)"),
    ]


#: TVM's test functions, in file order.
TABLES = [
    test_basic, test_vector, test_scalable_vector, test_add_sub, test_mul_div, test_mod,
    test_max_min, test_select, test_region_bound_not_independent,
    test_region_bound_stride_too_wide, test_region_bound_small_stride,
    test_region_lower_bound_split_predicate, test_region_lower_bound_multiple_variables,
    test_region_lower_bound_negative_scale, test_region_lower_bound_for_non_perfect_tile,
    test_region_lower_bound_unfusable, test_union_lower_bound,
]

#: Rows that do not pass, with the reason (``id: reason``); the runner marks them
#: ``xfail(strict=True)``.
KNOWN_FAILURES: dict[str, str] = {}
