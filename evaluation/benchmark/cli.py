"""Throughput benchmark: `fowlplay-bench` prints decisions per second per game and player count.

For each game and player count it measures masked random play (a) through the raw engine and
(b) through the full PettingZoo AEC API as users get it from `envs.make`, plus reset, `clone()`
and `resample_hidden()` rates and the memory one environment holds. In the same run it measures
anchors, each at its best and with the same masked random loop: PettingZoo's `leduc_holdem_v4`
and `texas_holdem_v4` through the AEC API, RLCard's own Leduc (`rlcard.make("leduc-holdem")`,
no PettingZoo layer) and OpenSpiel's C++ `leduc_poker` through pyspiel (observation tensor and
legal actions at every decision), each when installed. Every loop seeds its first game only and
resets unseeded after that (a seeded reset of PettingZoo's RLCard-backed Leduc rebuilds the
RLCard env and costs about 17 unseeded ones), so the ratios compare the games, not reseeding.

`fowlplay-bench --batched` times the JAX twins instead (`evaluation.benchmark.batched`), and
`fowlplay-bench --training` adds the trainers' rates (`evaluation.benchmark.training`); the figures
themselves are measured in `evaluation.benchmark.aec`.
"""

from __future__ import annotations

import argparse
import json
import os

from fowlplay import envs
from fowlplay.envs.runtime.cli import integer
from fowlplay.evaluation.benchmark import batched
from fowlplay.evaluation.benchmark.aec import (
    CLOCKS,
    RLCARD_LEDUC,
    aec_rate_again,
    bench_game,
    keep_best_of_rounds,
    machine,
    reference_rows,
    use_clock,
)

#: The bars of the throughput issue, at each game's default player count through the AEC API:
#: at least this many times PettingZoo's Leduc, and at least as fast as RLCard's raw Leduc.
TARGET_RATIO_TO_LEDUC = 5.0
TARGET_RATIO_TO_RLCARD = 1.0


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "B":
        return f"{value / 1024:,.0f} KiB"
    return f"{value:,.0f}"


def format_table(rows: list[dict]) -> str:
    """The figures as a Markdown table."""
    head = (
        "| game | players | AEC decisions/s | x Leduc (PettingZoo) | x Leduc (RLCard) "
        "| engine decisions/s | resets/s | clones/s | resample_hidden/s | memory/env |"
    )
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['game']} | {r['players']} | {_fmt(r['aec_decisions_per_s'])} | "
            f"{_ratio(r.get('ratio_to_leduc'))} | {_ratio(r.get('ratio_to_rlcard'))} | "
            f"{_fmt(r.get('engine_decisions_per_s'))} | "
            f"{_fmt(r.get('resets_per_s'))} | {_fmt(r.get('clones_per_s'))} | "
            f"{_fmt(r.get('resamples_per_s'))} | {_fmt(r.get('bytes_per_env'), 'B')} |"
        )
    return "\n".join(lines)


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def verdict(rows: list[dict]) -> str:
    """Which games at their default player count miss the bars (empty when no anchor ran)."""
    lines = []
    for key, target, anchor in (
        ("ratio_to_leduc", TARGET_RATIO_TO_LEDUC, "PettingZoo's leduc_holdem_v4"),
        ("ratio_to_rlcard", TARGET_RATIO_TO_RLCARD, "RLCard's raw Leduc"),
    ):
        mine = [r for r in rows if r.get("default_players") and r.get(key) is not None]
        if not mine:
            continue
        below = [r["game"] for r in mine if r[key] < target]
        result = "all games meet it" if not below else f"below it: {below}"
        lines.append(
            f"bar: >= {target:g}x {anchor} through the AEC API at the default player count; {result}"
        )
    return "\n".join(lines)


#: Busy processes beside the second training measurement: as many as this machine class has cores.
TRAINING_LOADS = (0, 2)
#: trainer: jax's bar against the ppo trainer (issue "Learn at batched speed").
JAX_TRAINING_BAR = 10


def _has_jax() -> bool:
    import importlib.util

    return importlib.util.find_spec("jax") is not None


def training_table(
    rows: list[dict],
    chosen: dict[str, list[int]],
    decisions: int,
    config_dir: str | None = None,
    trainers: list[str] | None = None,
) -> list[dict]:
    """Train each chosen game with its config (idle, then loaded) by each trainer (ppo, and jax where
    JAX is installed), side by side; print and return the figures."""
    try:
        from fowlplay.evaluation.benchmark.training import (
            LOADED_SHARE_BAR,
            loaded_shares,
            training_decisions_per_second,
        )
    except ImportError as error:  # the [train] extra is missing
        raise SystemExit(f"fowlplay-bench --training needs the [train] extra: {error}") from error
    env_rate = {r["game"]: r["aec_decisions_per_s"] for r in rows if r.get("default_players")}
    out = []
    print(
        "\n| game | trainer | busy processes | training decisions/s | x ppo (same load) | env AEC decisions/s "
        "| of idle | load average before | settings |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    names = trainers or (["ppo", "jax"] if _has_jax() else ["ppo"])
    trainers = [(name, {} if name == "ppo" else {"trainer": name}) for name in names]
    for name in chosen:
        for load in TRAINING_LOADS:
            ppo_rate = None
            for trainer, overrides in trainers:
                before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
                row = training_decisions_per_second(
                    name, decisions=decisions, load=load, config_dir=config_dir, overrides=overrides
                )
                row["load_average_before"] = before
                row["trainer"] = trainer
                out.append(row)
                rate = row["decisions_per_s"]
                ppo_rate = rate if trainer == "ppo" else ppo_rate
                share = loaded_shares([r for r in out if r["trainer"] == trainer]).get((name, "", load))
                if trainer == "jax":
                    settings = (
                        f"{row['num_envs']} games x {row['n_steps']} per update, batched twin; compiled "
                        f"in {row['compile_seconds']:.0f} s before the first decision (not in the rate)"
                    )
                else:
                    settings = f"{row['vec_env']} x{row['n_envs']}, {row['torch_threads']} torch thread(s)"
                cut = " (cut short by the time cap)" if row["cut"] else ""
                ratio = "-" if trainer == "ppo" or not ppo_rate else f"{rate / ppo_rate:.1f}x"
                print(
                    f"| {name} | {trainer} | {load} | {rate:,.0f}{cut} | {ratio} | "
                    f"{_fmt(env_rate.get(name))} | {'-' if share is None else f'{share:.0%}'} | "
                    f"{'-' if before is None else f'{before:.2f}'} | {settings} |",
                    flush=True,
                )
    if len(trainers) > 1:
        print(
            f"\nbar (trainer jax): at least {JAX_TRAINING_BAR}x the ppo trainer's decisions/s for every "
            f"game, same command, same load; {_jax_bar(out)}"
        )
    out_ppo = [r for r in out if r["trainer"] == "ppo"]
    shares = loaded_shares(out_ppo)
    if shares:
        below = sorted({game for (game, _, _), share in shares.items() if share < LOADED_SHARE_BAR})
        result = "all games meet it" if not below else f"below it: {below}"
        print(
            f"\nbar: training beside {max(TRAINING_LOADS)} busy processes keeps >= {LOADED_SHARE_BAR:.0%} "
            f"of its idle rate (measured in this run); {result}"
        )
    return out


def _jax_bar(rows: list[dict]) -> str:
    """Whether every game's jax rate is `JAX_TRAINING_BAR` times its ppo rate at each load."""
    rate = {(r["game"], r["trainer"], r["load"]): r["decisions_per_s"] for r in rows}
    ratios: dict[str, float] = {}
    for (game, trainer, load), value in rate.items():
        ppo = rate.get((game, "ppo", load))
        if trainer == "jax" and ppo:
            ratios[game] = min(ratios.get(game, float("inf")), value / ppo)
    if not ratios:
        return "not measured (no jax and ppo rows of one game and load)"
    below = {game: f"{ratio:.1f}x" for game, ratio in sorted(ratios.items()) if ratio < JAX_TRAINING_BAR}
    return "met" if not below else f"below it (lowest ratio): {below}"


def _players(text: str) -> str:
    if text in ("default", "all"):
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"--players must be 'default', 'all' or a player count >= 1; got {text!r}"
        )
    return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--seconds must be a positive finite number; got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command-line interface."""
    parser = argparse.ArgumentParser(prog="fowlplay-bench", description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(envs.ENV_NAMES), choices=envs.ENV_NAMES)
    parser.add_argument(
        "--players",
        type=_players,
        default="default",
        help="'default' (each game's default count), 'all', or a number",
    )
    parser.add_argument("--seconds", type=_seconds, default=2.0, help="seconds per throughput figure")
    parser.add_argument(
        "--rounds",
        type=integer(1),
        default=1,
        help="measure every AEC figure (games and anchors, taking turns) this many times and keep "
        "each one's fastest: steadier ratios on a busy machine (with --batched: each game's AEC "
        "figure, after the rollouts)",
    )
    parser.add_argument("--json", dest="json_path", help="also write every figure to this JSON file")
    parser.add_argument(
        "--clock",
        choices=list(CLOCKS),
        default="wall",
        help="time figures on the wall clock (default) or on this process's CPU time (for a busy "
        "machine: other programs' share of the cores is left out; training figures stay wall-clock)",
    )
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the anchors (PettingZoo, RLCard, OpenSpiel)"
    )
    parser.add_argument(
        "--training",
        action="store_true",
        help="also train each game briefly with its config (idle, then beside 2 busy processes) and "
        "print learner decisions/s beside the env's own rate (needs the [train] extra)",
    )
    parser.add_argument(
        "--training-decisions", type=int, default=20_480, help="learner decisions per --training run"
    )
    parser.add_argument(
        "--trainers",
        nargs="+",
        choices=("ppo", "jax"),
        default=None,
        help="with --training: the trainers to run side by side (default: ppo, and jax where JAX is "
        "installed)",
    )
    parser.add_argument(
        "--config-dir",
        help="with --training: folder of the <game>.yaml training configs (default: the checkout's "
        "configs/, else ./configs)",
    )
    parser.add_argument(
        "--batched",
        action="store_true",
        help="instead of the AEC table: the JAX twins' jitted lax.scan rollouts of random legal actions "
        "with auto-reset at each batch size, beside Pgx's leduc_holdem and each game's AEC figure of "
        "the same run (needs the [jax] extra; pgx for the Leduc row)",
    )
    parser.add_argument(
        "--batch-sizes",
        nargs="+",
        type=integer(1),
        default=None,
        help="with --batched: the batch sizes (default: 1 8 64 512 2048 8192)",
    )
    parser.add_argument(
        "--steps",
        type=integer(1),
        default=None,
        help="with --batched: decisions per game in one timed rollout",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (and write JSON with --json)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    chosen = _chosen(parser, args)
    if args.training:
        _ready_to_train(parser, chosen, args.config_dir)
    use_clock(args.clock)
    where = machine()
    print(
        f"machine: {where['cpu']}, {where['cores']} cores, Python {where['python']}, numpy {where['numpy']}, "
        f"load average {where['load_average_1min']:.2f} at the start"
        if where["load_average_1min"] is not None
        else f"machine: {where['cpu']}, {where['cores']} cores"
    )
    print(f"clock: {args.clock} ({'process CPU time' if args.clock == 'cpu' else 'wall time'})")
    if args.batched:
        return batched.main(args, chosen, where)
    rows = _aec_table(args, chosen)
    training = (
        training_table(rows, chosen, args.training_decisions, args.config_dir, args.trainers)
        if args.training
        else None
    )
    if hasattr(os, "getloadavg"):
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    if args.json_path:
        payload = {
            "machine": where,
            "fowlplay": envs.__version__,
            "seconds_per_figure": args.seconds,
            "clock": args.clock,
            "rounds": args.rounds,
            "target_ratio_to_leduc": TARGET_RATIO_TO_LEDUC,
            "target_ratio_to_rlcard": TARGET_RATIO_TO_RLCARD,
            "rows": rows,
            "training": training,
        }
        with open(args.json_path, "w") as handle:
            json.dump(payload, handle, indent=2)
    return 0


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, list[int]]:
    """The player counts to measure per game, once the arguments that go together are checked."""
    if args.training_decisions < 1:
        parser.error(f"--training-decisions must be >= 1; got {args.training_decisions}")
    if not args.batched and (args.batch_sizes or args.steps):
        parser.error("--batch-sizes and --steps go with --batched")
    if args.batched and args.training:
        parser.error("--batched and --training are separate runs: choose one")
    if args.json_path and not os.path.isdir(os.path.dirname(os.path.abspath(args.json_path))):
        parser.error(f"--json {args.json_path}: its folder does not exist")
    chosen = {}
    for name in args.games:
        counts = list(envs.player_counts(name))
        if args.players == "default":
            chosen[name] = [envs.make(name).options.num_players]
        elif args.players == "all":
            chosen[name] = counts
        elif int(args.players) in counts:
            chosen[name] = [int(args.players)]
    if not any(chosen.values()):
        parser.error(f"no game chosen supports --players {args.players}")
    return chosen


def _ready_to_train(parser: argparse.ArgumentParser, chosen: dict[str, list[int]], config_dir) -> None:
    """Refuse a game without its training config; then keep idle threads from spinning (before the
    training runs import torch)."""
    from fowlplay.envs.runtime.threads import passive_threads
    from fowlplay.evaluation.benchmark.training import default_config

    try:
        for name in chosen:
            default_config(name, config_dir)
    except FileNotFoundError as error:
        parser.error(str(error))
    passive_threads()  # before the training runs import torch


def _aec_table(args: argparse.Namespace, chosen: dict[str, list[int]]) -> list[dict]:
    """Measure the anchors and every chosen game, `--rounds` times; print the table and its bars."""
    if args.rounds > 1:
        print(f"AEC decisions/s: the fastest of {args.rounds} rounds, games and anchors taking turns")
    rows = [] if args.no_reference else reference_rows(args.seconds)
    for name, counts in chosen.items():
        default = envs.make(name).options.num_players
        for n in counts:
            row = bench_game(name, n, args.seconds)
            row["default_players"] = n == default
            rows.append(row)
    keep_best_of_rounds(rows, args.rounds, args.seconds, aec_rate_again)
    anchors = {r["game"]: r["aec_decisions_per_s"] for r in rows}
    leduc = anchors.get("pettingzoo:leduc_holdem_v4")
    rlcard = anchors.get(RLCARD_LEDUC)
    for row in rows:
        row["ratio_to_leduc"] = None if leduc is None else row["aec_decisions_per_s"] / leduc
        row["ratio_to_rlcard"] = None if rlcard is None else row["aec_decisions_per_s"] / rlcard
    print(format_table(rows))
    bars = verdict(rows)
    if bars:
        print("\n" + bars)
    return rows
