"""PassContext, config table, Pass/Sequential gating, decorators and instruments."""

import io

import pytest

import tir
import transform
from transform import PassContext


def _func(n=8):
    a = tir.decl_buffer((n,), "float32", name="A")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(a, tir.const(1.0), [i]))
    return tir.PrimFunc([a], body)


def _mod():
    return tir.IRModule.from_expr(_func())


def _recorder(log, name, opt_level=0):
    @transform.module_pass(opt_level=opt_level, name=name)
    def p(mod, ctx):
        log.append(name)
        return mod

    return p


# ------------------------------------------------------------------ context and config


def test_current_is_default_outside_and_innermost_inside():
    default = PassContext.current()
    assert isinstance(default, PassContext) and default.opt_level == 2
    with PassContext(opt_level=3) as outer:
        assert PassContext.current() is outer
        with PassContext(opt_level=1) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is default


def test_config_lookup_values_and_defaults():
    with PassContext(config={"tir.disable_vectorize": True, "codegen.llvm.opt_level": 1}) as ctx:
        assert ctx.config["tir.disable_vectorize"] is True
        assert ctx.config.get("codegen.llvm.opt_level") == 1
        assert ctx.config.get("tir.noalias") is True  # registered default
        assert ctx.config.get("tir.noalias", "mine") == "mine"  # explicit default wins if unset
        assert "tir.noalias" not in ctx.config and "tir.disable_vectorize" in ctx.config
        assert set(ctx.config) == {"tir.disable_vectorize", "codegen.llvm.opt_level"}


def test_reading_an_unregistered_key_raises():
    config = PassContext().config
    with pytest.raises(ValueError, match="Did you mean 'tir.noalias'.*register_config"):
        config.get("tir.noalia", False)
    with pytest.raises(ValueError, match="unknown config key"):
        config["tir.nothing_like_this"]


def test_config_is_read_only():
    ctx = PassContext(config={"tir.disable_vectorize": True})
    with pytest.raises(TypeError):
        ctx.config["tir.disable_vectorize"] = False


def test_dict_config_is_completed_with_subkey_defaults():
    ctx = PassContext(config={"tir.UnrollLoop": {"auto_max_step": 16}})
    unroll = ctx.config["tir.UnrollLoop"]
    assert unroll["auto_max_step"] == 16 and unroll["explicit_unroll"] is True
    assert PassContext().config.get("tir.UnrollLoop")["auto_max_step"] == 0


def test_unknown_key_suggests_near_miss():
    with pytest.raises(ValueError, match=r"Did you mean 'tir.disable_vectorize'.*Known:"):
        PassContext(config={"tir.disable_vectorise": True})


def test_unknown_subkey_suggests_near_miss():
    with pytest.raises(ValueError, match=r"tir.UnrollLoop.*Did you mean 'auto_max_step'"):
        PassContext(config={"tir.UnrollLoop": {"auto_max_stp": 4}})


@pytest.mark.parametrize(
    "config, match",
    [
        ({"tir.disable_vectorize": 1}, "'tir.disable_vectorize' expects a bool, got int"),
        ({"codegen.llvm.opt_level": True}, "'codegen.llvm.opt_level' expects an int, got bool"),
        ({"tir.UnrollLoop": 4}, "'tir.UnrollLoop' expects a dict"),
        ({"tir.UnrollLoop": {"explicit_unroll": "yes"}}, "explicit_unroll' expects a bool"),
    ],
)
def test_wrong_value_type_names_key(config, match):
    with pytest.raises(TypeError, match=match):
        PassContext(config=config)


def test_out_of_range_value():
    with pytest.raises(ValueError, match=r"codegen.llvm.opt_level.*0\.\.3, got 7"):
        PassContext(config={"codegen.llvm.opt_level": 7})


def test_register_config_adds_a_key(monkeypatch):
    monkeypatch.setattr(transform.config, "_REGISTRY", dict(transform.config._REGISTRY))
    transform.register_config("test.infra_key", int, 5, "A key for this test.")
    assert "test.infra_key" in transform.known_configs()
    assert PassContext(config={"test.infra_key": 9}).config["test.infra_key"] == 9
    assert PassContext().config.get("test.infra_key") == 5


def test_list_configs_documents_every_key():
    configs = PassContext.list_configs()
    assert configs["tir.disable_vectorize"] == {
        "type": "bool", "default": False, "doc": "Turn vectorized loops into serial ones."
    }
    assert configs["codegen.llvm.opt_level"]["default"] == 3
    assert all(entry["doc"] for entry in configs.values())


def test_bad_opt_level_and_pass_lists():
    with pytest.raises(TypeError, match="opt_level must be an int"):
        PassContext(opt_level="3")
    with pytest.raises(TypeError, match="required_pass must be a list"):
        PassContext(required_pass="tir.Simplify")


# ------------------------------------------------------------------ passes and gating


def test_sequential_runs_in_order():
    log = []
    seq = transform.Sequential([_recorder(log, n) for n in ("a", "b", "c")])
    mod = _mod()
    assert seq(mod) is mod
    assert log == ["a", "b", "c"]


def test_opt_level_gating_and_required_and_disabled():
    log = []
    seq = transform.Sequential(
        [_recorder(log, "low", 1), _recorder(log, "high", 3), _recorder(log, "off", 0)]
    )
    with PassContext(opt_level=2):
        seq(_mod())
    assert log == ["low", "off"]
    log.clear()
    with PassContext(opt_level=2, required_pass=["high"], disabled_pass=["off"]):
        seq(_mod())
    assert log == ["low", "high"]


def test_disabled_beats_required():
    log = []
    seq = transform.Sequential([_recorder(log, "x")])
    with PassContext(required_pass=["x"], disabled_pass=["x"]):
        seq(_mod())
    assert log == []


def test_direct_call_ignores_opt_level():
    log = []
    with PassContext(opt_level=0):
        _recorder(log, "high", 3)(_mod())
    assert log == ["high"]


def test_nested_sequential():
    log = []
    inner = transform.Sequential([_recorder(log, "b"), _recorder(log, "c")], name="inner")
    transform.Sequential([_recorder(log, "a"), inner, _recorder(log, "d")])(_mod())
    assert log == ["a", "b", "c", "d"]


def test_sequential_rejects_non_passes():
    with pytest.raises(TypeError, match="expected Pass objects"):
        transform.Sequential([lambda mod: mod])


@pytest.mark.parametrize("make", [lambda: _func(), lambda: 3])
def test_pass_on_non_module_raises(make):
    p = transform.prim_func_pass(lambda f, m, c: f, name="Id")
    with pytest.raises(TypeError, match="'Id' expects an IRModule"):
        p(make())


def test_prim_func_on_pass_hints_from_expr():
    p = transform.prim_func_pass(lambda f, m, c: f, name="Id")
    with pytest.raises(TypeError, match="IRModule.from_expr"):
        p(_func())
    with pytest.raises(TypeError, match="IRModule.from_expr"):
        transform.Sequential([p])(_func())


# ------------------------------------------------------------------ decorators


def test_prim_func_pass_decorator_on_function_keeps_identity():
    @transform.prim_func_pass(opt_level=1)
    def keep(func, mod, ctx):
        return func

    mod = _mod()
    assert keep.info.name == "keep" and keep.info.opt_level == 1
    assert keep(mod) is mod


def test_prim_func_pass_builds_new_module_on_change():
    @transform.prim_func_pass(name="Tag")
    def tag(func, mod, ctx):
        return func.with_attr("tagged", True)

    mod = tir.IRModule({"main": _func(), "other": _func(4)}, attrs={"k": 1})
    out = tag(mod)
    assert out is not mod and mod["main"].attrs.get("tagged") is None
    assert out["main"].attrs["tagged"] is True and out["other"].attrs["tagged"] is True
    assert out.attrs == {"k": 1}


def test_prim_func_pass_bare_decorator_and_removal():
    @transform.prim_func_pass
    def drop_other(func, mod, ctx):
        return None if func is mod["other"] else func

    mod = tir.IRModule({"main": _func(), "other": _func(4)})
    out = drop_other(mod)
    assert list(out.functions) == ["main"] and out["main"] is mod["main"]


def test_prim_func_pass_wrong_return_type():
    p = transform.prim_func_pass(lambda f, m, c: f.body, name="Bad")
    with pytest.raises(TypeError, match="'Bad' must return a PrimFunc or None for 'main', got"):
        p(_mod())


def test_module_pass_decorator_on_function_and_bad_return():
    @transform.module_pass(opt_level=2, name="Fresh", required=["tir.Simplify"])
    def fresh(mod, ctx):
        return tir.IRModule(dict(mod.functions))

    mod = _mod()
    assert fresh(mod) is not mod
    assert fresh.info.required == ("tir.Simplify",)
    bad = transform.module_pass(lambda mod, ctx: None, name="Bad")
    with pytest.raises(TypeError, match="'Bad' must return an IRModule, got NoneType"):
        bad(mod)


def test_decorators_on_classes():
    @transform.prim_func_pass(opt_level=1)
    class AddAttr:
        """Set an attribute."""

        def __init__(self, value):
            self.value = value

        def transform_function(self, func, mod, ctx):
            return func.with_attr("value", self.value)

    @transform.module_pass(name="CountFuncs")
    class CountFuncs:
        def __init__(self):
            self.seen = []

        def transform_module(self, mod, ctx):
            self.seen.append(len(mod))
            return mod

    p = AddAttr(7)
    assert isinstance(p, transform.PrimFuncPass) and p.info.name == "AddAttr"
    assert p(_mod())["main"].attrs["value"] == 7
    counter = CountFuncs()
    counter(_mod())
    assert isinstance(counter, transform.ModulePass) and counter.instance.seen == [1]


def test_class_without_method_is_rejected():
    with pytest.raises(TypeError, match="needs a transform_function"):
        transform.prim_func_pass(type("Empty", (), {}))


# ------------------------------------------------------------------ instruments


class _Log(transform.PassInstrument):
    def __init__(self, log, skip=()):
        self.log, self.skip = log, skip

    def enter_pass_ctx(self):
        self.log.append("enter")

    def exit_pass_ctx(self):
        self.log.append("exit")

    def should_run(self, mod, info):
        return info.name not in self.skip

    def run_before_pass(self, mod, info):
        self.log.append(f"before {info.name}")

    def run_after_pass(self, mod, info):
        self.log.append(f"after {info.name}")


def test_instruments_fire_in_order():
    log = []
    seq = transform.Sequential([_recorder(log, "a"), _recorder(log, "b", 3)])
    with PassContext(instruments=[_Log(log)]):
        seq(_mod())
    assert log == ["enter", "before a", "a", "after a", "exit"]


def test_failing_enter_leaves_no_context_behind():
    log = []

    class Broken(transform.PassInstrument):
        def enter_pass_ctx(self):
            raise RuntimeError("cannot start")

    outer = PassContext.current()
    ctx = PassContext(instruments=[_Log(log), Broken()])
    with pytest.raises(RuntimeError, match="cannot start"):
        ctx.__enter__()
    assert log == ["enter", "exit"] and PassContext.current() is outer


def test_should_run_false_skips_pass():
    log = []
    seq = transform.Sequential([_recorder(log, "a"), _recorder(log, "b")])
    with PassContext(instruments=[_Log(log, skip={"a"})]):
        seq(_mod())
    assert log == ["enter", "before b", "b", "after b", "exit"]


def test_instruments_fire_on_direct_call():
    log = []
    with PassContext(instruments=[_Log(log)]):
        _recorder(log, "solo", 3)(_mod())
    assert log == ["enter", "before solo", "solo", "after solo", "exit"]


def test_pass_instrument_decorator():
    @transform.pass_instrument
    class Counter:
        def __init__(self):
            self.n = 0

        def run_after_pass(self, mod, info):
            self.n += 1

    c = Counter()
    assert isinstance(c, transform.PassInstrument)
    with PassContext(instruments=[c]):
        transform.Sequential([_recorder([], "a"), _recorder([], "b")])(_mod())
    assert c.n == 2


def test_print_ir_after_each_names_every_pass():
    out = io.StringIO()
    seq = transform.Sequential([_recorder([], "first"), _recorder([], "second")])
    with PassContext(instruments=[transform.PrintIRAfterEach(out)]):
        seq(_mod())
    text = out.getvalue()
    assert "=== after first ===" in text and "=== after second ===" in text
    assert text.index("after first") < text.index("after second")


def test_print_ir_after_each_defaults_to_stdout(capsys):
    with PassContext(instruments=[transform.PrintIRAfterEach()]):
        _recorder([], "shown")(_mod())
    assert "=== after shown ===" in capsys.readouterr().out


def test_timing_instrument_records_all_passes():
    timing = transform.PassTimingInstrument()
    seq = transform.Sequential([_recorder([], n) for n in ("a", "b", "a")])
    with PassContext(instruments=[timing]):
        seq(_mod())
    assert [name for name, _ in timing.records] == ["a", "b", "a"]
    assert set(timing.timings) == {"a", "b"} and all(t >= 0 for t in timing.timings.values())
    table = timing.render()
    assert table.splitlines()[0].split() == ["pass", "ms"]
    assert "a" in table and "b" in table and "total" in table


@pytest.mark.parametrize(
    ("instruments", "message"),
    [
        (5, r"instruments must be a list of PassInstrument objects, got int"),
        (transform.PrintIRAfterEach(), r"got PrintIRAfterEach; wrap a single instrument in a list"),
        ("timing", r"got str"),
        ([object()], r"instruments\[0\] \(object\) is not a pass instrument: it lacks "
                     r"enter_pass_ctx, exit_pass_ctx, should_run, run_before_pass, run_after_pass"),
        ([transform.PassTimingInstrument(), None], r"instruments\[1\] \(NoneType\)"),
        ([transform.PrintIRAfterEach], r"instruments\[0\] is the class PrintIRAfterEach, not an "
                                       r"instance; pass PrintIRAfterEach\(...\)"),
    ],
)
def test_bad_instruments_are_rejected_at_construction(instruments, message):
    with pytest.raises(TypeError, match=message):
        PassContext(instruments=instruments)


def test_instruments_may_be_any_iterable_of_objects_with_the_hooks():
    class DuckTyped:  # all five hooks, without the base class
        enter_pass_ctx = exit_pass_ctx = lambda self: None
        run_before_pass = run_after_pass = lambda self, mod, info: None

        def should_run(self, mod, info):
            return True

    duck, timing = DuckTyped(), transform.PassTimingInstrument()
    ctx = PassContext(instruments=(i for i in [duck, timing]))
    assert ctx.instruments == (duck, timing)
    with ctx:
        _recorder([], "a")(_mod())
    assert [name for name, _ in timing.records] == ["a"]
