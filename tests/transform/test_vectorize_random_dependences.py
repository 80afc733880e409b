"""Random programs with dependences in loops marked vectorize (issue 8).

Each program is built three ways: ``codegen.build`` (vectorized), the same under
``tir.disable_vectorize`` (serial, as written) and ``target="interp"`` under
``tir.disable_vectorize`` (the reference interpreter on the serial program). Floating
point is strict, so the three must agree bit for bit (NaN equals NaN; -0.0 is not 0.0):
a loop whose iterations depend on each other must stay serial or be vectorized in a way
that keeps the serial result. The generator is random_dependence.py; run more programs with
``python tests/transform/random_dependence.py --count 10000``.
The comparison itself is differential.py.
"""

import numpy as np
import pytest
from differential import check_many
from random_dependence import check_seeds, generate, report

import tir

SEEDS = range(150)
INTERP_EVERY = 3  # the interpreter runs on every third program (it builds the program again)


@pytest.fixture(scope="module")
def outcomes():
    return check_seeds(SEEDS, INTERP_EVERY)


def _failures(outcomes, kind):
    bad = [o for o in outcomes if o.kind == kind]
    return bad, report(bad, 0.0, show=3)


def test_vectorized_build_computes_what_the_serial_build_computes(outcomes):
    bad, text = _failures(outcomes, "mismatch")
    assert not bad, f"{len(bad)} of {len(outcomes)} programs differ:\n{text}"


def test_serial_build_computes_what_the_interpreter_computes(outcomes):
    bad, text = _failures(outcomes, "interp")
    assert not bad, f"{len(bad)} programs differ:\n{text}"


def test_programs_stay_in_bounds_and_raise_nothing(outcomes):
    raised = [(o.seed, o.error) for o in outcomes if o.error]
    assert not raised, f"the generator made programs that raise: {raised[:5]}"


def test_programs_vectorize_something_and_write_memory(outcomes):
    # Keeps the generator honest: agreement proves little unless many programs reach vector
    # code (a Ramp in the IR) and change their arguments. Clean programs (written only at
    # element i) are legal to vectorize; most programs with dependences must stay serial.
    clean = [o for o in outcomes if generate(o.seed).clean]
    share = sum(o.vectorized for o in outcomes) / len(outcomes)
    clean_share = sum(o.vectorized for o in clean) / len(clean)
    changed = sum(o.changed for o in outcomes) / len(outcomes)
    assert share > 0.25, f"only {share:.0%} of the programs vectorize something"
    assert clean_share > 0.6, f"only {clean_share:.0%} of the clean programs vectorize something"
    assert changed > 0.75, f"only {changed:.0%} of the programs change their arguments"


def test_generator_is_deterministic():
    a, b = generate(7), generate(7)
    assert tir.structural_equal(a.func, b.func)
    for x, y in zip(a.make_inputs(3), b.make_inputs(3)):
        assert np.array_equal(x, y, equal_nan=True)
    assert not all(np.array_equal(x, y, equal_nan=True)
                   for x, y in zip(a.make_inputs(3), a.make_inputs(4)))


@pytest.mark.slow
@pytest.mark.parametrize("first", range(1000, 1200, 100))
def test_many_more_programs(first):
    """200 more programs, in two items so that pytest-xdist spreads them over the cores
    (500 until CI's time budget asked for less; ``tirlite fuzz`` runs any number)."""
    outcomes = check_many(check_seeds, range(first, first + 100), 2, INTERP_EVERY)
    bad = [o for o in outcomes if o.kind != "agree"]
    assert not bad, f"{len(bad)} of {len(outcomes)} programs fail:\n{report(bad, 0.0)}"
