"""Watch or play one seeded game: `fowlplay-play --game chicken_v1 --agents baseline human`.

A person at a human seat sees only that seat's own view of the table (`env.view(agent)`), never
the umpire's, and is told every event as that seat saw it (`evaluation.narration`): a bid or a
card played face up is said, the seat's own draw is said with the cards drawn, another seat's
hidden draw only by what the table saw ("player_1 draws 3: 2 numbers, 1 foot"). The whole table is
shown once the game is over. A game between bots only is watched from the umpire's chair.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import TextIO

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.agents import Agent
from fowlplay.envs.runtime.cli import integer
from fowlplay.evaluation.narration import Narrator

PROG = "fowlplay-play"
#: What a typed action id may look like: a few ASCII digits (not '²', '--1' or 5000 digits).
_ACTION_ID = re.compile(r"[0-9]{1,9}")


def seat_view(env, agent: str) -> str:
    """The table as `agent` sees it: the game's own view, or its observation piece by piece."""
    try:
        return env.view(agent)
    except NotImplementedError:
        # A game without a text view yet: its observation is exactly what the seat may know.
        parts = env.unwrapped.observer.decode(env.observe(agent)["observation"])
        lines = [f"{agent} sees:"]
        lines += [f"  {name}: {' '.join(f'{x:g}' for x in values)}" for name, values in parts.items()]
        return "\n".join(lines)


def prompt_text(env, agent: str, legal: list[int]) -> str:
    """What a human seat is shown before deciding: its own view and its legal actions by name."""
    lines = [seat_view(env, agent), f"{agent}, you are deciding '{env.decision()}':"]
    lines += [f"  {action:>4}: {env.action_name(action)}" for action in legal]
    return "\n".join(lines)


class HumanAgent(Agent):
    """Asks a person at the terminal, showing only their own view and every legal action by name."""

    name = "human"

    def __init__(self, env, stream_in: TextIO | None = None, stream_out: TextIO | None = None) -> None:
        self.env = env
        self.stream_in = stream_in or sys.stdin
        self.stream_out = stream_out or sys.stdout

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Prompt until the person types a legal action id."""
        legal = np.flatnonzero(action_mask).tolist()
        out = self.stream_out
        print(prompt_text(self.env, self.env.agent_selection, legal), file=out)
        while True:
            print("your action id> ", end="", file=out, flush=True)
            line = self.stream_in.readline()
            if not line:
                raise SystemExit("no more input: game abandoned")
            text = line.strip()
            if _ACTION_ID.fullmatch(text) and int(text) in legal:
                return int(text)
            shown = text if len(text) <= 20 else text[:20] + "..."
            print(f"'{shown}' is not one of the legal action ids {legal}", file=out)


def build_agent(spec: str, env, seed: int, trust_checkpoint: bool = False) -> Agent:
    """An agent from a spec: human, or any spec `fowlplay-eval` accepts (random, baseline, checkpoints)."""
    if spec == "human":
        return HumanAgent(env)
    from fowlplay.evaluation.agents import make_agent

    try:
        return make_agent(spec, env, seed=seed, trust_checkpoint=trust_checkpoint)
    except ValueError as error:
        if "accepted:" not in str(error):  # a checkpoint that was found but cannot be played
            raise
        raise ValueError(f"{error} (fowlplay-play also accepts: human)") from None


def play(
    env,
    agents: dict[str, Agent],
    specs: dict[str, str],
    out: TextIO,
    quiet: bool = False,
    narrator: Narrator | None = None,
) -> dict:
    """Play the reset `env` to its end; returns each agent's total reward.

    With a human seat, only that seat's view is shown (at its decisions), and after every move the
    seat is told what it saw of it (`narrator`, one made here when not given). The whole table is
    printed at the end.
    """
    watching = "human" not in specs.values()  # nobody at the table: the umpire's view is fine
    humans = [env.possible_agents.index(a) for a, spec in specs.items() if spec == "human"]
    narrator = narrator or Narrator(env.unwrapped.game)
    if watching and not quiet:
        print(env.render(), file=out)
    elif not quiet:
        _tell(humans, out, narrator.history)
    decisions = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        decision = env.decision()
        action = agents[agent].act(obs["observation"], obs["action_mask"])
        name = env.action_name(action)
        seat = env.unwrapped.game.current_player
        env.step(action)
        told = narrator.step(env.unwrapped.game, seat, decision, name)
        if not quiet:
            if watching:
                print(f"-- {agent} ({specs[agent]}) deciding '{decision}': {name}", file=out)
                for line in told[None]:
                    print(f"   {line}", file=out)
            else:
                _tell(humans, out, told)
        decisions += 1
        if watching and not quiet and not env.game.over:
            print(env.render(), file=out)
    print(env.render(), file=out)
    ending = "truncated at its cap" if env.game.truncated else "ended"
    print(
        f"game {ending} after {decisions} decisions; rewards: "
        + ", ".join(f"{a} {r:+.2f}" for a, r in totals.items()),
        file=out,
    )
    return totals


def _tell(humans: list[int], out: TextIO, told: dict) -> None:
    """Print what each human seat was told (named by seat when several people share the screen)."""
    for seat in humans:
        prefix = "-- " if len(humans) == 1 else f"-- [player_{seat}] "
        for line in told[seat]:
            print(prefix + line, file=out)


def main(argv: list[str] | None = None) -> int:
    """Play one seeded game with the given agents; Ctrl-C abandons it with one line."""
    from fowlplay.envs.runtime.cli import run_stoppable
    from fowlplay.envs.runtime.stopping import stopped

    return run_stoppable(
        PROG,
        lambda: _main(argv),
        lambda stop: (
            f"{stopped(stop)}; the game is abandoned (nothing is saved: the same --seed "
            "and agents deal it again)"
        ),
    )


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="chicken_v1", choices=envs.ENV_NAMES)
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["baseline", "baseline"],
        help="one spec per seat: random, baseline, human, ismcts:N[:random][:hK][:mX][:vK] (information-set "
        "search, N simulations per decision; random rollouts, horizon K, margin X, validation K), oracle:N (the "
        "same search with every hand face up), zoo (the game's shipped trained agent), or a checkpoint",
    )
    parser.add_argument("--seed", type=integer(0), default=0, help="seed of the deal and the agents (>= 0)")
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    parser.add_argument(
        "--trust-checkpoint",
        action="store_true",
        help="also load checkpoints that have no tensor-only weights file from their SB3 zip, "
        "which unpickles it and so runs any code it holds: only for files you made yourself",
    )
    args = parser.parse_args(argv)
    try:
        env = envs.make(args.game, num_players=len(args.agents), render_mode="ansi")
    except ValueError as error:
        parser.error(f"{error} ({len(args.agents)} agents given, one per seat)")
    env.reset(seed=args.seed)
    seats = list(zip(env.possible_agents, args.agents))
    try:
        agents = {
            a: build_agent(spec, env, args.seed + i, args.trust_checkpoint)
            for i, (a, spec) in enumerate(seats)
        }
    except ValueError as error:
        parser.error(str(error))
    play(env, agents, dict(seats), sys.stdout, quiet=args.quiet)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
