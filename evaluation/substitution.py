"""Where an agent plays worse than another: the substitution test.

    python -m fowlplay.evaluation.substitution --game murder_most_fowl_v0 --agent ckpt:RUN \\
        [--helper baseline] [--opponent baseline] [--deals 100] [--players N] [--seed 0] [--kinds NAME ...]

The agent plays `--deals` seeded deals against `--opponent` (the agent in each seat of a deal in
turn, the opponent in the others), first as itself, then once for each kind of decision it met
(the game's `decision()` names, or those `--kinds` names), with `--helper` deciding that kind in its
place, and last with the helper deciding every kind. Where handing one kind to the helper raises
the score, the agent plays that kind worse than the helper does, against that opponent. The deals
and every seat's seeds are the same in every row (common random numbers; the helper is reset with
the agent's seed), so the last row is the helper's own score and each row's change against the
agent alone is a paired difference over deals, given with its 95% t interval.

A game scores 1 for the agent's seat when its return is the best at the table alone, 0.5 when it
ties for the best, 0 otherwise; a deal (a match) scores the mean over its seats, and a match is won
above 0.5 and drawn at 0.5. Agents are the specs of `fowlplay-eval` (`evaluation.agents`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent
from fowlplay.evaluation.agents import AgentSpecError, ModelCache, build_agent, parse_spec, resolve_spec
from fowlplay.evaluation.matches import agent_seed, deal_seed, play_game
from fowlplay.evaluation.stats import mean_ci, outcome, score_ci

PROG = "python -m fowlplay.evaluation.substitution"
ALONE, EVERY = "(none: the agent alone)", "(every kind)"


class Substitute(Agent):
    """`agent`, except that `helper` decides the decisions whose kind (`game.decision()`) is in `kinds`;
    counts the kinds it met. With `shadow`, the helper is also asked at the agent's own decisions
    (its answer only counted: `agreed` per kind)."""

    def __init__(
        self, env, agent: Agent, helper: Agent, kinds: set[str] | None, shadow: bool = False
    ) -> None:
        self.env, self.agent, self.helper, self.kinds = env, agent, helper, kinds  # None: every kind
        self.shadow = shadow
        self.met: Counter = Counter()
        self.agreed: Counter = Counter()

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)
        self.helper.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        kind = self.env.unwrapped.game.decision()
        self.met[kind] += 1
        if self.kinds is None or kind in self.kinds:
            return self.helper.act(observation, action_mask)
        action = self.agent.act(observation, action_mask)
        if self.shadow:
            self.agreed[kind] += int(self.helper.act(observation, action_mask)) == int(action)
        return action


@dataclass
class Row:
    """One way of playing: which kinds the helper decided, each deal's score, what the agent met."""

    label: str
    scores: list[float] = field(default_factory=list)  # per deal
    met: Counter = field(default_factory=Counter)  # decisions of each kind in the agent's seat
    games: int = 0
    agreed: Counter = field(default_factory=Counter)  # the agent alone: its choices the helper made too


def play_row(
    env, specs: dict, label: str, kinds: set[str] | None, deals: int, seed: int, shadow=False
) -> Row:
    """The agent's seat in every seat of `deals` deals, the helper deciding `kinds` (empty: none;
    `shadow`: asked beside the agent as well, `Row.agreed`)."""
    n = len(env.possible_agents)
    models = ModelCache()
    row = Row(label)
    for match in range(deals):
        points = []
        for seat in range(n):
            me = Substitute(
                env,
                build_agent(specs["agent"], env, models=models),
                build_agent(specs["helper"], env, models=models),
                kinds,
                shadow,
            )
            agents = [
                me if s == seat else build_agent(specs["opponent"], env, models=models) for s in range(n)
            ]
            game = play_game(
                env, agents, deal_seed(seed, match), [agent_seed(seed, 0, match, seat, s) for s in range(n)]
            )
            if game["error"]:
                raise RuntimeError(f"{label}, deal {match}, seat {seat}: {game['error']}")
            mine, others = game["returns"][seat], [r for s, r in enumerate(game["returns"]) if s != seat]
            points.append(outcome(mine, max(others)))
            row.met.update(me.met)
            row.agreed.update(me.agreed)
            row.games += 1
        row.scores.append(float(np.mean(points)))
    return row


def table(rows: list[Row]) -> str:
    """The Markdown table of the rows: the agent alone first, the helper deciding every kind last.
    Per kind: how often the agent and the helper (playing alone, the last row) meet it a game, how
    often the helper, asked beside the agent alone, chose as it did, and the row's scores."""
    alone, helper = rows[0], rows[-1]
    lines = [
        "| decided by the helper | agent's decisions of it per game | helper's | agent chose as the helper "
        "| score [95%] | change vs alone [95%] | matches W/D/L |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        x = np.asarray(row.scores)
        mean, lo, hi = score_ci(x)
        if row.label in (ALONE, EVERY):
            kind, mine, theirs, agreed = row.label, "-", "-", "-"
        else:
            met = alone.met[row.label]
            kind, mine = f"`{row.label}`", f"{met / alone.games:.1f}"
            theirs = f"{helper.met[row.label] / helper.games:.1f}" if helper.games else "-"
            agreed = f"{alone.agreed[row.label] / met:.0%}" if met else "-"
        if row is alone:
            change = "-"
        else:
            d, dlo, dhi = mean_ci(x - np.asarray(alone.scores))
            change = f"{d:+.3f} [{dlo:+.3f}, {dhi:+.3f}]"
        wdl = f"{(x > 0.5).sum()}/{(x == 0.5).sum()}/{(x < 0.5).sum()}"
        lines.append(
            f"| {kind} | {mine} | {theirs} | {agreed} | {mean:.3f} [{lo:.3f}, {hi:.3f}] | {change} | {wdl} |"
        )
    return "\n".join(lines)


def substitution(
    game: str,
    agent: str,
    helper: str,
    opponent: str,
    deals: int,
    players: int | None,
    seed: int,
    kinds=None,
    log=print,
) -> list[Row]:
    """Every row of the test (the agent alone first, every kind last)."""
    env = envs.make(game, **({"num_players": players} if players else {}))
    specs = {
        role: resolve_spec(parse_spec(text), env)
        for role, text in (("agent", agent), ("helper", helper), ("opponent", opponent))
    }
    rows = [play_row(env, specs, ALONE, set(), deals, seed, shadow=True)]
    met = list(rows[0].met)
    if kinds:
        unknown = sorted(set(kinds) - set(met))
        if unknown:
            raise ValueError(f"--kinds {unknown}: the agent met no decision of that kind; it met {met}")
        met = list(kinds)
    for kind in met:
        log(f"{PROG}: the helper decides {kind!r}")
        rows.append(play_row(env, specs, kind, {kind}, deals, seed))
    rows.append(play_row(env, specs, EVERY, None, deals, seed))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command line: print the table."""
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, choices=envs.ENV_NAMES)
    parser.add_argument("--agent", required=True, help="the agent tested (an agent spec, e.g. ckpt:RUN)")
    parser.add_argument("--helper", default="baseline", help="who decides a kind in its place [baseline]")
    parser.add_argument("--opponent", default="baseline", help="who plays the other seats [baseline]")
    parser.add_argument(
        "--deals", type=int, default=100, help="seeded deals, each played from every seat [100]"
    )
    parser.add_argument("--players", type=int, default=None, help="players at the table [the game's default]")
    parser.add_argument(
        "--seed", type=int, default=0, help="root seed of the deals and the agents' seeds [0]"
    )
    parser.add_argument("--kinds", nargs="+", default=None, help="only these decision kinds [every kind met]")
    args = parser.parse_args(argv)
    if args.deals < 2:
        parser.error(f"--deals must be at least 2 (an interval needs two deals); got {args.deals}")
    try:
        rows = substitution(
            args.game, args.agent, args.helper, args.opponent, args.deals, args.players, args.seed, args.kinds
        )
    except (AgentSpecError, ValueError) as err:
        print(f"{PROG}: {err}", file=sys.stderr)
        return 2
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
