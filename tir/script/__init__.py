"""TVMScript for tirlite: Python source into TIR, the inverse of the printer.

>>> from tir.script import tir as T
>>> @T.prim_func
... def add_one(A: T.Buffer((16,), "float32")):
...     for i in T.vectorized(16):
...         A[i] = A[i] + T.float32(1)

``from tir.script import tir as T`` and ``from tir.script import ir as I`` are
TVM's ``tvm.script.tir`` / ``tvm.script.ir``; ``from_source(text)`` reads what
``print(func)`` writes. Errors are ``ParseError`` (a ``ValueError``) with the
file, line, column and the source line under a caret.
"""

from . import builtins as tir
from . import ir
from .entry import from_source
from .errors import ParseError

__all__ = ["ParseError", "from_source", "ir", "tir"]
