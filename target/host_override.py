"""``TIRLITE_HOST_TARGET``: let the host target stand for another x86 CPU this machine can run.

Tests and tutorials take vector lanes and features from ``Target("llvm")``,
the host. Run on an AVX-512 machine, they only ever see 512-bit registers, and
an expectation tied to them passes here and fails on a user's AVX2 machine.
With the variable set, the host resolves to the named CPU instead::

    TIRLITE_HOST_TARGET="llvm -mcpu=znver3" bash scripts/test.sh      # AVX2, 256 bits

Everything that asks the host -- ``Target("llvm").mcpu``, ``.features``,
``.vector_width_bits``, the code the JIT runs, the disk cache key -- then
sees that CPU, with the vector-ISA features LLVM gives it (see
``cpu_features.py``) and any ``-mattr`` added. The code runs natively,
so the CPU must be one this machine can run: a feature it needs that the
machine lacks (AVX-512 on an AVX2 machine) is a ValueError, raised by the
first use of the host target. The variable is read once per process.
"""

from __future__ import annotations

import os
from typing import Any

#: The environment variable naming the CPU the host target resolves to.
ENV = "TIRLITE_HOST_TARGET"


def requested() -> str | None:
    """The override's target string, or None when the host is the machine itself."""
    text = os.environ.get(ENV, "").strip()
    return text or None


def apply(real: dict[str, Any]) -> dict[str, Any]:
    """The host facts (``triple``, ``cpu``, ``features``) as the override makes them.

    ``real`` are the machine's own facts; they are returned unchanged without an override.
    """
    text = requested()
    if text is None:
        return real
    from . import cpu_features, subtarget
    from .target import _arch, _enabled_features, _parse

    try:
        kind, options = _parse(text)
    except ValueError as err:
        raise ValueError(f"{ENV}={text!r}: {err}") from None
    _check_options(text, options, real["triple"], _arch)
    cpu, mattr = options["mcpu"], options.get("mattr", "")
    probe = subtarget._probe(real["triple"], cpu, mattr)
    if cpu not in probe.cpus or probe.fatal:
        raise ValueError(f"{ENV}={text!r}: LLVM cannot generate {real['triple']} code for CPU "
                         f"{cpu!r}; name an x86-64 CPU such as znver3, x86-64-v3 or skylake-avx512")
    for feature in filter(None, mattr.split(",")):
        if feature[1:] not in probe.features:
            raise ValueError(f"{ENV}={text!r}: LLVM knows no feature {feature[1:]!r}")
    found = cpu_features.cpu_features(real["triple"], cpu, mattr)
    lacking = sorted(f for f, on in found.items()
                     if on and f not in _enabled_features(real["features"]))
    if lacking:
        raise ValueError(
            f"{ENV}={text!r}: code for {cpu} needs {', '.join(lacking)}, which this machine's "
            f"CPU ({real['cpu']}) lacks, so it could not run here; name a CPU this machine can "
            f"run (an AVX-512 machine runs AVX2 code: -mcpu=x86-64-v3 or znver3) or unset {ENV}")
    listed = [("+" if on else "-") + f for f, on in found.items()]
    # The probe saw -mattr already; features it does not probe are passed on as given.
    features = ",".join(listed + [f for f in mattr.split(",") if f and f[1:] not in found])
    return {"triple": real["triple"], "cpu": cpu, "features": features}


def _check_options(text: str, options: dict[str, str], triple: str, arch) -> None:
    extra = sorted(set(options) - {"mcpu", "mattr", "mtriple"})
    if extra or "mcpu" not in options or options["mcpu"] == "native":
        raise ValueError(f"{ENV}={text!r}: give a CPU and optionally features, as in "
                         f"'llvm -mcpu=znver3' or 'llvm -mcpu=x86-64-v4 -mattr=-avx512vl'")
    if "mtriple" in options and arch(options["mtriple"]) != arch(triple):
        raise ValueError(f"{ENV}={text!r}: the host target must be for this machine "
                         f"({triple}); cross targets are named in build(target=...)")
    if arch(triple) not in ("x86_64", "i386", "i686"):
        raise ValueError(f"{ENV}={text!r}: host overrides are for x86 machines; this is {triple}")
