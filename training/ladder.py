"""Games among agents during training, and the best checkpoint they pick.

Every `eval_every` decisions the learner plays `eval_games` games against each cheap rung of the
ladder (random and the game's baseline). Its score against one opponent is the mean outcome (1 a
win, 0.5 a tie for first, 0 a loss) with the learner in one seat and the opponent in every other,
the seats rotated over each deal; the deals are the same fixed seeds in every run (`EVAL_SEED`), so
runs, seeds and trainers are scored on the same games. A game cut off by its cap counts as a loss
for the learner here (fowlplay-eval calls it a draw): a learner that stalls every game to the cap
would otherwise score 0.5 and be kept as the best. The checkpoint with the highest mean of
those scores is kept as `<run>/best`, and every evaluation is a row of `<run>/evaluation.csv`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent, RandomAgent
from fowlplay.envs.runtime.files import atomic_write

#: Seed of the first deal of every evaluation: the same deals for every run.
EVAL_SEED = 1_000_003
#: The cheap rungs of the ladder the learner is scored against, in the CSV's column order.
LADDER = ("random", "baseline")
#: Columns of evaluation.csv.
CSV_COLUMNS = ("timesteps", *(f"score_{name}" for name in LADDER), "score", "games", "best")
#: Returns closer than this are a tie.
_TIE = 1e-9

AgentFactory = Callable[[int], Agent]


def play_game(aec, agents: list[Agent], seed: int) -> tuple[list[float], bool]:
    """Play one game of the AEC env with one agent per seat; every seat's return, and whether the
    game was cut off by its cap."""
    aec.reset(seed=seed)
    index = {name: i for i, name in enumerate(aec.possible_agents)}
    returns = [0.0] * len(agents)
    while True:
        name = aec.agent_selection
        if aec.terminations[name] or aec.truncations[name]:
            return returns, bool(aec.truncations[name]) and not aec.terminations[name]
        obs = aec.observe(name)
        aec.step(int(agents[index[name]].act(obs["observation"], obs["action_mask"])))
        for other, reward in aec.rewards.items():
            returns[index[other]] += reward


def outcome(returns: list[float], seat: int) -> float:
    """1 if `seat` has the highest return alone, 0.5 if it ties for it, else 0."""
    best_other = max(r for i, r in enumerate(returns) if i != seat)
    if abs(returns[seat] - best_other) <= _TIE:
        return 0.5
    return 1.0 if returns[seat] > best_other else 0.0


def head_to_head(
    aec, make_a: AgentFactory, make_b: AgentFactory, games: int, seed: int, cut_loses: bool = False
) -> float:
    """Mean outcome of agent a with b in every other seat; game k plays deal seed + k // seats with
    a in seat k % seats. Agents are built per game with seeds derived from the game's. With
    `cut_loses`, a game cut off by its cap scores 0 for a."""
    seats = len(aec.possible_agents)
    total = 0.0
    for k in range(games):
        deal, seat = divmod(k, seats)
        agents = [make_b(seed + 7 * k + i) for i in range(seats)]
        agents[seat] = make_a(seed + 7 * k + seats)
        returns, cut = play_game(aec, agents, seed + deal)
        total += 0.0 if cut and cut_loses else outcome(returns, seat)
    return total / games


def ladder_factories(aec) -> dict[str, AgentFactory]:
    """Factories of the cheap ladder agents (random, baseline) of the AEC env's game."""
    baseline = envs.env_module(aec.metadata["name"]).BaselineAgent
    options = aec.unwrapped.options
    return {"random": RandomAgent, "baseline": lambda seed: baseline(options, seed)}


def ladder_scores(aec, policy, games: int) -> dict[str, float]:
    """The policy's score against each ladder agent over `games` games, on the fixed deals."""
    from fowlplay.training.agent import PolicyAgent

    learner = lambda seed: PolicyAgent(policy, seed=seed)  # noqa: E731
    return {
        name: head_to_head(aec, learner, make, games, EVAL_SEED, cut_loses=True)
        for name, make in ladder_factories(aec).items()
    }


class BestCheckpoint:
    """Keeps the best evaluation of a run and writes every one to `<run>/evaluation.csv`."""

    def __init__(self, run_dir: Path, best: dict | None = None) -> None:
        self.path = run_dir / "evaluation.csv"
        #: The best evaluation so far: timesteps, scores, score; None before the first.
        self.best = best

    @classmethod
    def of_run(cls, run_dir: Path) -> BestCheckpoint:
        """The tracker of a run directory, remembering its best checkpoint if it has one (--resume)."""
        best = None
        path = run_dir / "best.json"
        if path.exists():
            from fowlplay.envs.runtime.untrusted import check_number, read_json

            try:
                best = read_json(path, limit=4 * 2**20)["evaluation"]
                check_number(best["score"], "evaluation.score", -1e9, 1e9)
            except (OSError, ValueError, KeyError, TypeError):
                best = None  # an unreadable best.json is replaced by the next evaluation
        return cls(run_dir, best)

    def record(self, timesteps: int, scores: dict[str, float], games: int) -> bool:
        """Add one evaluation (a CSV row); True when it beats the best so far (ties keep the older)."""
        score = float(np.mean([scores[name] for name in LADDER]))
        better = self.best is None or score > self.best["score"]
        row = {"timesteps": timesteps, **{f"score_{n}": f"{scores[n]:.4f}" for n in LADDER}}
        row.update({"score": f"{score:.4f}", "games": games, "best": int(better)})
        lines = []
        if self.path.exists():
            from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

            try:
                old = read_bytes(self.path, 256 * 2**20).decode("utf-8", errors="replace")
                lines = old.splitlines(keepends=True)
            except UntrustedFileError:  # a link to a device, a pipe: the file is written anew
                lines = []
        if not lines:
            lines = [",".join(CSV_COLUMNS) + "\n"]
        lines.append(",".join(str(row[column]) for column in CSV_COLUMNS) + "\n")
        text = "".join(lines).encode()
        atomic_write(self.path, lambda handle: handle.write(text))
        if better:
            self.best = {"timesteps": int(timesteps), "scores": dict(scores), "score": score, "games": games}
        return better
