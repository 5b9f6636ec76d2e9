"""Exact values on the small variants: the whole game tree, CFR+, and the exact exploitability of
fowlplay agents (issue 53).

The tree of a small variant (`fowlplay.envs.small`) is walked once through its OpenSpiel game
(`fowlplay.envs.openspiel`) and written out in Gambit's EFG format, which OpenSpiel loads as a C++
game (`pyspiel.load_efg_game`): its information sets are the Python game's, numbered, and its
actions keep the fowlplay ids in their names. On that copy OpenSpiel's C++ CFR+ solves the
variant and `pyspiel.nash_conv` gives exact values.

A fowlplay agent becomes an OpenSpiel tabular policy by asking it for an action at one state of
every information set of its seat (`policy_of`): the uniform random agent's probabilities are
exact; a seeded agent (the baseline, `ismcts:N`) is a pure policy, its action at an information
set being the one it takes there when seeded from that information set's digest, so its table
is exact for that seeding (a differently seeded agent is another pure policy of the same kind).

Exploitability is shown in OpenSpiel's units (NashConv: the sum over seats of what a best
response gains; for two players `exploitability` is half of it, the mean best-response return) and
on fowlplay's score scale: the expected score in [0, 1] (win 1, draw 1/2) of a best response
playing a random seat against the agent, (1 + exploitability) / 2.

    python -m fowlplay.evaluation.exact                 # every small variant: size, CFR+, agents
    python -m fowlplay.evaluation.exact --game chicken_v1 --ismcts 20 200
    python -m fowlplay.evaluation.exact --calibrate runs/exact   # fowlplay-exploit beside the exact values
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.small import SMALL, small


@dataclass
class InfoSet:
    """One information set of the enumerated tree."""

    number: int  # its number among its player's (EFG numbers them from 1)
    legal: list[int]  # fowlplay action ids
    engine: object  # the engine state at its first node (do not change it)


@dataclass
class Tree:
    """A small variant's whole game tree in EFG form, and what it took to make it."""

    name: str
    options: dict
    efg: str
    states: int = 0
    chance_nodes: int = 0
    terminals: int = 0
    seconds: float = 0.0
    #: Per player: the OpenSpiel information state string -> its `InfoSet`.
    infosets: list[dict[str, InfoSet]] = field(default_factory=list)

    @property
    def num_infosets(self) -> int:
        """Decision information sets of every player."""
        return sum(len(table) for table in self.infosets)


def build_tree(name: str, options: dict | None = None) -> Tree:
    """Walk every state of `name` with `options` (default: its small variant) into EFG text."""
    from fowlplay.envs import openspiel

    options = small(name) if options is None else options
    game = openspiel.load(name, **options)
    n = game.num_players()
    tree = Tree(name, options, "", infosets=[{} for _ in range(n)])
    lines = [f'EFG 2 R "{name}" {{ {" ".join(f"{chr(34)}p{i}{chr(34)}" for i in range(n))} }}']
    started = time.perf_counter()
    stack = [game.new_initial_state()]
    while stack:  # preorder, children in action order (the EFG node order)
        state = stack.pop()
        tree.states += 1
        if state.is_terminal():
            tree.terminals += 1
            payoffs = " ".join(repr(float(r)) for r in state.returns())
            lines.append(f't "" {tree.terminals} "" {{ {payoffs} }}')
            continue
        if state.is_chance_node():
            tree.chance_nodes += 1
            outcomes = state.chance_outcomes()
            listed = " ".join(f'"c{a}" {p!r}' for a, p in outcomes)
            lines.append(f'c "" {tree.chance_nodes} "" {{ {listed} }} 0')
            actions = [a for a, _ in outcomes]
        else:
            player = state.current_player()
            table = tree.infosets[player]
            key = state.information_state_string(player)
            info = table.get(key)
            if info is None:
                info = table[key] = InfoSet(len(table) + 1, state.legal_actions(), state.engine)
            actions = info.legal
            listed = " ".join(f'"a{a}"' for a in actions)
            lines.append(f'p "" {player + 1} {info.number} "" {{ {listed} }} 0')
        stack.extend(state.child(a) for a in reversed(actions))
    tree.seconds = time.perf_counter() - started
    tree.efg = "\n".join(lines) + "\n"
    return tree


def efg_game(tree: Tree):
    """The tree as OpenSpiel's C++ EFG game."""
    import pyspiel

    return pyspiel.load_efg_game(tree.efg)


def _efg_key(player: int, number: int) -> str:
    # pyspiel's EFG information state string of a player's own information set (no name given).
    return f"{player}-{player}-{number}-"


def policy_table(tree: Tree, choose) -> dict[str, list[tuple[int, float]]]:
    """An OpenSpiel tabular policy of the EFG game from `choose(player, key, info) -> {fowlplay
    action: probability}`, over every information set of every player."""
    ids = _efg_action_ids(tree)
    table = {}
    for player, infos in enumerate(tree.infosets):
        for key, info in infos.items():
            probs = choose(player, key, info)
            table[_efg_key(player, info.number)] = [
                (ids[f"a{a}"], float(probs.get(a, 0.0))) for a in info.legal
            ]
    return table


def _efg_action_ids(tree: Tree) -> dict[str, int]:
    """EFG action names ('a17') -> the EFG game's action ids (numbered by first appearance)."""
    ids: dict[str, int] = {}
    for line in tree.efg.splitlines()[1:]:
        if line.startswith("p "):
            for name in line.split("{", 1)[1].split("}", 1)[0].split():
                ids.setdefault(name.strip('"'), len(ids))
    return ids


def uniform(player: int, key: str, info: InfoSet) -> dict[int, float]:
    """The uniform random agent's exact probabilities."""
    return {a: 1.0 / len(info.legal) for a in info.legal}


def info_seed(key: str) -> int:
    """The seed of a seeded agent at an information set: from its digest, the same in every run."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


def env_at(env, engine, seed: int):
    """Put the AEC `env` of the variant (reset, never stepped) in the engine state `engine` (a copy)
    with a generator from `seed`: the state an agent is asked to act in."""
    from fowlplay.envs.openspiel.game import copy_engine

    game = copy_engine(engine)
    game.rng = env._np_random = np.random.default_rng(seed)
    env.game = game
    env.agent_selection = env.possible_agents[game.current_player]
    env._mask = None
    return env


def agent_policy(tree: Tree, spec: str):
    """`choose` for `policy_table`: the action of the agent `spec` (make_agent's spec strings) at
    the information set's first state, the agent reseeded from the information set's digest."""
    from fowlplay.evaluation.agents import make_agent

    env = envs.make(tree.name, **tree.options)
    env.reset(seed=0)
    agent = make_agent(spec, env, seed=0)  # a search agent plans on this env: it is moved below

    def choose(player: int, key: str, info: InfoSet) -> dict[int, float]:
        seed = info_seed(key)
        env_at(env, info.engine, seed)
        agent.reset(seed)
        obs = env.observe(env.agent_selection)
        return {int(agent.act(obs["observation"], obs["action_mask"])): 1.0}

    return choose


def nash_conv(tree: Tree, game, table: dict) -> float:
    """OpenSpiel's NashConv of the profile where every seat plays `table`."""
    import pyspiel

    return float(pyspiel.nash_conv(game, pyspiel.TabularPolicy(table)))


def score(nash_conv_value: float, num_players: int) -> float | None:
    """A 2-player best response's expected score in [0, 1] against the policy (None for more players)."""
    if num_players != 2:
        return None
    return (1.0 + nash_conv_value / 2) / 2


@dataclass
class CFRRun:
    """CFR+ on a tree: NashConv of the average policy after each checked iteration."""

    curve: list[tuple[int, float]]
    seconds: float
    table: dict


def cfr_plus(game, target: float = 0.01, max_iterations: int = 2000, budget_s: float = 600.0) -> CFRRun:
    """OpenSpiel's C++ CFR+ until the average policy's NashConv is below `target` (or the budget)."""
    import pyspiel

    solver = pyspiel.CFRPlusSolver(game)
    started, curve, checked = time.perf_counter(), [], 1
    for iteration in range(1, max_iterations + 1):
        solver.evaluate_and_update_policy()
        if iteration in (checked, max_iterations):
            value = float(pyspiel.nash_conv(game, solver.average_policy()))
            curve.append((iteration, value))
            checked = max(checked + 1, int(checked * 1.5))
            if value < target or time.perf_counter() - started > budget_s:
                break
    return CFRRun(curve, time.perf_counter() - started, {})


def peak_mib() -> float:
    """This process's peak resident memory, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report(name: str, budgets: list[int], agents: list[str]):
    """The lines of one small variant, as they are measured: size, CFR+, each agent's exact exploitability."""
    tree = build_tree(name)
    game = efg_game(tree)
    n = game.num_players()
    yield from [
        f"## {name} small variant {small(name)}",
        f"states {tree.states} (chance {tree.chance_nodes}, terminal {tree.terminals}), information "
        f"sets {tree.num_infosets} ({', '.join(str(len(t)) for t in tree.infosets)}), enumerated in "
        f"{tree.seconds:.1f} s",
    ]
    run = cfr_plus(game)
    last_it, last = run.curve[-1]
    curve = ", ".join(f"{i}:{v:.4f}" for i, v in run.curve)
    yield f"CFR+: NashConv {last:.4f} after {last_it} iterations ({run.seconds:.1f} s); curve {curve}"
    two = n == 2
    yield (
        "| policy | NashConv | exploitability | best response's score |" if two else "| policy | NashConv |"
    )
    yield "|---|---|---|---|" if two else "|---|---|"
    policies = [("random", uniform)] + [(spec, agent_policy(tree, spec)) for spec in agents]
    policies += [(f"ismcts:{b}", agent_policy(tree, f"ismcts:{b}")) for b in budgets]
    for label, choose in policies:
        value = nash_conv(tree, game, policy_table(tree, choose))
        yield (
            f"| {label} | {value:.4f} | {value / 2:.4f} | {score(value, n):.3f} |"
            if two
            else f"| {label} | {value:.4f} |"
        )
    yield f"peak memory {peak_mib():.0f} MiB"


def exploit_estimate(name: str, spec: str, out: Path, extra: list[str]) -> float:
    """`fowlplay-exploit`'s estimate (a best response's score) of `spec` on the small variant of
    `name`, run at its defaults into `out` (resumable: a finished run is read back)."""
    options = small(name)
    players = options.pop("num_players")
    command = [sys.executable, "-m", "fowlplay.evaluation.exploit", "--game", name, "--agent", spec]
    command += ["--players", str(players), "--out", str(out), *extra]
    for key, value in options.items():
        shown = list(value) if isinstance(value, tuple) else value
        command += ["--set", f"env_options.{key}={json.dumps(shown)}"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return float(json.loads((out / "exploit.json").read_text())["score"])


def calibration(
    name: str, budgets: list[int], agents: list[str], out: Path, extra: list[str], every: bool = False
):
    """Per policy: the exact best response's score beside `fowlplay-exploit`'s estimate, and issue
    53's bar (estimate - 0.5 >= 0.8 (exact - 0.5) wherever exact > 0.55); `fowlplay-exploit` runs
    only where the bar applies, unless `every`."""
    tree = build_tree(name)
    game = efg_game(tree)
    yield from [
        f"## {name}: exact value against fowlplay-exploit's estimate",
        "| policy | exact | estimate | recovered | bar |",
        "|---|---|---|---|---|",
    ]
    specs = ["random", *agents, *(f"ismcts:{b}" for b in budgets)]
    for spec in specs:
        choose = uniform if spec == "random" else agent_policy(tree, spec)
        true = score(nash_conv(tree, game, policy_table(tree, choose)), 2)
        excess = true - 0.5
        if excess <= 0.05 and not every:
            yield f"| {spec} | {true:.3f} | not run | - | n/a |"
            continue
        guess = exploit_estimate(name, spec, out / f"{name}-{spec.replace(':', '-')}", extra)
        recovered = f"{(guess - 0.5) / excess:.0%}" if excess > 1e-9 else "-"
        bar = "n/a" if excess <= 0.05 else ("met" if guess - 0.5 >= 0.8 * excess else "missed")
        yield f"| {spec} | {true:.3f} | {guess:.3f} | {recovered} | {bar} |"


def main(argv: list[str] | None = None) -> int:
    """Print the exact-values table of every small variant (or those named)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=list(SMALL), action="append", help="only these games")
    parser.add_argument(
        "--ismcts", type=int, nargs="*", default=[10, 50], help="ismcts budgets to value [10 50]"
    )
    parser.add_argument("--agent", action="append", default=None, help="more agent specs [baseline]")
    parser.add_argument(
        "--calibrate",
        type=Path,
        metavar="DIR",
        help="instead: run fowlplay-exploit (its defaults) on each 2-player variant and policy into DIR, "
        "and print its estimate beside the exact value",
    )
    parser.add_argument(
        "--exploit-arg", action="append", default=[], help="an extra fowlplay-exploit argument"
    )
    parser.add_argument(
        "--every",
        action="store_true",
        help="with --calibrate: run fowlplay-exploit where the bar does not apply too",
    )
    args = parser.parse_args(argv)
    agents = args.agent if args.agent is not None else ["baseline"]
    for name in args.game or list(SMALL):
        if args.calibrate is None:
            lines = report(name, args.ismcts, agents)
        elif SMALL[name]["num_players"] == 2:
            lines = calibration(name, args.ismcts, agents, args.calibrate, args.exploit_arg, args.every)
        else:
            continue
        for line in lines:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
