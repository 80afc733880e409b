"""Checking ``-mcpu`` and ``-mattr`` before LLVM sees them.

LLVM takes any CPU or feature name: an unknown one gets a warning on stderr
and is ignored, and a CPU that cannot run the triple's code (``-mcpu=i686``
for ``x86_64``, or an unknown name, which leaves no 64-bit support) ends the
process with ``LLVM ERROR: 64-bit code requested on a subtarget that doesn't
support it!`` -- no Python exception, the caller's process is gone.

llvmlite does not expose LLVM's CPU and feature tables, and LLVM only prints
them (``-mcpu=help``, once per process) to stderr. So a short child process
prints them for the triple, then generates code for a trivial function with
the requested CPU and features: if LLVM aborts, only the child dies. On x86
it also reports the widest vector register the CPU's code uses (an explicit
CPU's features are not in its name). The results are cached per process.
"""

from __future__ import annotations

import difflib
import functools
import subprocess
import sys

from .target import Target

#: The child: LLVM's tables for ``argv[1]`` on stderr, then code for ``argv[2:4]``; on
#: x86, it prints the widest vector register LLVM uses for a 512-bit add.
_PROBE = r"""
import re, sys
import llvmlite.binding as llvm
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
triple, cpu, features, end = sys.argv[1:5]
target = llvm.Target.from_triple(triple)
target.create_target_machine(cpu="help")
sys.stderr.write("\n" + end + "\n")
sys.stderr.flush()
if cpu:
    machine = target.create_target_machine(cpu=cpu, features=features)
    machine.emit_assembly(llvm.parse_assembly("define i64 @f(i64 %a) { ret i64 %a }"))
    if re.match(r"(x86_64|i.86)-", triple):
        asm = machine.emit_assembly(llvm.parse_assembly(
            'define void @v(ptr %p) "min-legal-vector-width"="512" {\n'
            "  %a = load <16 x float>, ptr %p, align 4\n"
            "  %b = fadd <16 x float> %a, %a\n"
            "  store <16 x float> %b, ptr %p, align 4\n"
            "  ret void\n}\n"))
        print(next(r for r in ("zmm", "ymm", "xmm") if "%" + r in asm))
"""
_END_OF_TABLES = "--- end of LLVM's tables ---"
_REGISTER_BITS = {"zmm": 512, "ymm": 256, "xmm": 128}


class _Probe:
    """What the child reported: CPU and feature names, a fatal error, vector register bits."""

    def __init__(self, cpus: tuple[str, ...], features: tuple[str, ...], fatal: str,
                 vector_bits: int | None):
        self.cpus, self.features, self.fatal = cpus, features, fatal
        self.vector_bits = vector_bits


@functools.cache
def _probe(triple: str, cpu: str = "", features: str = "") -> _Probe:
    out = subprocess.run([sys.executable, "-c", _PROBE, triple, cpu, features, _END_OF_TABLES],
                         capture_output=True, text=True, timeout=120)
    tables, found, after = out.stderr.partition(_END_OF_TABLES)
    if not found:
        raise RuntimeError(
            f"could not read LLVM's CPU and feature tables for {triple!r} (exit code "
            f"{out.returncode}): {out.stderr.strip()[-300:]}"
        )
    cpus_text, _, features_text = tables.partition("Available features for this target:")
    fatal = "" if out.returncode == 0 else _last_error(after, out.returncode)
    bits = None if fatal else _REGISTER_BITS.get(out.stdout.strip())
    return _Probe(_names(cpus_text), _names(features_text), fatal, bits)


def _names(table: str) -> tuple[str, ...]:
    """The names in LLVM's ``  name  - description`` lines."""
    rows = (line.split() for line in table.splitlines() if line.startswith("  "))
    return tuple(row[0] for row in rows if len(row) >= 2 and row[1] == "-")


def _last_error(stderr: str, code: int) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "ERROR" in ln]
    return (errors or lines or [f"exit code {code}"])[-1]


def known_cpus(triple: str) -> tuple[str, ...]:
    """The CPU names LLVM knows for ``triple``."""
    return _probe(triple).cpus


def known_features(triple: str) -> tuple[str, ...]:
    """The feature names (without ``+``/``-``) LLVM knows for ``triple``."""
    return _probe(triple).features


def vector_width_bits(target: Target) -> int | None:
    """The widest vector register LLVM uses for ``target``'s CPU and features (x86 only)."""
    check(target)
    return _probe(target.triple, target.mcpu, target.features).vector_bits


def check(target: Target) -> None:
    """Raise ValueError if LLVM would ignore or abort on ``target``'s CPU or features."""
    cpu = target.options.get("mcpu", "native")
    if cpu == "native" and not target.mattr:
        return  # the host CPU and features, as LLVM reported them
    triple = target.triple
    probe = _probe(triple, target.mcpu, target.features)
    native = ", or -mcpu=native for this machine's CPU" if target.is_host else ""
    if cpu != "native" and cpu not in probe.cpus:
        raise ValueError(_unknown(target, "CPU", cpu, probe.cpus, "known_cpus") + native)
    for feature in target.mattr:
        if feature[1:] not in probe.features:
            raise ValueError(_unknown(target, "feature", feature[1:], probe.features,
                                      "known_features"))
    if probe.fatal:
        raise ValueError(
            f"target {str(target)!r}: LLVM cannot generate {triple} code for CPU "
            f"{target.mcpu!r} (it reports {probe.fatal!r}); choose a CPU that supports "
            f"{triple} ({_lister(triple, 'known_cpus')} lists the CPUs it knows){native}"
        )


def _unknown(target: Target, kind: str, name: str, known: tuple[str, ...], lister: str) -> str:
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return (f"target {str(target)!r}: LLVM knows no {kind} {name!r} for {target.triple}{hint}; "
            f"{_lister(target.triple, lister)} lists the {len(known)} it knows")


def _lister(triple: str, method: str) -> str:
    return f"codegen.Target('llvm -mtriple={triple}').{method}()"
