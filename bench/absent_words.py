"""How often a word of a question is in no round of its memory, by answerable / unanswerable and rule refusal.

    .venv/bin/python bench/absent_words.py ../shared/data/mem-gallery --predictions OUT [--unanswerable AR]
    .venv/bin/python bench/absent_words.py ../shared/data/locomo --predictions OUT --unanswerable locomo-cat5

OUT is a `python -m core eval` output folder of the same files (its predictions say which questions the rules
refused). A question's words are its support tokens (`core.planning.span.frame`) less the question and
discourse words and the file's people; a round's words are its utterances' and captions'. It prints the
counts: would "keep a rule refusal when a word of the question is in no round" separate the unanswerable
questions from the answerable ones? Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.evaluation.runner import qa_type  # noqa: E402
from core.formats import read_file  # noqa: E402
from core.planning.answer import DISCOURSE_WORDS, QUESTION_WORDS  # noqa: E402
from core.planning.span import frame, toks  # noqa: E402


def round_words(history) -> set[str]:
    words: set[str] = set()
    for r in history.rounds:
        for u in r.dialogue:
            words |= set(toks(u.text))
        for im in r.images:
            words |= set(toks(im.caption or ""))
    return words


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", help="a folder of benchmark files (Mem-Gallery or LoCoMo)")
    ap.add_argument("--predictions", required=True, help="a `core eval` output folder of the same files")
    ap.add_argument("--unanswerable", nargs="+", default=["AR", "locomo-cat5"], help="question types that have no answer")
    args = ap.parse_args()
    refused = {}
    for f in Path(args.predictions).glob("**/predictions.jsonl"):
        for line in f.read_text().splitlines():
            x = json.loads(line)
            refused[x["question"]] = bool(x.get("refused"))
    counts: Counter = Counter()
    for f in sorted(Path(args.data).glob("*.json")):
        for h in read_file(str(f), allow_missing_images=True):
            vocab = round_words(h)
            people = {t for p in h.people for t in toks(p)}
            for qa in h.qas:
                words = {t for t in frame(qa.question).support_tokens if not re.search(r"ly$", t)}
                absent = words - DISCOURSE_WORDS - QUESTION_WORDS - people - vocab
                kind = "unanswerable" if str(qa_type(qa)) in args.unanswerable else "answerable"
                rule = "refused" if refused.get(qa.question) else "answered"
                counts[(kind, rule, "a word in no round" if absent else "every word in some round")] += 1
    for key in sorted(counts):
        print(f"{' / '.join(key):70s} {counts[key]:5d}")


if __name__ == "__main__":
    main()
