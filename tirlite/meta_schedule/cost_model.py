"""Cost models: rank candidates before measuring them (TVM's ``ms.cost_model`` names).

- ``XGBModel``: gradient-boosted trees (XGBoost, the ``xgboost-cpu`` package
  of ``pip install 'tirlite[tune]'``), trained on the measured candidates'
  features (``features.candidate_features``) against their throughput
  relative to the best so far, as MetaSchedule's XGB model is. Trees fit the
  sharp edges of this space (a tile one register too big spills and halves
  the speed) that a linear model smooths over.
- ``RidgeModel``: a regularized quadratic fit in NumPy, the fallback when
  XGBoost is not installed (``default_cost_model`` says which it picked).
- ``RandomModel``: scores at random: a search that measures in the order it
  samples.

All predict a score per candidate, higher is better; before any measurement
every model scores 0 and the search takes its candidates in sampled order.
"""

from __future__ import annotations

import numpy as np


class CostModel:
    """Learns from measured candidates; predicts scores for new ones (higher is faster)."""

    def update(self, features: list[np.ndarray], run_secs: list[float]) -> None:
        """Learn from measured candidates (``run_secs`` their median times)."""
        raise NotImplementedError

    def predict(self, features: list[np.ndarray]) -> np.ndarray:
        """A score for each candidate."""
        raise NotImplementedError


def _matrix(features: list[np.ndarray]) -> np.ndarray:
    width = max(len(f) for f in features)
    out = np.zeros((len(features), width))
    for k, f in enumerate(features):
        out[k, :len(f)] = f
    return out


def _targets(run_secs: list[float]) -> np.ndarray:
    secs = np.asarray(run_secs, dtype=np.float64)
    return secs.min() / secs  # throughput relative to the best: 1.0 is the best seen


class RandomModel(CostModel):
    """Random scores (from ``seed``): no learning."""

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def update(self, features: list[np.ndarray], run_secs: list[float]) -> None:
        pass

    def predict(self, features: list[np.ndarray]) -> np.ndarray:
        return self.rng.random(len(features))


class _Trained(CostModel):
    def __init__(self):
        self.x: list[np.ndarray] = []
        self.y: list[float] = []
        self.width = 0

    def update(self, features: list[np.ndarray], run_secs: list[float]) -> None:
        self.x.extend(features)
        self.y.extend(run_secs)
        self.width = max(len(f) for f in self.x) if self.x else 0
        if len(self.x) >= 2:
            self._fit(self._pad(_matrix(self.x)), _targets(self.y))

    def _pad(self, m: np.ndarray) -> np.ndarray:
        if m.shape[1] < self.width:
            m = np.hstack([m, np.zeros((m.shape[0], self.width - m.shape[1]))])
        return m[:, :self.width]

    def predict(self, features: list[np.ndarray]) -> np.ndarray:
        if len(self.x) < 2 or not features:
            return np.zeros(len(features))
        return self._predict(self._pad(_matrix(features)))

    def _fit(self, x: np.ndarray, y: np.ndarray) -> None:
        raise NotImplementedError

    def _predict(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class XGBModel(_Trained):
    """Gradient-boosted trees (XGBoost) on the candidates' features."""

    def __init__(self, seed: int = 0, num_rounds: int = 60, max_depth: int = 5):
        super().__init__()
        try:
            import xgboost
        except ImportError as err:
            raise ImportError("XGBModel needs XGBoost: pip install 'tirlite[tune]' "
                              "(or use RidgeModel)") from err
        self._xgb = xgboost
        self.num_rounds = num_rounds
        self.params = {"max_depth": max_depth, "eta": 0.2, "seed": seed, "nthread": 1,
                       "verbosity": 0, "objective": "reg:squarederror"}
        self.booster = None

    def _fit(self, x: np.ndarray, y: np.ndarray) -> None:
        data = self._xgb.DMatrix(x, label=y)
        self.booster = self._xgb.train(self.params, data, num_boost_round=self.num_rounds)

    def _predict(self, x: np.ndarray) -> np.ndarray:
        return self.booster.predict(self._xgb.DMatrix(x)).astype(np.float64)


class RidgeModel(_Trained):
    """Ridge regression on the features and their squares (NumPy only)."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha
        self.coef: np.ndarray | None = None

    @staticmethod
    def _design(x: np.ndarray) -> np.ndarray:
        return np.hstack([np.ones((x.shape[0], 1)), x, x * x])

    def _fit(self, x: np.ndarray, y: np.ndarray) -> None:
        d = self._design(x)
        self.coef = np.linalg.solve(d.T @ d + self.alpha * np.eye(d.shape[1]), d.T @ y)

    def _predict(self, x: np.ndarray) -> np.ndarray:
        return self._design(x) @ self.coef


def default_cost_model(seed: int = 0) -> CostModel:
    """``XGBModel`` when XGBoost is installed, else ``RidgeModel``."""
    try:
        return XGBModel(seed=seed)
    except ImportError:
        return RidgeModel()
