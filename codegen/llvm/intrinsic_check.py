"""Checking a call of a named LLVM intrinsic before LLVM sees it.

``T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", ...)``
names an LLVM intrinsic directly, as TVM's tensor intrinsics do. LLVM does not
answer a mistake there with an error a caller can catch: a declaration whose
types do not fit the intrinsic fails an assertion while the module is parsed,
and an intrinsic the target CPU lacks (``vpdpbusd`` on Zen 3) ends the process
in instruction selection ("LLVM ERROR: Cannot select" or "Do not know how to
split"). An unknown name (a typo) is worse: LLVM takes it for an external
function, and the program fails to link or calls nothing.

So, as ``target.subtarget`` does for CPU names, a short child process parses
and compiles one call of the intrinsic with the same types for the target; if
LLVM aborts, only the child dies, and the parent raises a ``ValueError`` that
names the intrinsic, its types and the target. Results are cached per process.
"""

from __future__ import annotations

import functools
import subprocess
import sys

from target.target import Target

#: The child: argv = triple, cpu, features, LLVM IR; prints "unknown" if the call is
#: compiled as a call of an external function (the name is no intrinsic LLVM knows).
_PROBE = r"""
import re, sys
import llvmlite.binding as llvm
llvm.initialize_all_targets()
llvm.initialize_all_asmprinters()
triple, cpu, features, text = sys.argv[1:5]
module = llvm.parse_assembly(text)
module.verify()
print("parsed", flush=True)
machine = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features)
asm = machine.emit_assembly(module)
print("unknown" if re.search(r"\bllvm\.", asm.split("\n.Lfunc_end")[0]) else "ok")
"""


def probe_ir(name: str, ret: str, args: tuple[str, ...]) -> str:
    """LLVM IR of one function that calls intrinsic ``name`` with arguments of ``args``."""
    params = ", ".join(f"{t} %a{i}" for i, t in enumerate(args))
    call = f"call {ret} @{name}({params})"
    if ret == "void":
        body = f"  {call}\n  ret void"
    else:
        body = f"  %r = {call}\n  ret {ret} %r"
    return (f'declare {ret} @{name}({", ".join(args)})\n'
            f'define {ret} @probe({params}) "min-legal-vector-width"="2048" {{\n{body}\n}}\n')


def check_intrinsic(name: str, ret: str, args: tuple[str, ...], target: Target) -> None:
    """Raise ``ValueError`` unless LLVM compiles a call of ``name`` (result type ``ret``,
    argument types ``args``, as LLVM spells them) for ``target``."""
    problem = _problem(name, ret, tuple(args), target.triple, target.mcpu, target.features)
    if problem:
        sig = f"{ret} {name}({', '.join(args)})"
        raise ValueError(f"codegen: the LLVM intrinsic call {sig} cannot be compiled for "
                         f"target {str(target)!r}: {problem}")


@functools.cache
def _problem(name: str, ret: str, args: tuple[str, ...], triple: str, cpu: str,
             features: str) -> str:
    out = subprocess.run([sys.executable, "-c", _PROBE, triple, cpu, features,
                          probe_ir(name, ret, args)],
                         capture_output=True, text=True, timeout=120)
    if out.returncode == 0:
        if out.stdout.split()[-1:] == ["ok"]:
            return ""
        return (f"LLVM knows no intrinsic {name!r} (check the name; LLVM's intrinsics are "
                f"listed in its include/llvm/IR/Intrinsics*.td)")
    lines = [ln.strip() for ln in out.stderr.splitlines() if ln.strip()]
    said = next((ln for ln in reversed(lines) if "ERROR" in ln or "Assertion" in ln
                 or "error" in ln.lower()), lines[-1] if lines else f"exit code {out.returncode}")
    if "parsed" not in out.stdout.split():
        return (f"the argument or result types do not match the intrinsic's declaration "
                f"(LLVM: {said[-200:]})")
    return f"the target's CPU and features cannot run it (LLVM: {said[-200:]})"
