"""Optional rewrite-simplifier extensions (TVM's ``tvm.arith.Extension``).

An extension only lets the simplifier prove more; leaving one off never makes
a result wrong. Flags combine with ``|``:

>>> from tir import arith
>>> a = arith.Analyzer()
>>> a.enabled_extensions = arith.Extension.ComparisonOfProductAndSum

Honored: ``ComparisonOfProductAndSum`` (comparisons such as ``x * y < (x + y) * c``
decided from the bounds of ``x``, ``y`` and ``c``) and
``ApplyConstraintsToBooleanBranches`` (in ``a && b``, ``a`` is simplified
assuming ``b`` and the other way round; in ``a || b`` assuming the other is
false). The other names exist so that code written for TVM runs; they do not
change tirlite's results yet.
"""

from __future__ import annotations

import enum


class Extension(enum.Flag):
    """Extensions of the rewrite simplifier (values as TVM's ``RewriteSimplifier::Extension``)."""

    NoExtensions = 0
    TransitivelyProveInequalities = 1 << 0
    ConvertBooleanToAndOfOrs = 1 << 1
    ApplyConstraintsToBooleanBranches = 1 << 2
    ComparisonOfProductAndSum = 1 << 3


__all__ = ["Extension"]
