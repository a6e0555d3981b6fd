"""A limited evaluation samples every question type, not the first N of the list."""
from __future__ import annotations

from core.evaluation.sampling import sample_across_types


def test_fifty_of_a_list_sorted_by_type_cover_every_type():
    items = [(t, i) for t in "ABCDEFGHIJKLMNOP" for i in range(8)]  # 16 types, 8 each, grouped
    chosen = sample_across_types(items, 50, type_of=lambda x: x[0])
    assert len(chosen) == 50
    assert {t for t, _ in chosen} == set("ABCDEFGHIJKLMNOP")
    counts = [sum(1 for t, _ in chosen if t == k) for k in "ABCDEFGHIJKLMNOP"]
    assert max(counts) - min(counts) <= 1  # 50 = 16*3 + 2
    assert chosen == sorted(chosen, key=items.index)  # original order kept


def test_a_small_type_gives_its_share_to_the_others_and_edges():
    items = ["a1", "b1", "b2", "b3", "b4", "b5"]
    chosen = sample_across_types(items, 4, type_of=lambda x: x[0])
    assert chosen == ["a1", "b1", "b2", "b3"]
    assert sample_across_types(items, 10, type_of=lambda x: x[0]) == items
    assert sample_across_types(items, 0, type_of=lambda x: x[0]) == []
