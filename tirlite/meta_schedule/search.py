"""The search: evolutionary, guided by a cost model, over the rules' decisions.

A candidate is one run of the rules (``space.apply_rules``) with a list of
decisions. Each batch the search:

1. proposes a population: the default schedule (first batch only: the search
   starts from what ``apply_default_schedule`` gives), fresh random samples,
   and mutations of the fastest measured candidates (one decision re-drawn;
   the rules re-run, so later decisions follow the changed one);
2. drops what was measured or proposed before (same decisions);
3. keeps the candidates the cost model scores best, plus a share drawn at
   random (epsilon-greedy, so a wrong model cannot starve the search).

Every random draw comes from one ``random.Random(seed)``; with the same
measurements, the same seed gives the same candidates in the same order.
"""

from __future__ import annotations

import random
from typing import Iterable

import attrs
import numpy as np

from tir.function import IRModule
from tir.schedule import Schedule, ScheduleError

from .cost_model import CostModel
from .features import candidate_features
from .sampler import Sampler
from .space import apply_rules
from .target_info import TargetInfo


@attrs.define
class Candidate:
    """One point of the space: its decisions and the schedule they give."""

    decisions: tuple[int, ...]
    sizes: tuple[int, ...]
    sch: Schedule
    features: np.ndarray


class SearchSpace:
    """Runs the rules on ``mod`` for given decisions."""

    def __init__(self, mod: IRModule, info: TargetInfo):
        self.mod, self.info = mod, info

    def generate(self, mode: str, seed: int | None = None, forced: Iterable[int] = ()
                 ) -> Candidate | None:
        """The candidate of these decisions (None if a rule's primitive refused)."""
        sch = Schedule(self.mod)
        sampler = Sampler(mode, seed=seed, forced=list(forced))
        try:
            apply_rules(sch, self.info, sampler)
        except ScheduleError:
            return None
        feats = candidate_features(sch.func, self.info, sampler.decisions, sampler.sizes)
        return Candidate(tuple(sampler.decisions), tuple(sampler.sizes), sch, feats)


class EvolutionarySearch:
    """Proposes batches of candidates to measure (see the module docstring)."""

    def __init__(self, space: SearchSpace, model: CostModel, seed: int = 0,
                 population: int = 48, top_parents: int = 8, eps_greedy: float = 0.25):
        self.space, self.model = space, model
        self.rng = random.Random(seed)
        self.population, self.top_parents, self.eps = population, top_parents, eps_greedy
        self.seen: set[tuple[int, ...]] = set()
        self.measured: dict[tuple[int, ...], tuple[Candidate, float]] = {}
        self.started = False
        self.exhausted = False

    def mark_seen(self, decisions: tuple[int, ...]) -> None:
        """A candidate measured before (a resumed run): never proposed again."""
        self.seen.add(tuple(decisions))

    def notify(self, cand: Candidate, secs: float | None) -> None:
        """A measured result (None: it failed); valid ones train the model and breed."""
        if secs is not None:
            self.measured[cand.decisions] = (cand, secs)
            self.model.update([cand.features], [secs])

    def next_batch(self, size: int) -> list[Candidate]:
        """Up to ``size`` new candidates (fewer when the space is used up)."""
        pool = self._propose(min(self.population, max(4 * size, 16)))
        if not pool:
            self.exhausted = True
            return []
        chosen = self._select(pool, size)
        for c in chosen:
            self.seen.add(c.decisions)
        return chosen

    def _propose(self, population: int) -> list[Candidate]:
        pool: dict[tuple[int, ...], Candidate] = {}

        def add(c: Candidate | None) -> None:
            if c is not None and c.decisions not in self.seen and c.decisions not in pool:
                pool[c.decisions] = c

        if not self.started:
            self.started = True
            add(self.space.generate("default"))
        parents = sorted(self.measured.values(), key=lambda cs: cs[1])[:self.top_parents]
        attempts = 0
        while len(pool) < population and attempts < 4 * population:
            attempts += 1
            if parents and self.rng.random() < 0.6:
                add(self._mutate(self.rng.choice(parents)[0]))
            else:
                add(self.space.generate("random", seed=self.rng.getrandbits(32)))
        return list(pool.values())

    def _mutate(self, parent: Candidate) -> Candidate | None:
        movable = [k for k, s in enumerate(parent.sizes) if s > 1]
        if not movable:
            return None
        k = self.rng.choice(movable)
        choices = [v for v in range(parent.sizes[k]) if v != parent.decisions[k]]
        forced = list(parent.decisions)
        forced[k] = self.rng.choice(choices)
        return self.space.generate("random", seed=self.rng.getrandbits(32), forced=forced)

    def _select(self, pool: list[Candidate], size: int) -> list[Candidate]:
        # The default schedule (first in the first pool) is always measured first.
        first = [pool[0]] if not self.measured and not self.seen else []
        rest = pool[len(first):]
        scores = self.model.predict([c.features for c in rest]) if rest else np.zeros(0)
        order = sorted(range(len(rest)), key=lambda k: (-scores[k], k))
        n_random = int(round(self.eps * (size - len(first))))
        greedy = [rest[k] for k in order[:max(0, size - len(first) - n_random)]]
        left = [rest[k] for k in order[len(greedy):]]
        self.rng.shuffle(left)
        return (first + greedy + left[:n_random])[:size]
