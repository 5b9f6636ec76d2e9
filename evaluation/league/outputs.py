"""The league's outputs: leaderboard.md, the CSV tables, league.json and the plots."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
from fowlplay.evaluation import report
from fowlplay.evaluation.league.config import PROG
from fowlplay.evaluation.league.exploitability import BR_NAME
from fowlplay.evaluation.stats import redeal_note


def _f(x, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _ci(x, lo, hi, digits: int = 3) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    if lo is None or not math.isfinite(lo):
        return _f(x, digits)
    return f"{_f(x, digits)} [{_f(lo, digits)}, {_f(hi, digits)}]"


def spread_text(record: dict, key: str, digits: int = 3) -> str:
    """`mean ± sd (min–max)` of `key` in an algorithm's record (the mean alone for one seed)."""
    mean, sd, lo, hi = (record.get(f"{key}_{s}") for s in ("mean", "sd", "min", "max"))
    if mean is None or not math.isfinite(mean):
        return "–"
    if sd is None or not math.isfinite(sd):
        return _f(mean, digits)
    return f"{_f(mean, digits)} ± {_f(sd, digits)} ({_f(lo, digits)}–{_f(hi, digits)})"


def _config_said(summary: dict, key: str) -> str:
    """``, set by `--KEY` (the league config says X)`` when the league ran with another budget."""
    written = summary.get(f"config_{key}")
    if written is None or written == summary[key]:
        return ""
    shown = f"{written:,}" if isinstance(written, int) else str(written)
    return f", set by `--{key}` (the league config says {shown})"


def _exploit_said(summary: dict) -> str:
    budget = summary.get("exploit")
    if not budget:
        return "Exploitability not estimated (no `exploit:` in the config, no `--exploit`)."
    seeds = budget.get("seeds", 1)
    probes = (
        ", every trivial probe of the game (always pass, first legal, ...) and every ladder rung "
        "(at two players from the league's own pairs) in the same matches; the exploit column is "
        "the strongest candidate's score against the checkpoint, with its interval and its name "
        f"(`{BR_NAME}`, `probe:NAME` or `rung:SPEC`): no fixed agent of the ladder scores more"
    )
    if seeds == 1:
        return (
            f"Exploitability: a fresh MaskablePPO best response per checkpoint (`fowlplay-exploit`, "
            f"{budget['total_timesteps']:,} learner decisions, {budget['matches']} duplicate matches, "
            f"one seed){probes}; lower is less exploitable."
        )
    return (
        f"Exploitability: {seeds} fresh MaskablePPO best responses per checkpoint (`fowlplay-exploit`, "
        f"seeds 0-{seeds - 1}, {budget['total_timesteps']:,} learner decisions, {budget['matches']} "
        f"duplicate matches each){probes}, the highest over the seeds (each seed's in parentheses); "
        "lower is less exploitable."
    )


def markdown(summary: dict, command: str) -> str:
    """leaderboard.md."""
    lines = _preamble(summary, command) + _algorithms_table(summary) + _agents_table(summary)
    return "\n".join(lines + _notes(summary)) + "\n"


def _preamble(summary: dict, command: str) -> list[str]:
    """The title, what the league ran with, its command, and whether its ladder was partial."""
    ladder = summary["ladder"]
    return [
        f"# League: {summary['game']}, {summary['players']} players",
        "",
        f"Ladder version {summary['ladder_version']}: {', '.join(ladder)}. Bradley–Terry Elo anchored at "
        f"{summary['anchor']} = 0, 95% bootstrap intervals over deals. Training budget "
        f"{summary['decisions']:,} decisions per run{_config_said(summary, 'decisions')}; safety cap "
        f"{summary['max_minutes']} minutes; seeds {summary['seeds']}{_config_said(summary, 'seeds')}; "
        f"{summary['matches']} duplicate matches per pair{_config_said(summary, 'matches')}, evaluation seed "
        f"{summary['eval_seed']}; training config `{summary['train_config']}`. " + _exploit_said(summary),
        "",
        f"```\n{command}\n```",
        *(
            [
                "",
                f"**Partial ladder**: the rungs {', '.join(summary['ladder_left_out'])} were left out of "
                "this run (`--rungs`), so these ratings are not comparable with a full ladder's.",
            ]
            if summary.get("ladder_left_out")
            else []
        ),
        "",
    ]


def _algorithms_table(summary: dict) -> list[str]:
    """Each algorithm's figures, mean ± sd over seeds."""
    ladder = summary["ladder"]
    lines = [
        "## Algorithms (mean ± sd over seeds, min–max in parentheses)",
        "",
        "| algorithm | trainer | seeds rated | Elo | "
        + " | ".join(f"score vs {o}" for o in ladder[:2])
        + " | exploit | strongest rung | cut short |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["algorithms"]:
        lines.append(
            f"| {r['algorithm']} | {r['trainer']} | {r['seeds_rated']} / {r['seeds']} | {spread_text(r, 'elo', 0)} | "
            + " | ".join(spread_text(r, f"vs_{o}") for o in ladder[:2])
            + f" | {spread_text(r, 'exploit')} | {spread_text(r, 'rung')} | {r['cut_short']} |"
        )
    return lines


def _agents_table(summary: dict) -> list[str]:
    """Every rated agent's Elo, scores against the ladder, exploitability and strongest rung."""
    ladder = summary["ladder"]
    lines = [
        "",
        "## Every rated agent",
        "",
        "| agent | Elo [95% CI] | "
        + " | ".join(f"vs {o}" for o in ladder)
        + " | decisions | exploit | strongest rung |",
        "|---" * (len(ladder) + 5) + "|",
    ]
    for e in summary["entries"]:
        cells = [
            _ci(e.get(f"vs_{o}"), e.get(f"vs_{o}_lo"), e.get(f"vs_{o}_hi")) if o != e["agent"] else "–"
            for o in ladder
        ]
        decisions = (
            ""
            if e["kind"] == "ladder"
            else f"{e['decisions']:,}" + (" (cut short)" if e["cut_short"] else "")
        )
        exploit = _ci(e.get("exploit"), e.get("exploit_lo"), e.get("exploit_hi")) if "exploit" in e else "–"
        if e.get("exploit_best"):  # which candidate was strongest: the best response or a probe
            exploit += f" {e['exploit_best']}"
        if len(e.get("exploit_by_seed", [])) > 1:  # every seed's strongest score
            exploit += " (" + ", ".join(_f(x) for x in e["exploit_by_seed"]) + ")"
        rung = _ci(e.get("rung"), e.get("rung_lo"), e.get("rung_hi")) + (
            f" {e['rung_name']}" if "rung_name" in e else ""
        )
        lines.append(
            f"| {e['agent']} | {_ci(e['elo'], e['elo_lo'], e['elo_hi'], 0)} | "
            + " | ".join(cells)
            + f" | {decisions} | {exploit} | {rung} |"
        )
    return lines


def _notes(summary: dict) -> list[str]:
    """How to read the tables, then the searches that fell back and the entries that failed."""
    lines = [
        "",
        "The strongest rung is the ladder agent that scores best against a trained checkpoint in the "
        "league's pairs, with that score; at two players it is one of the exploit figure's candidates "
        "(named `rung:SPEC` where it wins), with more players the exploit figure scored every rung "
        "one against the rest itself, and this column is read on its own scale (a pairwise score).",
        "",
        "Scores are the row agent's mean outcome against the column agent (1 win, ½ draw) over "
        "duplicate matches, with 95% intervals over deals. Evaluation is reproducible: the same "
        "checkpoints and seeds give the same games on any machine. Training is not bitwise "
        "reproducible across CPUs, so compare algorithms by their means over seeds.",
    ]
    if summary.get("redeal_failures"):
        lines += ["", "## Searches that fell back", ""]
        lines += [
            f"- {redeal_note(label, r['failures'], r['decisions'])}."
            for label, r in summary["redeal_failures"].items()
        ]
    if summary["errors"]:
        lines += ["", "## Entries that failed", ""]
        lines += [f"- **{e['entry']}** ({e['stage']}): {e['message']}" for e in summary["errors"]]
    return lines


def plot_ratings(path: Path, summary: dict) -> None:
    """Elo with 95% intervals per agent, and per algorithm the mean over seeds with its min–max."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []  # (label, value, low, high, style)
    for e in sorted(summary["entries"], key=lambda e: (e["algorithm"], e["kind"] != "ladder", -e["elo"])):
        if e["kind"] == "ladder":
            rows.append((e["agent"], e["elo"], e["elo_lo"], e["elo_hi"], "ladder"))
    for r in summary["algorithms"]:
        if r["seeds_rated"]:
            rows.append(
                (
                    f"{r['algorithm']} (mean of {r['seeds_rated']})",
                    r["elo_mean"],
                    r["elo_min"],
                    r["elo_max"],
                    "mean",
                )
            )
            for e in summary["entries"]:
                if e["algorithm"] == r["algorithm"]:
                    rows.append((f"  {e['agent']}", e["elo"], e["elo_lo"], e["elo_hi"], "seed"))
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.4 * max(len(rows), 1)))
    colours = {"ladder": "grey", "mean": "C3", "seed": "C0"}
    for y, (_, value, low, high, style) in enumerate(rows):
        lo = value - low if math.isfinite(low) else 0.0
        hi = high - value if math.isfinite(high) else 0.0
        marker = "D" if style == "mean" else "o"
        ax.errorbar([value], [y], xerr=[[lo], [hi]], fmt=marker, color=colours[style], capsize=4)
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.invert_yaxis()
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("Elo (random = 0): agents with 95% CI, algorithm means with min–max over seeds")
    ax.set_title(f"{summary['game']}, ladder v{summary['ladder_version']}")
    fig.tight_layout()
    report._save_figure(fig, path)


def read_curves(summary: dict) -> dict[str, list[dict]]:
    """Per algorithm, each seed's periodic scores from `<run>/evaluation.csv` (absent: none)."""
    curves: dict[str, list[dict]] = {}
    for t in summary["trainings"]:
        path = Path(t["run_dir"]) / "evaluation.csv"
        if t["status"] == "error" or not path.exists():
            continue
        rows = [row for row in _csv_rows(path) if _curve_row(row)]
        if rows:
            curves.setdefault(t["algorithm"], []).append({"seed": t["seed"], "rows": rows})
    return curves


def _curve_row(row: dict) -> bool:
    """Whether a row of evaluation.csv holds what the curves plot (an int and numbers)."""
    try:
        int(row["timesteps"])
        for key in ("score_random", "score_baseline"):
            if row.get(key) not in (None, ""):
                float(row[key])
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _csv_rows(path: Path) -> list[dict]:
    """The rows of a CSV file of a run, read within bounds (none when it is unreadable or no file)."""
    from fowlplay.envs.runtime.untrusted import UntrustedFileError, read_bytes

    try:
        text = read_bytes(path, 256 * 2**20).decode("utf-8", errors="replace")
    except (OSError, UntrustedFileError):
        return []
    return list(csv.DictReader(text.splitlines()))


def plot_curves(path: Path, summary: dict, curves: dict[str, list[dict]]) -> None:
    """Score against random and the baseline over training: each seed thin, the mean over seeds bold."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, opponent in zip(axes, ("random", "baseline")):
        column = f"score_{opponent}"
        for c, (algorithm, runs) in enumerate(sorted(curves.items())):
            series = {}
            for run in runs:
                xs = [int(r["timesteps"]) for r in run["rows"] if r.get(column) not in (None, "")]
                ys = [float(r[column]) for r in run["rows"] if r.get(column) not in (None, "")]
                ax.plot(xs, ys, color=f"C{c}", alpha=0.3, linewidth=0.8)
                for x, y in zip(xs, ys):
                    series.setdefault(x, []).append(y)
            xs = sorted(x for x in series if len(series[x]) == len(runs))
            ax.plot(
                xs,
                [np.mean(series[x]) for x in xs],
                color=f"C{c}",
                linewidth=2,
                label=f"{algorithm} (mean of {len(runs)})",
            )
        ax.set_title(f"vs {opponent}")
        ax.set_xlabel("learner decisions")
        # The trainers' evaluation wins a game only by beating every other seat: an agent equal to
        # its opponents scores 1 / players (1/3 in 3-player Murray), not 1/2.
        ax.axhline(1 / summary["players"], color="grey", linewidth=0.8, linestyle="--")
    axes[0].set_ylabel(f"score (periodic evaluation during training; dashed: parity, 1/{summary['players']})")
    axes[0].legend()
    fig.suptitle(summary["game"])
    fig.tight_layout()
    report._save_figure(fig, path)


def write_outputs(summary: dict, out: Path, command: str | None = None) -> None:
    """leaderboard.md, leaderboard.csv, algorithms.csv, league.json and the plots."""
    command = command or summary.get("command") or f"{PROG} --game {summary['game']} --out {out}"
    summary["command"] = command
    report.write_json(out / "league.json", summary)
    report.write_csv(out / "leaderboard.csv", summary["entries"])
    report.write_csv(out / "algorithms.csv", summary["algorithms"])
    report.write_text(out / "leaderboard.md", markdown(summary, command))
    plot_ratings(out / "ratings.png", summary)
    curves = read_curves(summary)
    if curves:
        plot_curves(out / "learning_curves.png", summary, curves)
