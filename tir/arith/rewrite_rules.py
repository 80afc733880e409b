"""The rewrite rule table: which rules each node kind gets, by dtype.

The rules live one block per node kind, one rule per line
(``Rule(before, after, when)``): ``rules_add_sub_mul``, ``rules_div_mod``,
``rules_min_max``, ``rules_compare``, ``rules_logic``, ``rules_intrin``; pattern variables and
shared conditions in ``rule_helpers``. ``RULES`` serve 32/64-bit signed integers, which index
arithmetic uses and which TIR assumes never overflow; ``RING_RULES``
(identities that survive wraparound) serve the other integers; ``FLOAT_RULES``
(exact identities) serve floats; ``ANY_DTYPE_KINDS`` run on every dtype and guard themselves (see
``RewriteSimplifier._table``). Constants are moved to the right of
commutative operators first, so rules need one order.
"""


from __future__ import annotations

from ..expr import (
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
from .rules_add_sub_mul import ADD, ADD_RING, FLOAT_ADD, MUL, MUL_RING, RAMP_RULES, SUB, SUB_RING
from .rules_compare import EQ_RULES, GE_RULES, GT_RULES, LE_RULES, LT_RULES, NE_RULES
from .rules_div_mod import FLOORDIV, FLOORMOD, TRUNCDIV, TRUNCMOD
from .rules_intrin import INTRIN_RULES
from .rules_logic import AND_RULES, CALL_RULES, NOT_RULES, OR_RULES, SELECT_RULES
from .rules_min_max import MAX, MAX_RING, MIN, MIN_RING

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
}

#: The rules for floats: exact identities only.
FLOAT_RULES = {Add: FLOAT_ADD}

#: Node kinds whose rules run on any dtype (each rule that needs integers checks it).
ANY_DTYPE_KINDS = frozenset({Not, And, Or, Select, GT, GE, Call})
