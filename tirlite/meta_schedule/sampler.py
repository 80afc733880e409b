"""Where a schedule rule's choices come from: the target-derived default, a seeded RNG, or a record.

Every choice a rule makes (a register tile, an unroll depth, whether to pack)
goes through ``Sampler.choose``, which records it in the schedule's trace as a
``sample_categorical`` instruction with its decision. So the trace of any
schedule the rules produce replays exactly, and a search can change one
decision and run the rules again (the rules are deterministic given their
decisions: they read only the IR, the target and the sampler).

Modes:
- ``"default"``: the rule's own pick (``apply_default_schedule``);
- ``"random"``: uniform over the candidates, from ``seed``;
- ``forced``: a list of decisions (indices) used first, in order, as far as
  each is valid for the candidates at its step; then the mode applies. The
  search's mutations are forced lists.
"""

from __future__ import annotations

import random
from typing import Any, Sequence


class Sampler:
    """Makes and records the choices of one run of the rules."""

    def __init__(self, mode: str = "default", seed: int | None = None,
                 forced: Sequence[int] | None = None):
        if mode not in ("default", "random"):
            raise ValueError(f"Sampler: mode must be 'default' or 'random', got {mode!r}")
        self.mode = mode
        self.rng = random.Random(seed)
        self.forced = list(forced or ())
        self.decisions: list[int] = []
        self.sizes: list[int] = []  # how many candidates each decision chose among

    def choose(self, sch: Any, candidates: Sequence[Any], default: int) -> Any:
        """One of ``candidates`` (JSON scalars); ``default`` is the rule's pick (an index)."""
        step = len(self.decisions)
        if step < len(self.forced) and 0 <= self.forced[step] < len(candidates):
            index = self.forced[step]
        elif self.mode == "default":
            index = default
        else:
            index = self.rng.randrange(len(candidates))
        self.decisions.append(index)
        self.sizes.append(len(candidates))
        probs = [1.0 / len(candidates)] * len(candidates)
        return sch.sample_categorical(list(candidates), probs, decision=index)
