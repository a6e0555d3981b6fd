"""Errors with a documented meaning; the CLI maps them to exit codes."""
from __future__ import annotations

from typing import Sequence


class InputError(ValueError):
    """Bad user input: names the file, the place in it and the fault (CLI exit 2).

    One error may carry several faults of the same file: `file`, `place` and
    `fault` are the first; `more` holds the next ones listed and `unlisted`
    counts those left out. str() is the first fault on one line, as for a
    single fault, then one indented `place: fault` line per further fault and
    a last `... and N more` line when some were left out.
    """

    def __init__(self, file: str, place: str, fault: str, *, more: Sequence["InputError"] = (),
                 unlisted: int = 0):
        self.file, self.place, self.fault = file, place, fault
        self.more, self.unlisted = tuple(more), unlisted
        where = f"{file}: {place}: " if place else f"{file}: "
        lines = [where + fault] + [f"  {e.place}: {e.fault}" if e.place else f"  {e.fault}" for e in self.more]
        if unlisted:
            lines.append(f"  ... and {unlisted} more")
        super().__init__("\n".join(lines))

    @property
    def faults(self) -> tuple[tuple[str, str], ...]:
        """(place, fault) of every listed fault, the first one first."""
        return ((self.place, self.fault), *((e.place, e.fault) for e in self.more))

    @property
    def count(self) -> int:
        """How many faults this error stands for, listed or not."""
        return 1 + len(self.more) + self.unlisted


class MemoryBusyError(RuntimeError):
    """Another process holds the memory file for writing."""


class LLMError(RuntimeError):
    """A language-model call failed after its retries (down, timed out, invalid output)."""
