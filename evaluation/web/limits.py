"""What one request to the web table may ask for, checked before any work or memory is spent.

A web page the user opens can make their browser post to the table's port, and a run folder may
come from someone else: so every value that sizes the work of a request (a search budget, a player
count, a rule option that sizes the deck or the board, a target) has a limit here, in a play form
and in a run.json alike, and every file read has a size limit (`evaluation.web.runs`). A value over
its limit is a 400 (a form) or a 422 (a run folder) whose one line names the limit; docs/web.md
lists them.
"""

from __future__ import annotations

import dataclasses
import re

from fowlplay import envs

#: Simulations (or any search budget) an agent may spend on one decision at a web table: one
#: decision of ismcts:200 took 1.3 to 8.8 s at each game's largest table on a busy 2-core machine
#: (docs/web.md), and a request stops its agents only between two decisions.
MAX_SEARCH_BUDGET = 200
#: Seconds the agents of a table may think in one request; the rest waits for the next request.
MAX_AGENT_SECONDS = 20.0
#: An integer rule option may be at most this many times its default (and at least up to
#: `MIN_OPTION_CAP`): a deck, a board, a target or a cap a few times the game's own, never a million.
OPTION_FACTOR = 4
MIN_OPTION_CAP = 16
#: An option whose default is None (the game picks it by player count): its integers at most this.
UNSET_OPTION_CAP = 64
#: The longest option value, rule-options field and agent spec a request may send.
MAX_OPTION_TEXT = 100
MAX_OPTIONS_FIELD = 1_000
MAX_SPEC_TEXT = 300
#: The largest seed of a deal.
MAX_SEED = 2**31 - 1
#: Agents a run.json may list.
MAX_RUN_AGENTS = 64


class LimitError(ValueError):
    """A value above (or outside) its limit; the message names the value and the limit."""


def option_fields(game: str) -> dict[str, object]:
    """The rule options `game` takes, with their defaults (num_players is a field of its own)."""
    cls = envs.env_module(game).raw_env.options_cls
    fields = {}
    for item in dataclasses.fields(cls):
        if item.name == "num_players":
            continue
        if item.default is not dataclasses.MISSING:
            fields[item.name] = item.default
        else:
            fields[item.name] = item.default_factory()
    return fields


def _integer_cap(default: object) -> int:
    if isinstance(default, bool) or default is None:
        return UNSET_OPTION_CAP
    if isinstance(default, int):
        return max(OPTION_FACTOR * default, MIN_OPTION_CAP)
    if isinstance(default, tuple) and default:
        return max(OPTION_FACTOR * max(default), MIN_OPTION_CAP)
    return UNSET_OPTION_CAP


def _check_integer(game: str, key: str, value: object, cap: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not -cap <= value <= cap:
        raise LimitError(
            f"{game} option {key}={str(value)[:30]}: give an integer of at most {cap} here "
            f"({OPTION_FACTOR} times the game's default)"
        )


def check_options(game: str, options: object) -> dict:
    """`options` when every key is a rule option of `game` and every value within its limit."""
    if not isinstance(options, dict):
        raise LimitError(f"{game} options must be KEY=VALUE pairs; got {str(options)[:40]}")
    allowed = option_fields(game)
    for key, value in options.items():
        if key not in allowed:
            raise LimitError(
                f"{game} has no rule option {str(key)[:40]!r}; its options: {', '.join(allowed)}"
            )
        default = allowed[key]
        cap = _integer_cap(default)
        if isinstance(default, str):
            if not isinstance(value, str) or len(value) > MAX_OPTION_TEXT:
                raise LimitError(f"{game} option {key}: give a word such as {default!r}")
        elif isinstance(value, (list, tuple)):
            if not (isinstance(default, tuple) or default is None):
                raise LimitError(f"{game} option {key}: give one integer, not a list")
            if len(value) > UNSET_OPTION_CAP:
                raise LimitError(f"{game} option {key}: give a list of at most {UNSET_OPTION_CAP} integers")
            for item in value:
                _check_integer(game, key, item, cap)
        else:
            _check_integer(game, key, value, cap)
    return options


def check_game(game: object) -> str:
    """`game` when it names a game of the package."""
    if not isinstance(game, str) or game not in envs.ENV_NAMES:
        raise LimitError(f"unknown game {str(game)[:40]!r}; allowed: {', '.join(envs.ENV_NAMES)}")
    return game


def check_players(game: str, players: object) -> int:
    """`players` when `game` is played by that many."""
    counts = envs.player_counts(game)
    if isinstance(players, bool) or not isinstance(players, int) or players not in counts:
        raise LimitError(
            f"players {str(players)[:20]!r} is not allowed for {game}; allowed: {counts.start}..{counts.stop - 1}"
        )
    return players


def option_text_problem(text: str) -> str | None:
    """Why a rule-option value's text is refused before it is parsed (too long, nested), or None."""
    if len(text) > MAX_OPTION_TEXT:
        return f"its value is longer than {MAX_OPTION_TEXT} characters"
    if re.search(r"[\[{][^\]}]*[\[{]", text):
        return "its value nests lists; give one list of integers, such as [5,10,15]"
    return None
