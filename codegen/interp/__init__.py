"""The reference interpreter backend: lowered TIR run on NumPy values, for differential tests.

``backend.build_interpreter`` makes a module callable like a compiled one (the same
argument checks); ``machine`` executes statements, ``values``, ``memory`` and
``intrinsics`` model vectors, buffers and calls as the compiled code computes them.
"""
