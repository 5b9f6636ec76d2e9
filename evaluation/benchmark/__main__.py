"""`python -m fowlplay.evaluation.benchmark`: `fowlplay-bench`."""

from fowlplay.evaluation.benchmark.cli import main

raise SystemExit(main())
