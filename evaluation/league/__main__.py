"""`python -m fowlplay.evaluation.league`: `fowlplay-league` in a checkout without the console script."""

import sys

from fowlplay.evaluation.league import main

sys.exit(main())
