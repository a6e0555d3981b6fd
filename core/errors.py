"""Errors with a documented meaning; the CLI maps them to exit codes."""
from __future__ import annotations


class InputError(ValueError):
    """Bad user input: names the file, the place in it and the fault (CLI exit 2)."""

    def __init__(self, file: str, place: str, fault: str):
        self.file, self.place, self.fault = file, place, fault
        where = f"{file}: {place}: " if place else f"{file}: "
        super().__init__(where + fault)


class MemoryBusyError(RuntimeError):
    """Another process holds the memory file for writing."""


class LLMError(RuntimeError):
    """A language-model call failed after its retries (down, timed out, invalid output)."""
