"""`trainer: psro`: MaskablePPO best responses to a meta-strategy over a population.

The population is random, the baseline and the learner's snapshots in the pool's window. Whenever
a snapshot is added, the payoff of each new pair of members is estimated by `meta_games` games
(`ladder.head_to_head`, on the same deals for every pair), and the meta-solver turns the payoff
matrix into a mixture: `nash`, the maximin strategy of the empirical meta-game (a Nash equilibrium
of this symmetric zero-sum game for two players; for more, it treats "one seat against a table of
j" as a two-player game), or `uniform` (fictitious self-play). The pool then draws `latest` with
its configured share and every other opponent from the mixture. MaskablePPO, unchanged, is the
best-response oracle (Lanctot et al., 2017, with the learner's training kept running across
iterations instead of restarted).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import numpy as np
from fowlplay.training.ladder import AgentFactory, head_to_head, ladder_factories

#: Seed of the first deal of every payoff estimate (the run's seed is added).
META_SEED = 2_000_003


def nash_mixture(payoff: np.ndarray) -> np.ndarray:
    """The row player's maximin mixed strategy of a zero-sum matrix game (`payoff[i, j]`: row i's
    payoff against column j), by linear programming."""
    try:
        from scipy.optimize import linprog
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("trainer psro needs scipy: pip install 'fowlplay[train]'") from exc

    payoff = np.asarray(payoff, dtype=np.float64)
    n, m = payoff.shape
    # Variables x_1..x_n (the mixture) and v (its guaranteed payoff): maximise v subject to
    # sum_i x_i payoff[i, j] >= v for every column j, sum_i x_i = 1, x >= 0.
    cost = np.zeros(n + 1)
    cost[-1] = -1.0
    a_ub = np.hstack([-payoff.T, np.ones((m, 1))])
    a_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    result = linprog(
        cost, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=[1.0], bounds=[(0, None)] * n + [(None, None)]
    )
    if not result.success:  # pragma: no cover - a bounded feasible LP always solves
        raise RuntimeError(f"meta-solver LP failed: {result.message}")
    mixture = np.clip(result.x[:n], 0.0, None)
    return mixture / mixture.sum()


class MetaGame:
    """The population, its payoff matrix and the opponent weights its meta-strategy gives."""

    def __init__(
        self,
        aec,
        network: dict,
        games: int,
        solver: str,
        window: int,
        latest_share: float,
        seed: int,
        log: Path | None = None,
    ) -> None:
        self.aec = aec
        self.network = network
        self.games = games
        self.solver = solver
        self.window = window
        self.latest_share = latest_share
        self.seed = META_SEED + seed
        self.log = log
        self.fixed = ladder_factories(aec)
        self.snapshots: OrderedDict[str, AgentFactory] = OrderedDict()
        self.payoff: dict[tuple[str, str], float] = {}

    def members(self) -> list[str]:
        """Names of the population: random, baseline, then the snapshots oldest first."""
        return [*self.fixed, *self.snapshots]

    def _factory(self, name: str) -> AgentFactory:
        return self.fixed.get(name) or self.snapshots[name]

    def add(self, name: str, state: dict[str, np.ndarray], timesteps: int = 0) -> None:
        """Add a snapshot (the oldest leaves beyond the window) and estimate its new payoffs."""
        from fowlplay.training.agent import PolicyAgent
        from fowlplay.training.policy import build_policy, load_policy_state

        agent = self.aec.possible_agents[0]
        policy = build_policy(
            self.aec.observation_space(agent)["observation"], self.aec.action_space(agent), **self.network
        )
        load_policy_state(policy, state)
        self.snapshots[name] = lambda seed: PolicyAgent(policy, seed=seed)
        while len(self.snapshots) > self.window:
            self.snapshots.popitem(last=False)
        self.estimate()
        self._write_log(timesteps)

    def estimate(self) -> None:
        """Play the games of every pair of members whose payoff is not known yet."""
        two_players = len(self.aec.possible_agents) == 2
        for a in self.members():
            for b in self.members():
                if a == b or (a, b) in self.payoff:
                    continue
                score = head_to_head(self.aec, self._factory(a), self._factory(b), self.games, self.seed)
                self.payoff[(a, b)] = score
                if two_players:  # one game's two outcomes sum to 1
                    self.payoff[(b, a)] = 1.0 - score

    def matrix(self) -> np.ndarray:
        """payoff[i, j]: member i's score against member j (0.5 on the diagonal)."""
        names = self.members()
        return np.array([[0.5 if a == b else self.payoff[(a, b)] for b in names] for a in names])

    def mixture(self) -> dict[str, float]:
        """The meta-strategy: each member's probability."""
        names = self.members()
        if self.solver == "uniform":
            return {name: 1.0 / len(names) for name in names}
        return dict(zip(names, (float(p) for p in nash_mixture(self.matrix() - 0.5))))

    def weights(self) -> tuple[dict[str, float], dict[str, float]]:
        """(kind weights, per-snapshot weights) for `OpponentPool.set_weights`."""
        mixture = self.mixture()
        rest = 1.0 - self.latest_share
        kinds = {
            "random": rest * mixture["random"],
            "baseline": rest * mixture["baseline"],
            "latest": self.latest_share,
            "snapshot": rest * sum(mixture[name] for name in self.snapshots),
        }
        return kinds, {name: mixture[name] for name in self.snapshots}

    def _write_log(self, timesteps: int) -> None:
        if self.log is None:
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "timesteps": timesteps,
            "members": self.members(),
            "payoff": self.matrix().round(4).tolist(),
            "mixture": {name: round(p, 4) for name, p in self.mixture().items()},
        }
        with open(self.log, "a") as handle:
            handle.write(json.dumps(record) + "\n")
