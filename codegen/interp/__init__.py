"""Parts of the reference interpreter: runtime values, intrinsics, memory, the machine.

The public entry point is ``codegen.interpreter.build_interpreter``.
"""
