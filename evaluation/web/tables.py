"""The games the web table holds: a person's game against agents, and replays of recorded games.

Everything here is plain Python over the envs and the evaluation harness (no web framework): the
server (`evaluation.web.app`) turns a request into a call and a `WebError` into a page with its
status. A play table keeps the whole game on the server and hands out only the human seat's view
(`seat_page`); a replay re-plays one game of an evaluation's games.jsonl from the run's own record
(its agents and seeds) and checks that it ends as recorded.
"""

from __future__ import annotations

import io
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from fowlplay import envs
from fowlplay.envs.core.picture import draw, outcome
from fowlplay.evaluation.narration import Narrator, narrated_step
from fowlplay.evaluation.web import limits
from fowlplay.evaluation.web.limits import (
    MAX_OPTIONS_FIELD,
    MAX_SEED,
    LimitError,
    check_options,
    option_text_problem,
)
from fowlplay.evaluation.web.runs import (
    RunsFolder,
    WebError,
    checked_spec,
    read_rows,
    run_record,
    same_play,
)

#: Tables kept at once; the one untouched longest goes first when a new one would pass this.
MAX_TABLES = 64
#: Replays kept in memory (each holds a copy of the game at every step).
MAX_REPLAYS = 8
#: Seconds a replay may take to re-play its game, and the decisions it may hold (a frame, a copy
#: of the game, for each).
MAX_REPLAY_SECONDS = 60.0
MAX_REPLAY_DECISIONS = 10_000
#: A game key in a URL: table-match-arrangement.
GAME_KEY = re.compile(r"([0-9]{1,9})-([0-9]{1,9})-([0-9]{1,9})")
#: What a viewer may be called in a replay URL.
VIEWER = re.compile(r"spectator|umpire|player_([0-9]{1,2})")


def png(image) -> bytes:
    """A Pillow image as PNG bytes."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def rule_options(text: str, game: str) -> dict:
    """'KEY=VALUE KEY=VALUE' (values read as YAML, as `fowlplay-eval --option`) as a dict, each
    option one `game` takes and within the web's limits (`limits.check_options`)."""
    from fowlplay.training.cli import yaml_value

    if len(text) > MAX_OPTIONS_FIELD:
        raise WebError(400, f"the rule options are at most {MAX_OPTIONS_FIELD} characters")
    options = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise WebError(400, f"rule option {item[:40]!r} is not KEY=VALUE (for example target=30)")
        if key == "num_players":
            raise WebError(400, "give the player count in its own field, not as the option num_players")
        problem = option_text_problem(value)
        if problem:
            raise WebError(400, f"rule option {key}: {problem}")
        try:
            options[key] = yaml_value(key, value)
        except (ValueError, RecursionError) as err:
            raise WebError(400, str(err)[:200]) from None
    try:
        return check_options(game, options)
    except LimitError as err:
        raise WebError(400, str(err)) from None


def own_moves_once(lines: list[str], seat: int) -> list[str]:
    """What `seat` was told, each of its own moves once: "you (player_S): bid 4" is left out where
    the table's own line for it ("player_S bids 4") follows."""
    mine, public = f"you (player_{seat}): ", f"player_{seat} "
    return [
        line
        for index, line in enumerate(lines)
        if not (line.startswith(mine) and index + 1 < len(lines) and lines[index + 1].startswith(public))
    ]


# ----- a person's game ----------------------------------------------------------------------------
@dataclass
class PlayTable:
    """One game between a person (seat `human`) and agents, held on the server."""

    id: str
    game_name: str
    env: object
    human: int
    specs: list[str]
    agents: dict
    narrator: Narrator
    #: The seed of the deal (shown once the game is over, so that it can be played again).
    seed: int = 0
    decisions: int = 0
    error: str = ""
    #: A refused move's message, shown once by the next page (a refused move redirects to the page).
    notice: str = ""
    #: True when the agents stopped thinking at a request's time limit, before the human's turn.
    waiting: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)

    @property
    def game(self):
        """The engine's game in progress."""
        return self.env.unwrapped.game

    @property
    def agent(self) -> str:
        """The human seat's agent name."""
        return f"player_{self.human}"

    @property
    def over(self) -> bool:
        """True once the game ended (or an agent broke it)."""
        return self.game.over or bool(self.error)

    def legal(self) -> list[tuple[int, str]]:
        """The human's legal actions by id and name, when it is their decision."""
        if self.over or self.game.current_player != self.human:
            return []
        return [(int(a), self.env.action_name(int(a))) for a in np.flatnonzero(self.game.legal_mask())]

    def move(self, action_text: str, at: str) -> None:
        """The human's move (an action id typed into the form at decision `at`), then the agents'."""
        if self.over:
            raise WebError(409, "the game is over: start a new one")
        if self.waiting:
            raise WebError(409, "the other seats are still thinking: wait for your turn")
        if not re.fullmatch(r"[0-9]{1,6}", at or ""):
            raise WebError(400, f"the move names no decision number (got {str(at)[:20]!r})")
        if int(at) != self.decisions:
            raise WebError(
                409, f"this page shows decision {at}, the game is at decision {self.decisions}: reload it"
            )
        legal = self.legal()
        if not re.fullmatch(r"[0-9]{1,6}", action_text or ""):
            raise WebError(
                400, f"the move {str(action_text)[:20]!r} is not an action id; legal: {_named(legal)}"
            )
        action = int(action_text)
        if action not in dict(legal):
            raise WebError(409, f"action {action} is not legal now; legal: {_named(legal)}")
        narrated_step(self.env, self.narrator, action)
        self.decisions += 1

    def advance(self, gone=lambda: False, seconds: float | None = None) -> None:
        """Let the agents move until it is the human's decision or the game is over; they stop
        between two decisions once `seconds` (`MAX_AGENT_SECONDS`) have passed or `gone()` says
        the client left (`waiting` then says so, and the next request goes on)."""
        deadline = time.monotonic() + (limits.MAX_AGENT_SECONDS if seconds is None else seconds)
        self.waiting = False
        while not self.over and self.game.current_player != self.human:
            if time.monotonic() > deadline or gone():
                self.waiting = True
                return
            seat = self.game.current_player
            obs = self.env.observe(f"player_{seat}")
            action = int(self.agents[seat].act(obs["observation"], obs["action_mask"]))
            if not (0 <= action < obs["action_mask"].shape[0] and obs["action_mask"][action]):
                self.error = (
                    f"player_{seat} ({self.specs[seat]}) chose the illegal action {action}: game stopped"
                )
                return
            narrated_step(self.env, self.narrator, action)
            self.decisions += 1

    def picture(self) -> bytes:
        """The human seat's picture of the table; the whole table once the game is over."""
        return png(draw(self.game, self.human, reveal=self.over))

    def page(self) -> dict:
        """Everything the human seat's page shows: its own view only while the game runs."""
        game = self.game
        # Once the game is over nothing is hidden any more: the umpire's table.
        view = game.render() if self.over else self.env.view(self.agent)
        result = ""
        if self.error:
            result = self.error
        elif game.over:
            returns = game.returns()
            mine = returns[self.human]
            result = f"{outcome(game)}; your reward {mine:+.2f}" + (
                " (cut by the game's cap)" if game.truncated else ""
            )
        if self.over:
            result += f". Deal seed {self.seed}: give it to play the same deal again."
        return {
            "id": self.id,
            "game": self.game_name,
            "seat": self.agent,
            "seats": [f"player_{s} ({spec})" for s, spec in enumerate(self.specs)],
            "decisions": self.decisions,
            "over": self.over,
            "result": result,
            "view": view,
            "decision": "" if self.over or game.current_player != self.human else self.env.decision(),
            "legal": self.legal(),
            "told": own_moves_once(self.narrator.history[self.human], self.human),
            "seed": self.seed,
            "waiting": self.waiting,
        }


def _named(legal: list[tuple[int, str]]) -> str:
    shown = ", ".join(f"{a} ({name})" for a, name in legal[:20])
    return (shown + (", ..." if len(legal) > 20 else "")) or "none (it is not your decision)"


class Tables:
    """The play tables of one server, by id (a random token in the URL); thread safe."""

    def __init__(self, runs: RunsFolder, limit: int = MAX_TABLES) -> None:
        self.runs, self.limit = runs, limit
        self._tables: OrderedDict[str, PlayTable] = OrderedDict()
        self._lock = threading.Lock()

    def new(
        self, game: str, players: str, seat: str, opponents: str, seed: str, options: str = ""
    ) -> PlayTable:
        """A new game from the form's fields (each checked, with a message naming what is allowed);
        no seed (an empty field) deals a fresh random one, no player count the game's smallest. The
        agents have not moved yet (`advance`)."""
        from fowlplay.evaluation.agents import AgentSpecError, build_agent, resolve_spec

        if game not in envs.ENV_NAMES:
            raise WebError(400, f"unknown game {str(game)[:40]!r}; allowed: {', '.join(envs.ENV_NAMES)}")
        counts = envs.player_counts(game)
        n = _count(players or str(counts.start), "players", counts)
        human = _count(seat or "0", "your seat", range(n))
        seed_value = _count(seed, "seed", range(MAX_SEED + 1)) if seed else secrets.randbelow(MAX_SEED + 1)
        texts = (opponents or "").split()
        if len(texts) == 1:
            texts = texts * (n - 1)
        if len(texts) != n - 1:
            raise WebError(
                400,
                f"give one agent spec for every other seat, or one for all of them ({n - 1} needed, "
                f"{len(texts)} given)",
            )
        specs = [checked_spec(t, self.runs) for t in texts]
        try:
            env = envs.make(game, num_players=n, **rule_options(options, game))
        except (TypeError, ValueError, OverflowError) as err:
            raise WebError(400, f"{game}: {err}") from None
        env.reset(seed=seed_value)
        agents, labels, others = {}, [], iter(zip(specs, texts))
        for s in range(n):
            if s == human:
                labels.append("you")
                continue
            spec, text = next(others)
            try:
                agents[s] = build_agent(resolve_spec(spec, env), env, seed=seed_value + s + 1)
            except (AgentSpecError, ValueError) as err:
                raise WebError(400, str(err)) from None
            labels.append(text)
        table = PlayTable(
            secrets.token_urlsafe(12),
            game,
            env,
            human,
            labels,
            agents,
            Narrator(env.unwrapped.game),
            seed_value,
        )
        with self._lock:
            self._tables[table.id] = table
            while len(self._tables) > self.limit:
                self._tables.popitem(last=False)
        return table

    def get(self, table_id: str) -> PlayTable:
        """The table `table_id`, or a 404."""
        with self._lock:
            table = self._tables.get(table_id)
            if table is None:
                raise WebError(
                    404, "no such game on this server (it may have ended long ago): start a new one"
                )
            self._tables.move_to_end(table_id)
        table.touched = time.monotonic()
        return table


def _count(text, what: str, allowed: range) -> int:
    text = str(text if text is not None else "").strip()
    if not re.fullmatch(r"[0-9]{1,10}", text) or int(text) not in allowed:
        raise WebError(
            400, f"{what} {text[:20]!r} is not allowed; allowed: {allowed.start}..{allowed.stop - 1}"
        )
    return int(text)


# ----- replays of recorded games --------------------------------------------------------------------
@dataclass
class Frame:
    """The game after some decisions, and what each viewer was told of the last one."""

    game: object
    told: dict


@dataclass
class Replay:
    """A recorded game re-played: a frame per decision (frame 0 is the deal)."""

    run: str
    key: tuple[int, int, int]
    game_name: str
    seats: list[str]
    frames: list[Frame]
    actions: list[tuple[int, str]]
    #: The game's observer: a seat's text view of a frame (`observer.view(game, seat)`).
    observer: object = None

    def frame(self, step: int) -> Frame:
        """Frame `step`, or a 404 naming the steps there are."""
        if not 0 <= step < len(self.frames):
            raise WebError(404, f"step {step} is not in this game; steps: 0..{len(self.frames) - 1}")
        return self.frames[step]

    def told(self, step: int, viewer: int | None) -> list[str]:
        """Every line `viewer` (None: a spectator) was told up to `step`."""
        lines = []
        for frame in self.frames[1 : step + 1]:
            lines += frame.told[viewer]
        return lines


def parse_viewer(text: str, players: int) -> tuple[int | None, bool]:
    """'spectator', 'umpire' or 'player_K' as (seat or None, reveal)."""
    match = VIEWER.fullmatch(text or "spectator")
    if not match or (match.group(1) is not None and int(match.group(1)) >= players):
        seats = ", ".join(f"player_{s}" for s in range(players))
        raise WebError(400, f"viewer {str(text)[:30]!r} is not allowed; allowed: spectator, umpire, {seats}")
    if match.group(0) == "umpire":
        return None, True
    return (None if match.group(1) is None else int(match.group(1))), False


def parse_key(text: str) -> tuple[int, int, int]:
    """A game key 'table-match-arrangement' from a URL."""
    match = GAME_KEY.fullmatch(text or "")
    if not match:
        raise WebError(400, f"game {str(text)[:30]!r} is not TABLE-MATCH-ARRANGEMENT (for example 0-3-1)")
    return tuple(int(g) for g in match.groups())


class _Recorder:
    """An agent that plays as the wrapped one and notes each action (in `actions`); it stops the
    game (`stopped`) once `deadline` passed or `gone()` says the client left."""

    def __init__(self, agent, actions: list, deadline: float, gone, stopped: list) -> None:
        self.agent, self.actions = agent, actions
        self.deadline, self.gone, self.stopped = deadline, gone, stopped

    def reset(self, seed=None) -> None:
        self.agent.reset(seed)

    def act(self, observation, mask) -> int:
        if time.monotonic() > self.deadline or self.gone() or len(self.actions) >= MAX_REPLAY_DECISIONS:
            self.stopped.append(True)
            raise TimeoutError("the replay ran out of time")
        action = self.agent.act(observation, mask)
        self.actions.append(int(action))
        return action


def replay(folder: Path, key: tuple[int, int, int], runs: RunsFolder, gone=lambda: False) -> Replay:
    """Re-play game `key` of the evaluation in `folder` exactly as it was played, frame by frame
    (within `MAX_REPLAY_SECONDS`, and only while `gone()` is false)."""
    from fowlplay.evaluation.agents import AgentSpecError
    from fowlplay.evaluation.matches import GAMES_FILE, GameTask, TablePlayer

    rows, _ = read_rows(runs, folder / GAMES_FILE, key=key)
    if not rows:
        raise WebError(404, f"game {'-'.join(map(str, key))} is not in this run's {GAMES_FILE}")
    row = rows[0]
    record = run_record(folder, runs)
    if record.fingerprint != row["run"]:
        raise WebError(409, f"this game was not played by the evaluation that {folder.name}/run.json records")
    actions: list[int] = []
    stopped: list[bool] = []
    deadline = time.monotonic() + MAX_REPLAY_SECONDS
    try:
        config = record.config.resolve_agents()
        if not same_play(config.identity(), record.identity):
            raise WebError(
                409,
                "this game was played by another evaluation than the run's record describes (another "
                "fowlplay version, or changed agents): it cannot be re-played exactly",
            )

        class Player(TablePlayer):
            def _agent(self, agent_index, seat):
                return _Recorder(super()._agent(agent_index, seat), actions, deadline, gone, stopped)

        player = Player(config)
        if key[0] >= len(player.layout) or key[2] >= len(player.layout[key[0]]):
            raise WebError(
                404, f"game {'-'.join(map(str, key))} is not a table and seating of this evaluation"
            )
        played = player.play(GameTask(*key))
    except (AgentSpecError, ValueError, OverflowError) as err:
        raise WebError(422, f"the run's agents cannot be rebuilt: {runs._short(err)}") from None
    except TimeoutError:
        stopped.append(True)
    if stopped:
        raise WebError(
            503,
            f"re-playing this game takes longer than {MAX_REPLAY_SECONDS:.0f} s or "
            f"{MAX_REPLAY_DECISIONS:,} decisions: it is not shown",
        )
    if (
        played["returns"] != row["returns"]
        or played.get("error")
        or played["deal_seed"] != row.get("deal_seed")
        or played["seats"] != row["seats"]
        or len(actions) != row.get("length", len(actions))
    ):
        raise WebError(409, "re-playing this game did not end as recorded: it cannot be shown exactly")
    env = config.make_env()
    env.reset(seed=played["deal_seed"])
    narrator = Narrator(env.unwrapped.game)
    frames = [Frame(env.unwrapped.game.clone(), {})]
    named = []
    for action in actions:
        named.append((env.unwrapped.game.current_player, env.action_name(action)))
        told = narrated_step(env, narrator, action)
        frames.append(Frame(env.unwrapped.game.clone(), told))
    return Replay(
        runs.name(folder), key, config.game, list(row["seats"]), frames, named, env.unwrapped.observer
    )


class Replays:
    """Replays re-played so far (the last few kept), by run and game."""

    def __init__(self, runs: RunsFolder, limit: int = MAX_REPLAYS) -> None:
        self.runs, self.limit = runs, limit
        self._cache: OrderedDict[tuple, Replay] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, run: str, game: str, gone=lambda: False) -> Replay:
        """The replay of game `game` of run `run`."""
        folder = self.runs.run(run)
        key = parse_key(game)
        cache_key = (str(folder), key)
        with self._lock:
            found = self._cache.get(cache_key)
            if found is not None:
                self._cache.move_to_end(cache_key)
                return found
        made = replay(folder, key, self.runs, gone)
        with self._lock:
            self._cache[cache_key] = made
            while len(self._cache) > self.limit:
                self._cache.popitem(last=False)
        return made
