"""Typed access to parsed JSON that fails with an InputError naming the exact place.

A place is a JSON path such as `multi_session_dialogues[3].dialogues[2].time`;
keys that are not identifiers are quoted (`["human-annotated QAs"][0].answer`).
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

from ..errors import InputError

TOP = "top level"  # the place of a fault in the document's root value
MAX_LISTED = 20  # faults (and warnings) listed per file; the rest are counted
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_JSON_NAMES = {
    type(None): "null",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}


def at(place: str, key: str | int) -> str:
    """The place of `key` inside `place` (an index for ints, a member for strings)."""
    if isinstance(key, int):
        return f"{place}[{key}]"
    if _IDENT.match(key):
        return f"{place}.{key}" if place else key
    quoted = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'{place}["{quoted}"]'


def kind(value: Any) -> str:
    """The JSON name of a value's type, with a short preview of scalars."""
    name = _JSON_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, (bool, int, float)) or value is None:
        return f"{name} ({value!r})" if value is not None else name
    if isinstance(value, str):
        preview = value if len(value) <= 40 else value[:37] + "..."
        return f"{name} ({preview!r})"
    return name


def expected(types: tuple[type, ...]) -> str:
    names: list[str] = []
    for t in types:
        n = _JSON_NAMES.get(t, t.__name__)
        if n not in names:
            names.append(n)
    return " or ".join(names)


class Reader:
    """Reads fields of one file; every failure is an InputError(file, place, fault).

    Besides raising, a Reader collects: `guard()` records the fault of one
    item so reading goes on with the next, `warn()` records a warning, and
    `raise_faults()` raises every recorded fault as one InputError.
    """

    def __init__(self, file: str):
        self.file = file
        self.faults: list[InputError] = []
        self.fault_count = 0
        self.warnings: list[str] = []
        self.warning_count = 0

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Record an InputError raised in the block instead of propagating it (other errors propagate)."""
        try:
            yield
        except InputError as e:
            self.record(e)

    def record(self, e: InputError) -> None:
        """Keep the faults of `e` (the first MAX_LISTED of the file are listed, the rest counted)."""
        for place, fault in e.faults:
            self.fault_count += 1
            if len(self.faults) < MAX_LISTED:
                self.faults.append(InputError(e.file, place, fault))
        self.fault_count += e.unlisted

    def raise_faults(self) -> None:
        """Raise the recorded faults as one InputError (the first one names it); nothing when none."""
        if self.faults:
            first, *more = self.faults
            raise InputError(first.file, first.place, first.fault, more=more,
                             unlisted=self.fault_count - len(self.faults))

    def warn(self, text: str) -> None:
        """Record a warning (the file is still read); `text` names the place."""
        self.warning_count += 1
        if len(self.warnings) < MAX_LISTED:
            self.warnings.append(text)

    def warning_lines(self) -> tuple[str, ...]:
        """The listed warnings, plus "... and N more warnings" when some were left out."""
        rest = self.warning_count - len(self.warnings)
        return tuple(self.warnings) + ((f"... and {rest} more warning(s)",) if rest else ())

    def fail(self, place: str, fault: str) -> InputError:
        """The error to raise (callers write `raise r.fail(...)` so control flow stays visible)."""
        return InputError(self.file, place or TOP, fault)

    def check(self, value: Any, place: str, types: tuple[type, ...]) -> Any:
        """`value` if it is one of `types` (bool never counts as a number), else an InputError."""
        if isinstance(value, bool) and bool not in types:
            raise self.fail(place, f"expected {expected(types)}, found {kind(value)}")
        if not isinstance(value, types):
            raise self.fail(place, f"expected {expected(types)}, found {kind(value)}")
        return value

    def required(self, obj: dict, key: str, place: str, types: tuple[type, ...]) -> Any:
        """obj[key], which must be present, not null and of one of `types`."""
        if key not in obj:
            raise self.fail(at(place, key), "missing required field")
        return self.check(obj[key], at(place, key), types)

    def optional(self, obj: dict, key: str, place: str, types: tuple[type, ...], default: Any = None) -> Any:
        """obj[key] when present and not null (checked against `types`), else `default`."""
        value = obj.get(key)
        if value is None:
            return default
        return self.check(value, at(place, key), types)

    def text_list(self, obj: dict, key: str, place: str) -> list[str]:
        """A list of strings; a single string counts as a one-element list, absent/null as empty."""
        value = obj.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        self.check(value, at(place, key), (list,))
        for i, item in enumerate(value):
            self.check(item, at(at(place, key), i), (str,))
        return list(value)

    def scalar_text(self, value: Any, place: str) -> str:
        """A string, number or boolean as text; a list of those joined with ', '."""
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, (int, float)):
            return str(value)
        if isinstance(value, list):
            return ", ".join(self.scalar_text(v, at(place, i)) for i, v in enumerate(value))
        raise self.fail(place, f"expected a string, number or list of them, found {kind(value)}")
