"""``PassContext``: the options (opt level, config, instruments) passes run under.

Contexts form a stack, one per thread: ``with PassContext(...):`` pushes one,
``PassContext.current()`` returns the innermost (or a default context when
none is entered).

>>> with PassContext(opt_level=3, config={"tir.disable_vectorize": True}) as ctx:
...     PassContext.current() is ctx
True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Self

from .config import Config, known_configs

_local = threading.local()


def _stack() -> list[PassContext]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _names(values: Iterable[str] | None, what: str) -> frozenset[str]:
    if values is None:
        return frozenset()
    if isinstance(values, str):
        raise TypeError(f"PassContext: {what} must be a list of pass names, got the str {values!r}")
    return frozenset(values)


#: The hooks ``PassContext`` and ``Sequential`` call on every instrument.
_HOOKS = ("enter_pass_ctx", "exit_pass_ctx", "should_run", "run_before_pass", "run_after_pass")


def _instruments(values: Iterable[Any] | None) -> tuple:
    """``values`` as a tuple of instruments; TypeError naming the first bad item."""
    if values is None:
        return ()
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(
            f"PassContext: instruments must be a list of PassInstrument objects, "
            f"got {type(values).__name__}; wrap a single instrument in a list"
        )
    items = tuple(values)
    for k, inst in enumerate(items):
        _check_instrument(k, inst)
    return items


def _check_instrument(k: int, inst: Any) -> None:
    if isinstance(inst, type):
        raise TypeError(
            f"PassContext: instruments[{k}] is the class {inst.__name__}, not an instance; "
            f"pass {inst.__name__}(...)"
        )
    missing = [h for h in _HOOKS if not callable(getattr(inst, h, None))]
    if missing:
        raise TypeError(
            f"PassContext: instruments[{k}] ({type(inst).__name__}) is not a pass instrument: "
            f"it lacks {', '.join(missing)}; subclass transform.PassInstrument or decorate "
            "its class with @transform.pass_instrument"
        )


class PassContext:
    """The options passes run under; use it as a context manager.

    Args:
        opt_level: passes whose ``info.opt_level`` is higher are skipped by
            ``Sequential`` (unless listed in ``required_pass``).
        required_pass: names of passes to run whatever their opt level.
        disabled_pass: names of passes never to run inside a ``Sequential``.
        instruments: ``PassInstrument`` objects called around every pass.
        config: option values, checked against ``transform.config``.

    While entered, the context collects the remarks passes emit (the
    vectorizer's, for example) in ``ctx.remarks``.

    Raises:
        ValueError: an unknown config key (the message suggests a near miss).
        TypeError: a config value of the wrong type, or an instrument that is
            not a ``PassInstrument`` (nor has its hook methods).
    """

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] | None = None,
        disabled_pass: Iterable[str] | None = None,
        instruments: Iterable[Any] | None = None,
        config: Mapping[str, Any] | None = None,
    ):
        if isinstance(opt_level, bool) or not isinstance(opt_level, int):
            raise TypeError(f"PassContext: opt_level must be an int, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = _names(required_pass, "required_pass")
        self.disabled_pass = _names(disabled_pass, "disabled_pass")
        self.instruments = _instruments(instruments)
        self.config = Config(config)
        #: The remarks passes emitted while this was the innermost entered context.
        self.remarks: list = []

    @staticmethod
    def current() -> PassContext:
        """The innermost entered context, or the default context."""
        stack = _stack()
        if stack:
            return stack[-1]
        if not hasattr(_local, "default"):
            _local.default = PassContext()
        return _local.default

    @staticmethod
    def entered() -> PassContext | None:
        """The innermost context entered with ``with``, or None (remarks go only there)."""
        stack = _stack()
        return stack[-1] if stack else None

    @staticmethod
    def list_configs() -> dict[str, dict[str, Any]]:
        """Every known config key with its type, default and doc (as TVM's ``list_configs``)."""
        return {
            name: {"type": key.type.__name__, "default": key.default, "doc": key.doc}
            for name, key in known_configs().items()
        }

    def __enter__(self) -> Self:
        entered = []
        try:
            for inst in self.instruments:
                inst.enter_pass_ctx()
                entered.append(inst)
        except BaseException:  # leave no half-entered context behind
            for inst in reversed(entered):
                inst.exit_pass_ctx()
            raise
        _stack().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            for inst in self.instruments:
                inst.exit_pass_ctx()
        finally:
            popped = _stack().pop()
            assert popped is self, "PassContext exited out of order"

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Bracket a build step that is not a TIR pass, such as ``"llvm.optimize"``.

        Instruments hear it through ``run_before_phase(name)`` and
        ``run_after_phase(name)`` (``PassTimingInstrument`` times it); the pass
        hooks are not called, since a phase has no ``IRModule`` to show.
        ``run_after_phase`` runs even when the step raises.
        """
        listeners = [i for i in self.instruments if callable(getattr(i, "run_before_phase", None))]
        for inst in listeners:
            inst.run_before_phase(name)
        try:
            yield
        finally:
            for inst in listeners:
                inst.run_after_phase(name)

    def pass_enabled(self, info: Any) -> bool:
        """Whether a pass with ``info`` runs here: disabled, required, then opt level."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def __repr__(self) -> str:
        return (
            f"PassContext(opt_level={self.opt_level}, config={dict(self.config)!r}, "
            f"instruments={[type(i).__name__ for i in self.instruments]})"
        )
