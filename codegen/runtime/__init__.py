"""What runs a built module: loading, the checked call path, the cache, the thread pool.

- ``module``: ``Module`` (JIT with MCJIT, export to .o/.so, load) and ``PackedFunc``;
- ``args``: argument checks and binding in Python (``ArgBinder``), DLPack in ``dlpack``;
- ``fastcall``: the same checks compiled, the native call path;
- ``parallel`` (+ ``pool_ir``, the pool written in LLVM IR): the thread pool of
  parallel loops;
- ``disk_cache``, ``cached_module``, ``metadata``: object code kept across processes.

It talks to the emitted code only through ``codegen.abi`` and to LLVM through
``codegen.machine``; nothing here imports the emitter (``codegen.llvm``).
"""
