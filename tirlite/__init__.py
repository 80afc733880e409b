"""tirlite's tools: the ``tirlite`` command line and the differential fuzzer.

The compiler itself lives in the packages ``tir`` (the IR), ``transform``
(passes) and ``codegen`` (LLVM and the interpreter); this package holds what
a user runs from the shell on top of them, and the version.
"""

__version__ = "0.1.0"
