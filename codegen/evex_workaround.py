"""Working around an LLVM 22 miscompile on AVX-512 CPUs: ``vmovmskps`` of ``ymm16``-``ymm31``.

LLVM 22's X86CompressEVEX pass rewrites a sign-mask move

    vpmovd2m  %ymm16, %k0        (EVEX: any of ymm0-31)
    kmovd     %k0, %eax

into ``vmovmskps %ymm16, %eax``, a VEX instruction, which can only name
ymm0-15. The encoder drops the register's fifth bit, so the code reads ymm0:
wrong values, no error. Any AVX-512VL CPU can hit it (znver4, znver5,
skylake-avx512, x86-64-v4, ...), at every codegen opt level, once register
pressure puts the compared vector in ymm16-31. The SLP vectorizer makes such
code from scalar loops: tirlite's floormod sign fix (``srem``, then ``select
(r < 0), b, 0``) became a vector ``srem`` and compare whose lanes are moved to
scalars (shared/repro/07). Upstream: llvm/llvm-project issue 191304, fixed by
PR 191760 (after 22.1.0, the LLVM of llvmlite 0.50); a related bug in the same
rewrite, issue 198197 (a mask still read by ``kshiftr`` after the rewrite), is
not known to be hit by tirlite's code.

Reproducer: ``UPSTREAM_REPRODUCER`` below (LLVM 22.1.0, ``llc -O1
-mcpu=skylake-avx512`` or znver5 prints ``vmovmskps %ymm16, %eax``; the object
code reads ymm0).

The workaround keeps the optimized IR (and SLP's speed) and checks the
machine code instead: when the assembly has a VEX mask move of ymm16-31, the
module's code is generated again with ``-avx512vl``, which leaves 128/256-bit
operations to VEX instructions on ymm0-15 (512-bit code keeps AVX-512). Only
modules whose IR has vector compares (``x i1>``) are checked, only on x86
targets that may have AVX-512VL, only with LLVM 22. Remove this file once
llvmlite ships an LLVM with the fix.
"""

from __future__ import annotations

import re

import llvmlite.binding as llvm

from target.target import Target

#: Whether this process's LLVM has the bug (the rewrite appeared in LLVM 22).
AFFECTED = llvm.llvm_version_info[0] == 22

#: A VEX mask move (no EVEX form exists) naming xmm/ymm16-31: the miscompile's footprint.
_BAD_MASK_MOVE = re.compile(r"\bv(?:movmskps|movmskpd|pmovmskb)\s+%[xy]mm(?:1[6-9]|2\d|3[01])\b")


#: The miscompile in a dozen lines of LLVM IR, for an upstream report and the tests: the
#: clobbers keep ``%r`` out of ymm0-15, as register pressure does in real code.
UPSTREAM_REPRODUCER = """
define void @floormod6(ptr %out, ptr %in) {
  %x = load <8 x i32>, ptr %in, align 4
  %r = srem <8 x i32> %x, splat (i32 6)
  call void asm sideeffect "", "CLOBBERS"()
  %neg = icmp slt <8 x i32> %r, zeroinitializer
  %n0 = extractelement <8 x i1> %neg, i64 0
  %n1 = extractelement <8 x i1> %neg, i64 1
  %f0 = select i1 %n0, i32 6, i32 0
  %f1 = select i1 %n1, i32 6, i32 0
  store i32 %f0, ptr %out, align 4
  %p1 = getelementptr i32, ptr %out, i64 1
  store i32 %f1, ptr %p1, align 4
  ret void
}
""".replace("CLOBBERS", ",".join(f"~{{xmm{k}}}" for k in range(16)))


def has_bad_mask_move(asm: str) -> bool:
    """Whether x86 assembly has a VEX mask move from xmm/ymm16-31 (encoded as 0-15)."""
    return _BAD_MASK_MOVE.search(asm) is not None


def may_be_miscompiled(target: Target, llvm_ir: str) -> bool:
    """Whether code for ``llvm_ir`` on ``target`` needs the assembly check."""
    if not AFFECTED or target.arch != "x86_64" or "x i1>" not in llvm_ir:
        return False
    stated = None  # the last +/-avx512vl of the feature string
    for feature in target.features.split(","):
        if feature[1:] == "avx512vl":
            stated = feature.startswith("+")
    if stated is not None:
        return stated
    # The host's feature string lists every feature and "generic" has no AVX-512;
    # an explicit CPU's features are not known here, so its code is checked.
    return target.options.get("mcpu", "native") != "native"


def without_avx512vl(target: Target) -> Target:
    """``target`` with ``-avx512vl`` added to its ``-mattr``."""
    options = dict(target.options)
    options["mattr"] = ",".join([*target.mattr, "-avx512vl"])
    return Target(" ".join([target.kind] + [f"-{k}={v}" for k, v in options.items()]))
