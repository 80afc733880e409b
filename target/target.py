"""Compilation targets: parse TVM-style target strings such as ``"llvm -mcpu=skylake"``.

A target names the CPU code is generated for. ``"llvm"`` (and
``-mcpu=native``) mean the machine we run on, with all its features, so
AVX2/FMA are used where the host has them. ``-mtriple=`` cross-compiles:
such a module can be inspected (``get_source("asm")``) but not run here.

>>> t = Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve")
>>> t.mattr, str(t)
(('+sve',), 'llvm -mtriple=aarch64-linux-gnu -mattr=+sve')

Host facts (CPU name, features) come from LLVM and are looked up lazily, so
parsing a target does not load llvmlite.
"""

from __future__ import annotations

import functools
from typing import Any

from . import host_override
from . import scope as target_scope

_KINDS = ("llvm",)
#: Options we understand; anything else is a ValueError (a typo must not be ignored).
_OPTIONS = ("mtriple", "mcpu", "mattr", "mtune", "opt-level", "num-cores")


class Target:
    """A parsed target string: ``kind`` plus ``-mtriple``, ``-mcpu``, ``-mattr`` options.

    Args:
        target: a string like ``"llvm -mcpu=native -mattr=+avx2,+fma"`` or a Target.

    Raises:
        ValueError: an unknown kind or option, or a malformed option.
    """

    __slots__ = ("kind", "options")

    def __init__(self, target: str | Target = "llvm"):
        if isinstance(target, Target):
            target = str(target)
        if not isinstance(target, str):
            raise TypeError(f"Target: expected a target string, got {type(target).__name__}")
        self.kind, self.options = _parse(target)

    # ------------------------------------------------------------ the string

    def __str__(self) -> str:
        parts = [self.kind]
        for key, value in self.options.items():
            parts.append(f"-{key}={value}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Target(other)
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    # ------------------------------------------------------------ the target scope

    def __enter__(self) -> "Target":
        """``with Target(...):`` makes this the target of passes run inside (TVM's scope)."""
        target_scope.push_target(str(self))
        return self

    def __exit__(self, *exc) -> None:
        target_scope.pop_target()

    @staticmethod
    def current() -> "Target | None":
        """The innermost entered target, or None."""
        text = target_scope.current_target()
        return None if text is None else Target(text)

    # ------------------------------------------------------------ resolved facts

    @property
    def triple(self) -> str:
        """The LLVM target triple (the host's unless ``-mtriple`` is given)."""
        return self.options.get("mtriple") or _host()["triple"]

    @property
    def arch(self) -> str:
        """The architecture part of the triple (``x86_64``, ``aarch64``)."""
        return _arch(self.triple)

    @property
    def is_host(self) -> bool:
        """Whether code for this target runs on this machine."""
        return self.arch == _arch(_host()["triple"])

    def resolved(self) -> "Target":
        """The same target with triple, CPU and features spelled out (no ``native``)."""
        parts = [self.kind, f"-mtriple={self.triple}", f"-mcpu={self.mcpu}"]
        if self.features:
            parts.append(f"-mattr={self.features}")
        if "opt-level" in self.options:
            parts.append(f"-opt-level={self.options['opt-level']}")
        return Target(" ".join(parts))

    @property
    def missing_host_features(self) -> tuple[str, ...]:
        """Features ``-mattr`` turns on that this machine lacks (its code would not run).

        Under ``TIRLITE_HOST_TARGET`` the features that CPU lacks count as missing too,
        so code for them is refused as it would be on a machine with that CPU.
        """
        if not self.is_host:
            return ()
        turned_off = {f[1:] for f in _host()["features"].split(",") if f.startswith("-")}
        host = _enabled_features(_machine()["features"]) - turned_off
        return tuple(f for f in self.mattr if f.startswith("+") and f[1:] not in host)

    @property
    def mcpu(self) -> str:
        """The CPU name given to LLVM: the host CPU for ``native`` or when unset on the host."""
        cpu = self.options.get("mcpu", "native")
        if cpu != "native":
            return cpu
        return _host()["cpu"] if self.is_host else "generic"

    @property
    def mattr(self) -> tuple[str, ...]:
        """The features given with ``-mattr``, such as ``("+avx2", "+fma")``."""
        text = self.options.get("mattr", "")
        return tuple(f for f in text.split(",") if f)

    @property
    def features(self) -> str:
        """The LLVM feature string: the host's features (for a host CPU) plus ``mattr``."""
        base = []
        if self.is_host and self.options.get("mcpu", "native") == "native":
            base = [f for f in _host()["features"].split(",") if f]
        return ",".join(base + list(self.mattr))

    @property
    def vector_width_bits(self) -> int:
        """The widest fixed-width vector register the target's features allow."""
        if self.arch not in ("x86_64", "i386", "i686"):
            return 128
        if self.options.get("mcpu", "native") != "native":
            # An explicit CPU brings features its name does not spell: ask LLVM.
            from .subtarget import vector_width_bits

            return vector_width_bits(self) or 128
        enabled = _enabled_features(self.features)
        if "avx512f" in enabled:
            return 512
        return 256 if "avx" in enabled else 128

    @property
    def vector_registers(self) -> int:
        """How many vector registers the ISA has: 16 on x86 without AVX-512, else 32."""
        if self.arch in ("x86_64", "i386", "i686"):
            return 32 if self.vector_width_bits >= 512 else 16
        return 32  # AArch64 NEON and SVE both have 32

    @property
    def has_fma(self) -> bool:
        """Whether the target has fused multiply-add (for ``-mcpu``, as LLVM's code shows)."""
        features = self.features.split(",")
        if "+fma" in features or "+neon" in features or self.arch == "aarch64":
            return True
        if self.options.get("mcpu", "native") != "native" and self.arch == "x86_64":
            from .cpu_features import cpu_features

            return bool(cpu_features(self.triple, self.mcpu, ",".join(self.mattr)).get("fma"))
        return False

    def has_feature(self, name: str) -> bool:
        """Whether the target's code may use the instruction-set feature ``name``.

        ``name`` is LLVM's spelling without the sign (``"avx512vnni"``, ``"avxvnni"``,
        ``"avx512bf16"``, ``"fma"``). A host target answers from the host's features; an
        explicit ``-mcpu`` from the code LLVM generates for that CPU (for the features
        ``target.cpu_features`` probes; others count as absent); ``-mattr`` adds to both.

        >>> Target("llvm -mcpu=znver3").has_feature("avx512vnni")   # doctest: +SKIP
        False
        """
        signs = {f[1:]: f[0] == "+" for f in self.mattr if f[:1] in "+-"}
        if name in signs:
            return signs[name]
        if self.options.get("mcpu", "native") == "native":
            return name in _enabled_features(self.features) if self.is_host else False
        if self.arch not in ("x86_64", "i386", "i686"):
            return False
        from .cpu_features import cpu_features

        return bool(cpu_features(self.triple, self.mcpu, ",".join(self.mattr)).get(name))

    @property
    def has_sve(self) -> bool:
        """Whether scalable (SVE) vectors are available (``+sve``, ``+sve2``, ...)."""
        return any(f.startswith("sve") for f in _enabled_features(self.features))

    def known_cpus(self) -> tuple[str, ...]:
        """The CPU names LLVM knows for this target's triple (valid ``-mcpu`` values)."""
        from .subtarget import known_cpus

        return known_cpus(self.triple)

    def known_features(self) -> tuple[str, ...]:
        """The feature names LLVM knows for this target's triple (for ``-mattr=+name``)."""
        from .subtarget import known_features

        return known_features(self.triple)

    @property
    def opt_level(self) -> int | None:
        """The ``-opt-level`` option, if given."""
        value = self.options.get("opt-level")
        return None if value is None else int(value)


def has_sve(target: Any) -> bool:
    """Whether a target (string or ``codegen.Target``) turns on SVE (``-mattr=+sve``,
    ``+sve2``, ...): scalable vectors are then allowed, as in TVM's ``TargetHasVLA``."""
    if target is None:
        return False
    mattr = getattr(target, "mattr", None)
    features = mattr if mattr is not None else _mattr_of(str(target))
    return any(f.startswith("+sve") for f in features)


def _mattr_of(text: str) -> tuple[str, ...]:
    for token in text.split():
        if token.startswith("-mattr="):
            return tuple(token[len("-mattr="):].split(","))
    return ()


def _parse(text: str) -> tuple[str, dict[str, str]]:
    tokens = text.split()
    if not tokens:
        raise ValueError("Target: empty target string; use 'llvm'")
    kind, options = tokens[0], {}
    if kind not in _KINDS:
        raise ValueError(
            f"Target: unknown target kind {kind!r} in {text!r}; expected one of {_KINDS}"
        )
    for token in tokens[1:]:
        key, value = _parse_option(token, text)
        options[key] = value
    return kind, options


def _parse_option(token: str, text: str) -> tuple[str, str]:
    if not token.startswith("-") or "=" not in token:
        raise ValueError(f"Target: malformed option {token!r} in {text!r}; write -key=value")
    key, _, value = token.lstrip("-").partition("=")
    if key not in _OPTIONS:
        raise ValueError(
            f"Target: unknown option -{key} in {text!r}; known: "
            + ", ".join(f"-{k}" for k in _OPTIONS)
        )
    if not value:
        raise ValueError(f"Target: option -{key} needs a value in {text!r}")
    if key == "mattr":
        for feature in value.split(","):
            if feature[:1] not in "+-" or len(feature) < 2:
                raise ValueError(
                    f"Target: feature {feature!r} in {text!r} must start with + or -"
                )
    if key == "opt-level" and value not in "0123":
        raise ValueError(f"Target: -opt-level must be 0..3, got {value!r}")
    return key, value


def _arch(triple: str) -> str:
    arch = triple.split("-")[0]
    return {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch)


def _enabled_features(features: str) -> set[str]:
    enabled: set[str] = set()
    for f in features.split(","):
        if f.startswith("+"):
            enabled.add(f[1:])
        elif f.startswith("-"):
            enabled.discard(f[1:])
    return enabled


@functools.cache
def _host() -> dict[str, Any]:
    """The host's triple, CPU and features (another CPU's under ``TIRLITE_HOST_TARGET``)."""
    return host_override.apply(_machine())


@functools.cache
def _machine() -> dict[str, Any]:
    """The triple, CPU and features of the machine itself, whatever the override says."""
    import llvmlite.binding as llvm

    return {
        "triple": llvm.get_process_triple(),
        "cpu": llvm.get_host_cpu_name(),
        "features": llvm.get_host_cpu_features().flatten(),
    }


def host_triple() -> str:
    """The triple of the machine we run on."""
    return _host()["triple"]
