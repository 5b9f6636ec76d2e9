"""The recipes of docs/ecosystem.md, run from the page itself: short runs whose every action is legal.

Each recipe is the page's code block after `<!-- recipe: NAME -->`, executed as a module (its
`__main__` part, the long run, is skipped); the test calls its functions with small budgets. The
games keep `illegal_action="raise"`, and every action that reaches a game is also checked against
the acting seat's mask here, independently of the game's own check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from fowlplay.envs.core.env import CardGameEnv

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ecosystem.md"
#: A short Chicken (first to 10 points, at most 4 rounds: about 16 decisions under random play), so
#: that a few hundred decisions hold many whole games.
SHORT = {"target": 10, "max_rounds": 4}


def recipe(name: str) -> dict:
    """Execute the page's code block `name` as a module; its globals."""
    found = re.search(rf"<!-- recipe: {name} -->\n```python\n(.*?)\n```", PAGE.read_text(), re.DOTALL)
    assert found, f"docs/ecosystem.md has no code block after <!-- recipe: {name} -->"
    namespace = {"__name__": f"ecosystem_recipe_{name}"}
    exec(compile(found.group(1), f"{PAGE}:{name}", "exec"), namespace)
    return namespace


@dataclass
class ActionLog:
    """Every action stepped into any fowlplay game: whether it was legal, and how many games began."""

    legal: list[bool] = field(default_factory=list)
    resets: int = 0


@pytest.fixture
def actions(monkeypatch):
    """Record every action and reset of every fowlplay game while the test runs."""
    log = ActionLog()
    step, reset = CardGameEnv.step, CardGameEnv.reset

    def checked_step(self, action):
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            mask = self.observe(agent)["action_mask"]
            as_int = action.item() if isinstance(action, np.ndarray) else action
            log.legal.append(
                isinstance(as_int, (int, np.integer)) and 0 <= as_int < mask.size and mask[as_int] == 1
            )
        step(self, action)

    def counted_reset(self, *args, **kwargs):
        log.resets += 1
        reset(self, *args, **kwargs)

    monkeypatch.setattr(CardGameEnv, "step", checked_step)
    monkeypatch.setattr(CardGameEnv, "reset", counted_reset)
    return log


@pytest.fixture(autouse=True)
def one_torch_thread():
    """The machine's cores are shared: one torch thread, restored afterwards."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_sb3_maskable_ppo_recipe_takes_only_legal_actions(actions):
    pytest.importorskip("sb3_contrib")
    sb3 = recipe("sb3")
    model = sb3["train"]("fowlplay/chicken_v1", steps=256, n_steps=128, **SHORT)
    trained = len(actions.legal)
    assert trained >= 256 and all(actions.legal)
    assert actions.resets >= 5  # many whole games, not one long one
    score = sb3["play_against_random"](model, "fowlplay/chicken_v1", games=4, **SHORT)
    assert len(actions.legal) > trained and all(actions.legal)
    assert -1.0 <= score <= 1.0


@pytest.mark.slow  # 5-15 s, most of it importing Tianshou (numba, pandas, h5py)
def test_tianshou_recipe_takes_only_legal_actions(actions, monkeypatch):
    # Numba compiling Tianshou's replay-buffer functions would take 10-25 s of a 200-step run; as
    # plain Python they do the same. Numba reads the switch when Tianshou decorates them, at import.
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    numba = pytest.importorskip("numba")
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    pytest.importorskip("tianshou")
    tianshou = recipe("tianshou")
    _, stats = tianshou["train"]("fowlplay/chicken_v1", steps=200, n_envs=2, **SHORT)
    assert stats.train_step >= 200 and stats.train_episode >= 5
    assert len(actions.legal) >= 200 + 64 * 2 and all(actions.legal)
    # Three players: two masked random seats beside the learner.
    before = len(actions.legal)
    _, stats = tianshou["train"]("fowlplay/chicken_v1", steps=60, n_envs=1, num_players=3, **SHORT)
    assert stats.train_episode >= 1 and len(actions.legal) > before + 60 and all(actions.legal)


def test_the_action_log_catches_an_illegal_action(actions):
    # The log's own check, on a game that lets an illegal action through (forfeits instead of raising).
    from fowlplay import envs

    env = envs.make("chicken_v1", illegal_action="lose")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1]))  # the highest bid
    masked_out = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    env.step(masked_out)
    assert actions.legal == [True, False] and actions.resets == 1
