"""The schedule primitives, each a pure function on ``PrimFunc``.

Every primitive takes the current function first and returns the new one
(or ``(new_function, result)``); it raises ``ScheduleError`` naming the block
or loop and the rule broken, and never returns a half-rewritten function.
Blocks are named by ``name_hint``; loops by their loop ``Var``.
"""
