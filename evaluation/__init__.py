"""Evaluation: agents from specs, duplicate round-robin tournaments, statistics, ratings, reports.

    fowlplay-eval --game chicken_v1 --agents random baseline --matches 200 --out runs/eval

or from Python: `fowlplay.evaluation.tournament.evaluate(EvalConfig(...), out_dir)`. See docs/evaluation.md.
"""

if __name__ != "fowlplay.evaluation":  # imported as a bare top-level name from a checkout's root
    raise ImportError(
        "this folder is the package fowlplay.evaluation; import it by that name (from fowlplay import evaluation), "
        "not as `evaluation`: a bare `evaluation` would load a second, separate copy of every module"
    )
