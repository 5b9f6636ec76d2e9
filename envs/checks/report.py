"""The result of a check run: one line per check, with the evidence a failure needs to be replayed."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, SKIPPED = "pass", "fail", "skipped"
STATUSES = (PASS, FAIL, SKIPPED)


@dataclass
class CheckResult:
    """One check: its stable name, pass/fail/skipped, a one-line message and, for a failure, evidence."""

    name: str
    status: str
    message: str
    #: Where it failed: seed, step, agent, action (whichever apply), enough to replay it.
    evidence: dict[str, Any] = field(default_factory=dict)
    #: Measured facts a caller may assert on (counts, `zero_sum`, returns seen), never needed to read the line.
    data: dict[str, Any] = field(default_factory=dict)
    #: True for a check of fowlplay's own contract, beyond PettingZoo's API (a correct PettingZoo env may
    #: fail it); False for PettingZoo's API and its action-mask convention.
    convention: bool = False

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {list(STATUSES)}")

    @property
    def failed(self) -> bool:
        """True for a failed check (a skip is not a failure)."""
        return self.status == FAIL


@dataclass
class CheckReport:
    """Every check of one run, in the order they ran, and what was run (target and budgets)."""

    target: str
    settings: dict[str, Any]
    results: list[CheckResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no check failed (skipped checks are allowed)."""
        return not any(r.failed for r in self.results)

    @property
    def failed(self) -> list[str]:
        """Names of the failed checks."""
        return [r.name for r in self.results if r.failed]

    @property
    def api_ok(self) -> bool:
        """True when no check of PettingZoo's API failed (fowlplay conventions may have)."""
        return not any(r.failed and not r.convention for r in self.results)

    def __getitem__(self, name: str) -> CheckResult:
        """The result of the check called `name`."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError(f"no check named {name!r}; checks run: {[r.name for r in self.results]}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values: target, settings, ok and every result."""
        return {
            "target": self.target,
            "settings": dict(self.settings),
            "ok": self.ok,
            "api_ok": self.api_ok,
            "results": [_plain(asdict(r)) for r in self.results],
        }

    def to_json(self, indent: int | None = 2) -> str:
        """`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def table(self) -> str:
        """A readable text table: status, check name and message, then the evidence of each failure;
        the checks of fowlplay's own conventions in a section of their own, after PettingZoo's API."""
        width = max((len(r.name) for r in self.results), default=5)
        lines = [f"fowlplay-check {self.target}  ({_settings_line(self.settings)})"]
        api = [r for r in self.results if not r.convention]
        conventions = [r for r in self.results if r.convention]
        if conventions:
            lines.append("  PettingZoo's API and its action-mask convention:")
        for r in api:
            lines.extend(_result_lines(r, width))
        if conventions:
            lines.append(f"  {CONVENTIONS_HEADING}:")
        for r in conventions:
            lines.extend(_result_lines(r, width))
        counts = {s: sum(r.status == s for r in self.results) for s in STATUSES}
        verdict = "OK" if self.ok else "FAILED"
        line = f"{verdict}: {counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIPPED]} skipped"
        if conventions and not self.ok:
            broken = [r.name for r in conventions if r.failed]
            api_said = "OK" if self.api_ok else "failed " + ", ".join(r.name for r in api if r.failed)
            line += f" (PettingZoo's API: {api_said}; fowlplay conventions: "
            line += ("failed " + ", ".join(broken) if broken else "none failed") + ")"
        lines.append(line)
        return "\n".join(lines)

    __str__ = table


#: The heading of the conventions section of a report's table.
CONVENTIONS_HEADING = "fowlplay conventions, beyond PettingZoo's API (a correct PettingZoo env may fail them)"


def _result_lines(r: CheckResult, width: int) -> list[str]:
    lines = [f"  {r.status.upper():<7} {r.name:<{width}}  {r.message}"]
    if r.evidence:
        lines.append(f"  {'':<7} {'':<{width}}  evidence: {_evidence_line(r.evidence)}")
    return lines


def _settings_line(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items() if v is not None)


def _evidence_line(evidence: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in evidence.items())


def _plain(value: Any) -> Any:
    """Numpy scalars and arrays, tuples and other odd values as JSON-ready values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return value.tolist()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def one_line(err: BaseException) -> str:
    """The first line of an error's text (its repr when it has none), as a report shows it."""
    text = str(err).strip().splitlines()
    return text[0] if text else repr(err)
