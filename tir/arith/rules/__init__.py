"""The rewrite rule table: which rules each node kind gets, by dtype.

The rules live one block per node kind, one rule per line
(``Rule(before, after, when)``), in TVM's order within each block:
``add_sub_mul``, ``div_mod`` (+ ``div_mod_vector``), ``min_max``,
``compare``, ``logic``, ``intrin``; pattern variables and shared conditions
in ``helpers``. ``RULES`` serve 32/64-bit signed integers, which index
arithmetic uses and which TIR assumes never overflow; ``RING_RULES``
(identities that survive wraparound) serve the other integers;
``BOOL_RULES`` (comparisons of identical operands) serve bool;
``FLOAT_RULES`` (exact identities) serve floats; ``ANY_DTYPE_KINDS`` run on
every dtype and guard themselves (see ``RewriteSimplifier._table``).
"""


from __future__ import annotations

from ...expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Call,
    Div,
    FloorDiv,
    FloorMod,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    Ramp,
    Select,
    Sub,
)
from .add_sub_mul import ADD, ADD_RING, FLOAT_ADD, MUL, MUL_RING, RAMP_RULES, SUB, SUB_RING
from .compare import (
    EQ_RING,
    EQ_RULES,
    EQ_SAME,
    GE_RULES,
    GT_RULES,
    LE_RING,
    LE_RULES,
    LE_SAME,
    LT_RING,
    LT_RULES,
    LT_SAME,
    NE_RING,
    NE_RULES,
    NE_SAME,
)
from .div_mod import FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD
from .intrin import INTRIN_RULES
from .logic import AND_RULES, CALL_RULES, NOT_RULES, OR_RULES, SELECT_RULES
from .min_max import MAX, MAX_RING, MIN, MIN_RING

RULES = {
    Add: ADD, Sub: SUB, Mul: MUL, FloorDiv: FLOORDIV,
    FloorMod: FLOORMOD, Div: TRUNCDIV, Mod: TRUNCMOD, Min: MIN, Max: MAX,
    LT: LT_RULES, LE: LE_RULES, GT: GT_RULES, GE: GE_RULES,
    EQ: EQ_RULES, NE: NE_RULES, Not: NOT_RULES, And: AND_RULES, Or: OR_RULES,
    Select: SELECT_RULES, Ramp: RAMP_RULES, Call: CALL_RULES + INTRIN_RULES,
}

#: The rules for integers that may wrap (8/16-bit, unsigned): ring identities only.
RING_RULES = {
    Add: ADD_RING, Sub: SUB_RING, Mul: MUL_RING, Ramp: RAMP_RULES, Min: MIN_RING, Max: MAX_RING,
    EQ: EQ_RING, NE: NE_RING, LT: LT_RING, LE: LE_RING,
}

#: The rules for comparing bools: identical operands (and constraints in scope) only.
BOOL_RULES = {EQ: EQ_SAME, NE: NE_SAME, LT: LT_SAME, LE: LE_SAME}

#: The rules for floats: exact identities only.
FLOAT_RULES = {Add: FLOAT_ADD}

#: Node kinds whose rules run on any dtype (each rule that needs integers checks it).
ANY_DTYPE_KINDS = frozenset({Not, And, Or, Select, GT, GE, Call})
