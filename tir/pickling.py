"""Pickling IR: a ``PrimFunc`` or ``IRModule`` goes to another process (the tuner's builders).

Nodes are frozen ``attrs`` classes, which pickle as they are; what does not
is the read-only mapping their dict-valued fields hold
(``types.MappingProxyType``: annotations, attrs, ``buffer_map``). Registering
a reducer for it makes every node picklable. One ``pickle.dumps`` keeps
shared objects shared, so a variable bound once and used many times comes
back as one variable, and the result is ``structural_equal`` to the original.
"""

from __future__ import annotations

import copyreg
import types


def _mappingproxy(items: dict) -> types.MappingProxyType:
    return types.MappingProxyType(items)


def _reduce_mappingproxy(m: types.MappingProxyType) -> tuple:
    return _mappingproxy, (dict(m),)


copyreg.pickle(types.MappingProxyType, _reduce_mappingproxy)
