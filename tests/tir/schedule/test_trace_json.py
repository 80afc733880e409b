"""Sampling instructions and trace JSON: a schedule's trace, written and read back, replays exactly.

Each schedule is built by a rule (a function of a fresh ``Schedule``), its
trace goes through ``json.dumps`` / ``json.loads``, and the replay on a fresh
schedule of a freshly built function must give a structurally equal function
and the same JSON again. Sampling is checked for determinism (seed, copy,
fork_seed), validity and rough uniformity, decisions for validation.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from schedule_helpers import assert_same

import tir
from tir import te
from tir.schedule import IndexMap, ScheduleError, Trace
from tir.schedule.trace_json import Decoder, Encoder

F32 = "float32"

# ------------------------------------------------------------------ workloads


def matmul(m: int = 16) -> tir.PrimFunc:
    a = te.placeholder((m, m), F32, "A")
    b = te.placeholder((m, m), F32, "B")
    k = te.reduce_axis((0, m), "k")
    c = te.compute((m, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def conv(h: int = 6, w: int = 8, ci: int = 4, co: int = 8) -> tir.PrimFunc:
    """scale (inlined by the schedule) -> 3x3 conv (computed at a tile) -> relu."""
    inp = te.placeholder((h + 2, w + 2, ci), F32, "inp")
    filt = te.placeholder((3, 3, ci, co), F32, "filt")
    scaled = te.compute((h + 2, w + 2, ci), lambda y, x, c: inp[y, x, c] * 0.5, name="scaled")
    ry, rx, rc = te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"), \
        te.reduce_axis((0, ci), "rc")
    out = te.compute((h, w, co), lambda y, x, c: te.sum(
        scaled[y + ry, x + rx, rc] * filt[ry, rx, rc, c], axis=[ry, rx, rc]), name="conv")
    relu = te.compute((h, w, co), lambda y, x, c: tir.max(out[y, x, c], 0.0), name="relu")
    return te.create_prim_func([inp, filt, relu])


def elementwise(m: int = 8, n: int = 32) -> tir.PrimFunc:
    a = te.placeholder((m, n), F32, "A")
    b = te.compute((m, n), lambda i, j: a[i, j] * 2.0, name="B")
    c = te.compute((m, n), lambda i, j: b[i, j] + 1.0, name="C")
    return te.create_prim_func([a, c])


# ------------------------------------------------------------------ rules (what a tuner runs)


def matmul_rule(sch: tir.Schedule) -> None:
    """te_matmul's schedule (benchmarks/bench_schedule.py) with sampled tiles."""
    b_c = sch.get_block("C")
    packed = sch.cache_read(b_c, 1, "global")
    bn = sch.sample_categorical([4, 8], [0.5, 0.5])
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // bn, kk, jj % bn))
    i, j, k = sch.get_loops(b_c)
    io, ii = sch.split(i, sch.sample_perfect_tile(i, n=2, max_innermost_factor=8))
    jo, ji = sch.split(j, [None, bn])
    ko, ki = sch.split(k, sch.sample_perfect_tile(k, n=2, max_innermost_factor=4))
    sch.reorder(jo, io, ko, ki, ii, ji)
    b_cc = sch.cache_write(b_c, 0, "local")
    sch.reverse_compute_at(b_cc, io)
    sch.vectorize(sch.get_loops(b_cc)[-1])
    sch.vectorize(ji)
    sch.unroll(ii)
    sch.annotate(ki, "pragma_unroll", sch.sample_categorical([0, 16, 64], [0.3, 0.3, 0.4]))
    sch.parallel(jo)
    sch.decompose_reduction(b_c, ko)


def conv_rule(sch: tir.Schedule) -> None:
    sch.compute_inline(sch.get_block("scaled"))
    relu = sch.get_block("relu")
    y, x, c = sch.get_loops(relu)
    yo, xo, yi, xi = sch.tile([y, x], sch.sample_perfect_tile(y, 2)[1:]
                              + sch.sample_perfect_tile(x, 2)[1:])
    (conv_block,) = sch.get_producers(relu)
    sch.compute_at(conv_block, xo)
    sch.vectorize(sch.get_loops(relu)[-1])


def elementwise_rule(sch: tir.Schedule) -> None:
    b, c = sch.get_block("B"), sch.get_block("C")
    sch.get_consumers(b)
    sch.compute_inline(b)
    i, j = sch.get_loops(c)
    jo, ji = sch.split(j, [None, 8], preserve_unit_iters=False)
    fused = sch.fuse(i, jo)
    sch.parallel(fused)
    sch.vectorize(ji)
    sch.annotate(c, "meta", {"tag": "x", "scale": 0.5, "expr": tir.const(3) + 1})
    sch.annotate(c, "gone", 1)
    sch.unannotate(c, "gone")
    sch.get_child_blocks(fused)


CASES = [(matmul, matmul_rule), (conv, conv_rule), (elementwise, elementwise_rule)]


def scheduled(make, rule, seed: int = 0) -> tir.Schedule:
    sch = tir.Schedule(make(), seed=seed)
    rule(sch)
    return sch


def replay(make, trace_json: dict) -> tir.Schedule:
    """A fresh schedule of a freshly built function, with the trace replayed from JSON text."""
    sch = tir.Schedule(make())
    Trace.apply_json_to_schedule(json.loads(json.dumps(trace_json)), sch)
    return sch


def dumps(sch: tir.Schedule) -> str:
    return json.dumps(sch.trace.as_json(), sort_keys=True)


# ------------------------------------------------------------------ replay


@pytest.mark.parametrize("make, rule", CASES, ids=["matmul", "conv", "elementwise"])
@pytest.mark.parametrize("seed", [0, 5])
def test_json_replay_reproduces_the_function(make, rule, seed):
    sch = scheduled(make, rule, seed)
    again = replay(make, sch.trace.as_json())
    tir.assert_structural_equal(sch.mod["main"], again.mod["main"])
    assert dumps(again) == dumps(sch)
    assert str(again.trace) == str(sch.trace)


@pytest.mark.parametrize("make, rule", CASES[:2], ids=["matmul", "conv"])
def test_replayed_function_computes_what_the_original_does(make, rule):
    sch = scheduled(make, rule, seed=1)
    assert_same(make(), replay(make, sch.trace.as_json()), interpret=False)


def test_json_is_stable_and_plain():
    a, b = scheduled(conv, conv_rule, seed=3), scheduled(conv, conv_rule, seed=3)
    assert dumps(a) == dumps(b)
    text = json.dumps(a.trace.as_json(), allow_nan=False)  # plain JSON, no NaN literals
    assert Trace.from_json(json.loads(text)).as_json() == a.trace.as_json()


def test_live_trace_applies_to_another_schedule():
    sch = scheduled(elementwise, elementwise_rule)
    other = tir.Schedule(elementwise())
    sch.trace.apply_to_schedule(other, remove_postproc=False)
    tir.assert_structural_equal(sch.mod["main"], other.mod["main"])


def test_trace_prints_decisions_and_index_maps():
    sch = tir.Schedule(matmul(), seed=0)
    i = sch.get_loops(sch.get_block("C"))[0]
    sch.sample_perfect_tile(i, n=2, max_innermost_factor=16, decision=[2, 8])
    sch.sample_categorical([1, 2], [0.5, 0.5], decision=1)
    packed = sch.cache_read(sch.get_block("C"), 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda k, j: (j // 4, k, j % 4))
    lines = str(sch.trace).splitlines()
    assert lines[2] == "v4, v5 = sch.sample_perfect_tile(l1, n=2, max_innermost_factor=16, " \
                       "decision=[2, 8])"
    assert lines[3] == "v6 = sch.sample_categorical(candidates=[1, 2], probs=[0.5, 0.5], " \
                       "decision=1)"
    assert lines[6] == "sch.transform_layout(b8, ('write', 0), lambda k, j: (j // 4, k, j % 4))"


def test_replay_keeps_the_non_default_arguments():
    """preserve_unit_iters and consumer_blocks reach the trace, so the replay matches."""
    def rule(sch):
        b, c = sch.get_block("B"), sch.get_block("C")
        sch.cache_write(b, 0, "global", consumer_blocks=[c])
        sch.cache_read(c, 0, "global", consumer_blocks=[c])
        i, j = sch.get_loops(c)
        sch.fuse(*sch.split(i, [1, None], preserve_unit_iters=False), preserve_unit_iters=False)

    sch = scheduled(elementwise, rule)
    assert "consumer_blocks" in dumps(sch) and "preserve_unit_iters" in dumps(sch)
    tir.assert_structural_equal(sch.mod["main"], replay(elementwise, sch.trace.as_json())
                                .mod["main"])


def test_buffers_and_block_names_replay_by_name():
    def rule(sch):
        from tir.schedule.primitives.layout import buffer_named

        b = sch.get_block("B")
        sch.transform_layout(b, buffer_named(sch.func, "B"), lambda i, j: (j // 4, i, j % 4))
        sch.transform_layout("C", "B", lambda x, y, z: (y, x, z))

    sch = scheduled(elementwise, rule)
    assert '{"buffer": "B"}' in dumps(sch)
    again = replay(elementwise, sch.trace.as_json())
    tir.assert_structural_equal(sch.mod["main"], again.mod["main"])
    assert dumps(again) == dumps(sch)


def test_symbolic_expressions_rebind_to_the_new_function():
    def make():
        n = tir.Var("n")
        a = te.placeholder((n,), F32, "A")
        return te.create_prim_func([a, te.compute((n,), lambda i: a[i] * 2.0, name="B")])

    def rule(sch):
        (i,) = sch.get_loops(sch.get_block("B"))
        n = sch.func.buffer_map[sch.func.params[0]].shape[0]
        io, _ = sch.split(i, [None, n // 4 + 1])
        sch.annotate(io, "bound", n * 2)

    sch = scheduled(make, rule)
    tir.assert_structural_equal(sch.mod["main"], replay(make, sch.trace.as_json()).mod["main"])


# ------------------------------------------------------------------ sampling


def _draws(seed: int, count: int = 6) -> list:
    sch = tir.Schedule(matmul(4096 // 16), seed=seed)
    i = sch.get_loops(sch.get_block("C"))[0]
    return [sch.sample_perfect_tile(i, n=4, max_innermost_factor=64) for _ in range(count)]


def test_same_seed_same_samples_and_different_seeds_differ():
    assert _draws(7) == _draws(7)
    assert _draws(7) != _draws(8)


def test_copy_and_reseed_reproduce_the_sequence():
    sch = tir.Schedule(matmul(), seed=11)
    twin = sch.copy()
    first = [sch.sample_categorical(list(range(100)), [1.0] * 100) for _ in range(5)]
    assert [twin.sample_categorical(list(range(100)), [1.0] * 100) for _ in range(5)] == first
    sch.seed(11)
    assert [sch.sample_categorical(list(range(100)), [1.0] * 100) for _ in range(5)] == first
    a, b = tir.Schedule(matmul(), seed=4), tir.Schedule(matmul(), seed=4)
    assert a.fork_seed() == b.fork_seed() and isinstance(a.fork_seed(), int)


def test_perfect_tiles_are_valid_and_uniform():
    sch = tir.Schedule(matmul(12), seed=0)
    i = sch.get_loops(sch.get_block("C"))[0]
    seen = Counter(tuple(sch.sample_perfect_tile(i, n=2, max_innermost_factor=16))
                   for _ in range(600))
    assert set(seen) == {(12, 1), (6, 2), (4, 3), (3, 4), (2, 6), (1, 12)}
    assert min(seen.values()) > 60  # 100 expected each
    for n, limit in [(1, 16), (3, 4), (4, -1)]:
        for _ in range(20):
            f = sch.sample_perfect_tile(i, n=n, max_innermost_factor=limit)
            assert len(f) == n and math.prod(f) == 12 and (limit == -1 or f[-1] <= limit)
            assert all(type(x) is int for x in f)


def test_categorical_follows_the_probabilities():
    sch = tir.Schedule(matmul(), seed=2)
    seen = Counter(sch.sample_categorical(["a", "b", "c"], [0.0, 1.0, 3.0]) for _ in range(400))
    assert seen["a"] == 0 and 60 < seen["b"] < 140


def test_decisions_are_used_and_checked():
    sch = tir.Schedule(matmul(), seed=0)
    i = sch.get_loops(sch.get_block("C"))[0]
    assert sch.sample_perfect_tile(i, 3, decision=[2, 4, 2]) == [2, 4, 2]
    assert sch.sample_categorical([1.5, 2.5], [1, 1], decision=1) == 2.5
    for bad, msg in [([4, 2], "does not multiply"), ([1, 16], "exceeds max_innermost_factor"),
                     ([4, 2, 2, 1], "has 4 factors"), ([4.0, 4], "list of 2 ints")]:
        with pytest.raises(ScheduleError, match=msg):
            sch.sample_perfect_tile(i, 2, max_innermost_factor=8, decision=bad)
    with pytest.raises(ScheduleError, match="index in"):
        sch.sample_categorical([1, 2], [1, 1], decision=2)
    with pytest.raises(ScheduleError, match="probs"):
        sch.sample_categorical([1, 2], [0, 0])
    with pytest.raises(ScheduleError, match="n=1 leaves"):
        sch.sample_perfect_tile(i, 1, max_innermost_factor=8)


def test_an_edited_decision_replays():
    sch = tir.Schedule(matmul(), seed=0)
    sch.sample_perfect_tile(sch.get_loops(sch.get_block("C"))[0], 2)
    obj = sch.trace.as_json()
    obj["insts"][-1]["decision"] = [4, 4]
    again = replay(matmul, obj)
    assert again.trace.insts[-1].decision == [4, 4]
    obj["insts"][-1]["decision"] = [4, 5]
    with pytest.raises(ScheduleError, match=r"instruction 2 .*does not multiply"):
        replay(matmul, obj)


def test_symbolic_extent_cannot_be_tiled():
    n = tir.Var("n")
    a = te.placeholder((n,), F32, "A")
    sch = tir.Schedule(te.create_prim_func([a, te.compute((n,), lambda i: a[i], name="B")]))
    with pytest.raises(ScheduleError, match="loop i: the extent n is not a constant"):
        sch.sample_perfect_tile(sch.get_loops(sch.get_block("B"))[0], 2)


# ------------------------------------------------------------------ malformed JSON


def _good() -> dict:
    return scheduled(elementwise, elementwise_rule).trace.as_json()


def _broken(edit) -> dict:
    obj = _good()
    edit(obj)
    return obj


@pytest.mark.parametrize("edit, msg", [
    (lambda o: o["insts"][0].update(name="explode"), r"instruction 0 \(explode\).*unknown"),
    (lambda o: o["insts"][2].pop("inputs"), r"instruction 2 \(get_consumers\)"),
    (lambda o: o["insts"][2].update(inputs=[{"rv": "b99"}]), r"b99 is not made by an earlier"),
    (lambda o: o["insts"][2].update(inputs=[{"weird": 1}]), r"instruction 2.*tagged object"),
    (lambda o: o["insts"][1].update(decision=3), r"only sampling instructions"),
    (lambda o: o["insts"][3].update(inputs=[]), r"instruction 3 .*compute_inline.*missing"),
    (lambda o: o.update(version=9), r"version"),
    (lambda o: o["insts"].append(7), r"instruction \d+ \(\?\)"),
])
def test_malformed_json_raises_value_error(edit, msg):
    with pytest.raises(ValueError, match=msg) as info:
        replay(elementwise, _broken(edit))
    assert not isinstance(info.value, ScheduleError)


def test_unserializable_values_are_named():
    sch = tir.Schedule(elementwise())
    sch.annotate(sch.get_block("B"), "obj", object())
    with pytest.raises(ValueError, match=r"instruction 1 \(annotate\).*object"):
        sch.trace.as_json()


def test_expression_codec_round_trips():
    x, y = tir.Var("x"), tir.Var("y", "int64")
    exprs = [tir.Select(x > 1, tir.Cast("int64", x) + y, y * 2),
             tir.call_intrin(F32, "tir.exp", tir.FloatImm(F32, 1.5)),
             tir.Let(x, tir.const(2), x * x), tir.FloatImm("float64", float("nan")),
             tir.Ramp(x, 1, 4), tir.Broadcast(tir.const(1.0), 8), tir.Not(x < 3)]
    enc = Encoder()
    text = json.dumps([enc.value(e) for e in exprs], allow_nan=False)
    dec = Decoder()
    back = [dec.value(v) for v in json.loads(text)]
    for e, b in zip(exprs, back):
        assert tir.structural_equal(e, b, map_free_vars=True) or str(e) == str(b) == "nan"
    assert back[0].condition.a is back[0].true_value.a.value  # one Var for one id
    imap = dec.value(json.loads(json.dumps(enc.value(IndexMap([x], [x // 4, x % 4])))))
    assert [str(e) for e in imap(tir.Var("z"))] == ["z // 4", "z % 4"]
