"""Evaluation: agents from specs, duplicate round-robin tournaments, statistics, ratings, reports.

    fowlplay-eval --game chicken_v0 --agents random baseline --matches 200 --out runs/eval

or from Python: `evaluation.tournament.evaluate(EvalConfig(...), out_dir)`. See docs/evaluation.md.
"""
