"""Which questions a limited evaluation answers: a sample that covers every question type."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def sample_across_types(items: Sequence[T], n: int, type_of: Callable[[T], str]) -> list[T]:
    """At most `n` of `items`, taken round-robin over their types (types in order of first appearance,
    each type's items in their order), so the first 50 of a QA list sorted by type do not leave out half
    the types. Deterministic; the chosen items are returned in their original order. n <= 0 gives []."""
    if n <= 0:
        return []
    if n >= len(items):
        return list(items)
    queues: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        queues.setdefault(type_of(item), []).append(i)
    picked: list[int] = []
    depth = 0
    while len(picked) < n:
        for queue in queues.values():
            if depth < len(queue):
                picked.append(queue[depth])
                if len(picked) == n:
                    break
        depth += 1
    return [items[i] for i in sorted(picked)]
