"""`python -m fowlplay.envs.checks`: the same as `fowlplay-check`."""

import sys

from fowlplay.envs.checks.cli import main

sys.exit(main())
