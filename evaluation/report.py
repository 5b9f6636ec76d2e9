"""Writing an evaluation's results: pairwise.csv, ratings.csv, summary.json, report.md and plots."""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
from pathlib import Path

from fowlplay.envs.runtime.files import new_file_mode


def _plain(value):
    """JSON-safe values: NaN and infinities become null, numpy scalars plain numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class OutputError(OSError):
    """An output file that could not be written (a full disk, say); the message names it."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.filename = str(path)
        self.message = f"cannot write {path}: {cause.strerror or cause}"

    def __str__(self) -> str:
        return self.message


def _atomic_write(path: Path, text: str) -> None:
    """Write a whole file or nothing (temp file + rename), so a crash never leaves half a report.

    A failure (a full disk) raises `OutputError` naming the file.
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:
        raise OutputError(path, exc) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, new_file_mode())  # mkstemp's is 0600: a report gets a new file's usual mode
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(path, exc) from exc
        raise


def write_text(path: Path, text: str) -> None:
    """A text file (report.md), written whole or not at all."""
    _atomic_write(path, text)


def _save_figure(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    try:
        fig.savefig(path, dpi=120)
    except OSError as exc:
        raise OutputError(path, exc) from exc
    finally:
        plt.close(fig)


def _cell(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return "" if not math.isfinite(value) else repr(round(value, 6))
    return "" if value is None else str(value)


def write_csv(path: Path, records: list[dict]) -> None:
    """One row per record, a column per key of any record (in the order keys first appear), each
    value under its own key's column; a key a record lacks, None and NaN are empty cells.

    Records may differ in keys: a league's ladder rungs have no training columns, and each agent has
    a score against every agent but itself.
    """
    import io

    buffer = io.StringIO()
    if records:
        columns = list(dict.fromkeys(key for record in records for key in record))
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for record in records:
            writer.writerow([_cell(record.get(key)) for key in columns])
    _atomic_write(path, buffer.getvalue())


def write_json(path: Path, data: dict) -> None:
    """Pretty JSON with NaN as null."""
    _atomic_write(path, json.dumps(_plain(data), indent=2) + "\n")


def _num(x: float, digits: int = 3) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _ci(x: float, lo: float, hi: float, digits: int = 3) -> str:
    if lo is None or not math.isfinite(lo):
        return _num(x, digits)
    return f"{_num(x, digits)} [{_num(lo, digits)}, {_num(hi, digits)}]"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _models(agents: list[dict]) -> list[str]:
    """One line per checkpoint agent: the weights file it played, their hash and timesteps."""
    lines = [
        f"- `{a['label']}` played `{m['file']}` (weights sha256 `{m['weights_sha256'][:16]}`, "
        f"{m['timesteps']} timesteps)"
        for a in agents
        if (m := a.get("model"))
    ]
    return [*lines, ""] if lines else []


def markdown(summary: dict) -> str:
    """report.md: the configuration, pairwise results, score matrix, ratings, games and latency."""
    out = _preamble(summary) + _pairwise(summary) + _ratings(summary) + _games(summary) + _agents(summary)
    return "\n".join(out)


def _preamble(summary: dict) -> list[str]:
    """The title, the command that reproduces the report, the settings, and the agents."""
    cfg = summary["config"]
    players = cfg["players"]
    return [
        f"# Evaluation: {cfg['game']}, {players} players",
        "",
        f"Reproduce: `{summary['command']}`",
        "",
        f"{cfg['matches']} duplicate matches per table (seating '{cfg['seating']}'), "
        f"{summary['games']['games']} games, root seed {cfg['seed']}, "
        f"fowlplay {summary['versions']['fowlplay']}. Intervals are 95%: Student t over deals for "
        "scores and returns, percentile bootstrap over deals for ratings.",
        "",
        "Agents: " + ", ".join(f"`{a['label']}` ({a['spec']})" for a in cfg["agents"]),
        "",
        *_models(cfg["agents"]),
    ]


def _pairwise(summary: dict) -> list[str]:
    """Every agent's results against every opponent, then the score matrix."""
    players = summary["config"]["players"]
    labels = [a["label"] for a in summary["config"]["agents"]]
    out = [
        "## Pairwise results",
        "",
        "Score = (W + 0.5·D) / N for the row agent against the column opponent; a duplicate match "
        "counts as won when the row agent's score over its rotations is above 0.5; seat columns "
        "give the row agent's score when it held that seat.",
        "",
    ]
    seat_headers = [f"seat {s}" for s in range(players)]
    rows = []
    for r in summary["pairwise"]:
        rows.append(
            [
                r["agent"],
                r["opponent"],
                str(r["matches"]),
                f"{r['match_wins']}/{r['match_draws']}/{r['match_losses']}",
                str(r["games"]),
                f"{r['wins']}/{r['draws']}/{r['losses']}",
                _ci(r["score"], r["score_lo"], r["score_hi"]),
                _ci(r["mean_return"], r["return_lo"], r["return_hi"]),
                *[_num(r[f"seat{s}_score"]) for s in range(players)],
                _num(r["mean_length"], 1),
            ]
        )
    out += [
        _table(
            [
                "agent",
                "opponent",
                "matches",
                "matches W/D/L",
                "games",
                "W/D/L",
                "score",
                "mean return",
                *seat_headers,
                "length",
            ],
            rows,
        ),
        "",
        "### Score matrix (row vs column)",
        "",
    ]
    scores = {(r["agent"], r["opponent"]): r["score"] for r in summary["pairwise"]}
    matrix = [[a, *[_num(scores.get((a, b), math.nan)) for b in labels]] for a in labels]
    return [*out, _table(["", *labels], matrix), ""]


def _ratings(summary: dict) -> list[str]:
    """The Elo ratings (and OpenSkill's, where the summary has them)."""
    rating_rows = []
    has_skill = any("openskill_mu" in r for r in summary["ratings"])
    for r in summary["ratings"]:
        row = [
            r["agent"] + (" (anchor)" if r["anchor"] else ""),
            str(r["games"]),
            _ci(r["elo"], r["elo_lo"], r["elo_hi"], 0),
        ]
        if has_skill:
            row += [
                _num(r["openskill_mu"], 2),
                _num(r["openskill_sigma"], 2),
                _num(r["openskill_ordinal"], 2),
            ]
        rating_rows.append(row)
    header = ["agent", "games", "Elo (Bradley–Terry) [95% bootstrap]"]
    if has_skill:
        header += ["OpenSkill mu", "sigma", "ordinal (mu − 3σ)"]
    return ["## Ratings", "", _table(header, rating_rows), ""]


def _games(summary: dict) -> list[str]:
    """How the games ended and how long they ran."""
    g = summary["games"]
    return [
        "## Games",
        "",
        _table(
            [
                "games",
                "terminated",
                "truncated",
                "forfeited",
                "illegal actions",
                "length (decisions)",
                "min",
                "max",
            ],
            [
                [
                    str(g["games"]),
                    str(g["terminated"]),
                    str(g["truncated"]),
                    str(g["forfeited"]),
                    str(g["illegal_actions"]),
                    _ci(g["length_mean"], g["length_lo"], g["length_hi"], 1),
                    str(g["length_min"]),
                    str(g["length_max"]),
                ]
            ],
        ),
        "",
    ]


def _agents(summary: dict) -> list[str]:
    """Each agent's games, decisions, score against all and decision time; the notes; the pictures."""
    latency = {r["agent"]: r for r in summary["timing"]["latency"]}
    return [
        "## Agents",
        "",
        _table(
            ["agent", "games", "decisions", "illegal actions", "score vs all", "mean decision time (µs)"],
            [
                [
                    a["agent"],
                    str(a["games"]),
                    str(a["decisions"]),
                    str(a["illegal_actions"]),
                    _ci(a["score_vs_all"], a["score_vs_all_lo"], a["score_vs_all_hi"]),
                    _num(latency[a["agent"]]["mean_us"], 1),
                ]
                for a in summary["agents"]
            ],
        ),
        "",
        *(["## Notes", "", *[f"- {n}" for n in summary["notes"]], ""] if summary["notes"] else []),
        "![pairwise scores](pairwise_scores.png)",
        "",
        "![ratings](ratings.png)",
        "",
    ]


def plot_scores(path: Path, summary: dict) -> None:
    """Heatmap of the pairwise score matrix (row agent's score against the column agent)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = [a["label"] for a in summary["config"]["agents"]]
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.full((len(labels), len(labels)), np.nan)
    for r in summary["pairwise"]:
        matrix[index[r["agent"]], index[r["opponent"]]] = r["score"]
    size = 1.2 + 0.9 * len(labels)
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    image = ax.imshow(matrix, vmin=0.0, vmax=1.0, cmap="RdBu")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(len(labels)):
        for j in range(len(labels)):
            if np.isfinite(matrix[i, j]):
                ax.text(j, i, f"{matrix[i, j]:.2f}", ha="center", va="center", fontsize=9)
    fig.colorbar(image, ax=ax, label="score (W + 0.5·D) / N")
    ax.set_title(f"{summary['config']['game']}, {summary['config']['players']} players")
    fig.tight_layout()
    _save_figure(fig, path)


def plot_ratings(path: Path, summary: dict) -> None:
    """Elo ratings with their 95% bootstrap intervals, best first."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratings = sorted(summary["ratings"], key=lambda r: r["elo"], reverse=True)
    labels = [r["agent"] for r in ratings]
    elo = [r["elo"] for r in ratings]
    low = [r["elo"] - r["elo_lo"] if math.isfinite(r["elo_lo"]) else 0.0 for r in ratings]
    high = [r["elo_hi"] - r["elo"] if math.isfinite(r["elo_hi"]) else 0.0 for r in ratings]
    fig, ax = plt.subplots(figsize=(6.5, 1.2 + 0.45 * len(labels)))
    ax.errorbar(elo, range(len(labels)), xerr=[low, high], fmt="o", capsize=4)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("Elo (Bradley–Terry), 95% bootstrap interval")
    ax.set_title(f"{summary['config']['game']}, {summary['config']['players']} players")
    fig.tight_layout()
    _save_figure(fig, path)
