"""bench/llm_eval.py's benchmark samples: seeded, stratified by question type, the same for every backend."""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import llm_eval  # noqa: E402


def test_locomo_sample_is_stratified_and_repeatable(locomo_dir):
    a = llm_eval.sample_items("locomo", locomo_dir, 60, seed=0)
    b = llm_eval.sample_items("locomo", locomo_dir, 60, seed=0)
    c = llm_eval.sample_items("locomo", locomo_dir, 60, seed=1)
    ids = [qa.qa_id for _, qa in a]
    assert ids == [qa.qa_id for _, qa in b] and ids != [qa.qa_id for _, qa in c]
    assert len(set(ids)) == 60
    per_type = Counter(qa.category for _, qa in a)
    assert set(per_type) == {1, 2, 3, 4, 5} and set(per_type.values()) == {12}
    assert len({f for f, _ in a}) > 1  # drawn across the conversations, not from the first file


def test_a_folder_without_files_is_a_clear_error(tmp_path):
    import pytest

    with pytest.raises(SystemExit, match="no locomo files"):
        llm_eval.sample_items("locomo", tmp_path, 10, seed=0)
