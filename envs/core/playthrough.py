"""Golden playthroughs: a seeded game written out decision by decision, as OpenSpiel keeps them.

Each file records, at every decision, the acting agent, the kind of decision, its legal actions by
name, the acting agent's observation split into its named pieces, its text view and the action
taken (after the first `FULL_DECISIONS`, one line per decision: agent, decision, action); then
the rewards. A test regenerates every file and diffs, so an unintended change to the
rules or the encodings fails the suite; `make playthroughs` rewrites them after an intended one.

    python -m fowlplay.envs.core.playthrough --out tests/envs/playthroughs
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.testing import random_legal

#: The seed of every playthrough's deal and of its masked random actions.
SEED = 0
#: Pieces longer than this are written as their non-zero entries only.
DENSE_UP_TO = 16
#: Decisions written in full; later ones get one line each (agent and action), so a long random
#: game stays a readable file while every action and the final rewards are still checked.
FULL_DECISIONS = 150


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.4g}"


def _piece(values: np.ndarray) -> str:
    if values.size <= DENSE_UP_TO:
        return "[" + " ".join(_number(v) for v in values) + "]"
    nonzero = np.flatnonzero(values)
    entries = " ".join(f"{i}:{_number(values[i])}" for i in nonzero)
    return f"({values.size}, non-zero at) {{{entries}}}"


def playthrough(name: str, num_players: int, seed: int = SEED) -> str:
    """The text of one seeded masked-random game of `name` with `num_players` players."""
    env = envs.make(name, num_players=num_players)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    lines = [
        f"# {name}, {num_players} players: reset(seed={seed}), masked random actions from "
        f"numpy default_rng({seed})",
        "# regenerate: python -m fowlplay.envs.core.playthrough --out tests/envs/playthroughs",
    ]
    decision = 0
    final: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            final = final or dict(env._cumulative_rewards)
            env.step(None)
            continue
        decision += 1
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        action = random_legal(obs["action_mask"], rng)
        if decision > FULL_DECISIONS:
            if decision == FULL_DECISIONS + 1:
                lines.append("")
                lines.append(f"## decisions after {FULL_DECISIONS}: agent, decision, action")
            lines.append(f"{decision}: {agent} '{env.decision()}' {action} {env.action_name(action)}")
            env.step(action)
            continue
        lines.append("")
        lines.append(f"## decision {decision}: {agent} deciding '{env.decision()}'")
        lines.append("legal: " + ", ".join(f"{a} {env.action_name(a)}" for a in legal))
        lines.append("observation:")
        for piece, values in env.observer.decode(obs["observation"]).items():
            lines.append(f"  {piece}: {_piece(values)}")
        lines.append("view:")
        lines.extend(f"  | {line}" for line in env.view(agent).splitlines())
        lines.append(f"action: {action} {env.action_name(action)}")
        env.step(action)
    lines.append("")
    ended = "truncated" if env.game.truncated and not env.game.terminal else "terminated"
    lines.append(f"## end ({ended}) after {decision} decisions")
    lines.append("rewards: " + ", ".join(f"{a} {_number(final[a])}" for a in env.possible_agents))
    return "\n".join(lines) + "\n"


def cases() -> list[tuple[str, int]]:
    """Every registered game at every player count it supports."""
    return [(name, n) for name in envs.ENV_NAMES for n in envs.player_counts(name)]


def filename(name: str, num_players: int) -> str:
    """The playthrough file of a game and player count."""
    return f"{name}_{num_players}p.txt"


def main(argv: list[str] | None = None) -> int:
    """Write every playthrough into --out (the tests' golden files)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write the files into")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, n in cases():
        (args.out / filename(name, n)).write_text(playthrough(name, n))
        print(f"wrote {args.out / filename(name, n)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
