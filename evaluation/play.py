"""Watch or play one seeded game: `fowlplay-play --game chicken_v0 --agents baseline human`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

import envs
from envs.core.agents import Agent


class HumanAgent(Agent):
    """Asks a person at the terminal, listing every legal action by name."""

    name = "human"

    def __init__(self, env, stream_in=None, stream_out=None) -> None:
        self.env = env
        self.stream_in = stream_in or sys.stdin
        self.stream_out = stream_out or sys.stdout

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Prompt until the person types a legal action id."""
        legal = np.flatnonzero(action_mask).tolist()
        out = self.stream_out
        print(f"{self.env.agent_selection}, you are deciding '{self.env.decision()}':", file=out)
        for action in legal:
            print(f"  {action:>4}: {self.env.action_name(action)}", file=out)
        while True:
            print("your action id> ", end="", file=out, flush=True)
            line = self.stream_in.readline()
            if not line:
                raise SystemExit("no more input: game abandoned")
            text = line.strip()
            if text.lstrip("-").isdigit() and int(text) in legal:
                return int(text)
            print(f"'{text}' is not one of the legal action ids {legal}", file=out)


def build_agent(spec: str, env, seed: int) -> Agent:
    """An agent from a spec: human, or any spec `fowlplay-eval` accepts (random, baseline, checkpoints)."""
    if spec == "human":
        return HumanAgent(env)
    from evaluation.agents import make_agent

    try:
        return make_agent(spec, env, seed=seed)
    except ValueError as error:
        raise ValueError(f"{error} (fowlplay-play also accepts: human)") from None


def main(argv: list[str] | None = None) -> int:
    """Play one seeded game with the given agents, printing the table after every decision."""
    parser = argparse.ArgumentParser(prog="fowlplay-play", description=__doc__)
    parser.add_argument("--game", default="chicken_v0", choices=envs.ENV_NAMES)
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["baseline", "baseline"],
        help="one spec per seat: random, baseline, human, or a checkpoint",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="print only the final table")
    args = parser.parse_args(argv)
    try:
        env = envs.make(args.game, num_players=len(args.agents), render_mode="ansi")
        env.reset(seed=args.seed)
        seats = zip(env.possible_agents, args.agents)
        agents = {a: build_agent(spec, env, args.seed + i) for i, (a, spec) in enumerate(seats)}
    except ValueError as error:
        parser.error(f"{error} ({len(args.agents)} agents given, one per seat)")
    print(env.render())
    decisions = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, _ = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        seat_spec = args.agents[env.possible_agents.index(agent)]
        action = agents[agent].act(obs["observation"], obs["action_mask"])
        if not args.quiet:
            print(f"-- {agent} ({seat_spec}) deciding '{env.decision()}': {env.action_name(action)}")
        env.step(action)
        decisions += 1
        if not args.quiet and not env.game.over:
            print(env.render())
    print(env.render())
    ending = "truncated at its cap" if env.game.truncated else "ended"
    print(
        f"game {ending} after {decisions} decisions; rewards: "
        + ", ".join(f"{a} {r:+.2f}" for a, r in totals.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
