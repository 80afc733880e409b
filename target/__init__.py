"""What a CPU offers, for the passes that shape code for it and the backend that emits it.

The layer below ``transform`` and ``codegen``; both import it, it imports
neither (only llvmlite, lazily, to ask LLVM about a CPU):

- ``target``: ``Target``, a parsed target string (``"llvm -mcpu=znver3"``) and the facts
  resolved from it: triple, CPU, features, vector width, vector registers, FMA, SVE;
  ``has_sve`` for a target string;
- ``scope``: the stack ``with Target(...):`` pushes, read by passes (``current_target``);
- ``host_override``: ``TIRLITE_HOST_TARGET``, this machine seen as another CPU;
- ``subtarget``: ``-mcpu``/``-mattr`` checked in a child process before LLVM sees them;
- ``cpu_features``: which vector features a CPU name brings, read off LLVM's code;
- ``caches``: this machine's data-cache sizes.

``codegen.Target`` is this ``Target`` (TVM's ``tvm.target.Target``).
"""

from .scope import current_target, pop_target, push_target
from .target import Target, has_sve, host_triple

__all__ = ["Target", "current_target", "has_sve", "host_triple", "pop_target", "push_target"]
