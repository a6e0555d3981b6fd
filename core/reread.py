"""Labels the history taught: a second reading of its rounds with the memory's own labels.

The rule extractor reads one text at a time, so an item written without a colon, all in lower case
("Seeds: 0.29 kg; seed type sunflower hearts; Interval: 1 days"), has no place where its label ends:
"seed type sunflower" or "seed"? Other rounds of the same history answer it: they print "Seed type:
nyjer" with a colon. After a build, every label the memory has read with a colon or in a layout in
at least KNOWN_ROUNDS rounds is looked for again at the start of a list item of the user's messages
("; ", ", ", " / ", a line, after a heading colon), followed by a value of the kind the label takes
(a short text for a text field, a bare number for a field of bare numbers) that ends the item. What
is found is stored like any observation, under the field the label already names, with the label
as written and `extractor` "rules" (provenance: the span in its utterance). A bare `item` the
extractor made of the whole text ("item = seed type peanuts") gives way to it.

No word of any domain is involved: the labels are the history's own.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from core.align import recompute_field_stats
from core.extract.normalize import active_lexicon, canonical_text, use_lexicon
from core.lexicon import load as load_lexicon

KNOWN_ROUNDS = 2  # a label must have named a value in this many rounds to be looked for elsewhere
MAX_TEXT_WORDS = 4  # a text value is at most this many words
# where a list item starts: the text's start, a line, a sentence, after "; ", ", ", " / ", ": " or " and "
_ITEM_START = r"(?:^|(?<=\n)|(?<=[;,:.!]\s)|(?<=\s/\s)|(?<=\sand\s))"
# where it ends: a separator, a sentence end, or the text's end
_ITEM_END = r"(?=\s*(?:[;,\n]|\s/\s|\.\s|\.?\s*$|\s+and\s))"
_ASSISTANT = ("assistant", "agent", "bot", "ai", "system")


@dataclass(frozen=True)
class KnownLabel:
    """A label as the history writes it (lower case, no colon) and the field it names."""

    label: str
    field: str
    raw_attribute: str
    kind: str  # "text" or "number" (a bare number: no unit)


@dataclass(frozen=True)
class RereadReport:
    labels: int  # labels looked for
    added: int  # observations added
    replaced: int  # bare `item` observations that gave way


def known_labels(con) -> list[KnownLabel]:
    """Labels that named a text value, or a number without a unit, in at least KNOWN_ROUNDS rounds, each
    with the one field it names (a label naming two fields is left out: it decides nothing; a label of
    codes, "Order #123", is no label of words)."""
    rows = con.execute(
        "SELECT lower(trim(label, ' :.')) AS lab, attribute, coalesce(raw_attribute, attribute), value_kind, "
        "count(DISTINCT round_id) FROM observations "
        "WHERE label IS NOT NULL AND length(trim(label, ' :.')) >= 2 AND attribute <> 'item' "
        "AND (value_kind = 'text' OR (value_kind = 'number' AND unit IS NULL)) "
        "GROUP BY ALL HAVING value_kind = 'number' "
        "OR avg(CASE WHEN regexp_matches(raw_value, '[0-9]') THEN 1 ELSE 0 END) < 0.5").fetchall()
    by_label: dict[str, list[tuple]] = defaultdict(list)
    for lab, attr, raw, kind, n in rows:
        if re.fullmatch(r"[a-z][a-z0-9 '&-]*", lab or ""):
            by_label[lab].append((attr, raw, kind, n))
    out = []
    for lab, uses in sorted(by_label.items()):
        if len({(a, k) for a, _, k, _ in uses}) != 1 or sum(n for *_, n in uses) < KNOWN_ROUNDS:
            continue
        attr, raw, kind, _ = max(uses, key=lambda u: u[3])
        out.append(KnownLabel(lab, attr, raw, kind))
    return out


def _value_ok(words: list[str]) -> bool:
    """A short text value: no word of grammar (pronoun, auxiliary, determiner, connective, number word)."""
    lex = active_lexicon()
    return 1 <= len(words) <= MAX_TEXT_WORDS and not any(
        w.lower() in lex.pronouns or w.lower() in lex.auxiliaries or w.lower() in lex.determiners
        or w.lower() in lex.boundary_words or w.lower() in lex.number_words or w.lower() in lex.time_words
        for w in words)


def find_items(text: str, labels: list[KnownLabel]) -> list[tuple[KnownLabel, int, int, int, int]]:
    """Items of `text` that are a known label and a value of its kind (a number may come first: "67
    ducks"): (label, label start, label end, value start, value end). The longest label wins at one place."""
    found = []
    taken: list[tuple[int, int]] = []
    for kl in sorted(labels, key=lambda k: -len(k.label)):
        words = r"\s+".join(re.escape(w) for w in kl.label.split())
        if kl.kind == "text":
            value = r"[A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z][A-Za-z'-]*){0,%d}?" % (MAX_TEXT_WORDS - 1)
        else:
            value = r"[-+]?\d+(?:\.\d+)?"
        pats = [re.compile(_ITEM_START + r"\s*(?P<label>" + words + r")\.?\s+(?P<value>" + value + r")" + _ITEM_END,
                           re.I)]
        if kl.kind == "number":  # a count before its label: "67 ducks and Gs.: 17"
            pats.append(re.compile(_ITEM_START + r"\s*(?P<value>" + value + r")\s+(?P<label>" + words + r")\.?"
                                   + _ITEM_END, re.I))
        for m in (m for pat in pats for m in pat.finditer(text)):
            a, b = min(m.start("label"), m.start("value")), max(m.end("label"), m.end("value"))
            if any(a < y and x < b for x, y in taken):
                continue
            if kl.kind == "text" and not _value_ok(m.group("value").split()):
                continue
            taken.append((a, b))
            found.append((kl, m.start("label"), m.end("label"), m.start("value"), m.end("value")))
    return sorted(found, key=lambda t: min(t[1], t[3]))


def reread(store, config) -> RereadReport:
    """Read every round's user messages again for the memory's known labels (see the module docstring)
    and store what is found; returns what was looked for and added. The caller rebuilds the analytic
    memory when anything was added. Runs in the caller's transaction or its own."""
    with store.transaction() as con, use_lexicon(load_lexicon(getattr(config, "lexicon", "") or "")):
        labels = known_labels(con)
        if not labels:
            return RereadReport(0, 0, 0)
        # what is already read, per round and utterance: spans, the extractor's names (a bare item may
        # have been aligned to a field already) and the next free seq
        spans: dict[tuple[str, int], list[tuple[int, int, str, int]]] = defaultdict(list)
        next_seq: dict[str, int] = defaultdict(int)
        for rid, seq, ui, s, e, attr in con.execute(
                "SELECT round_id, seq, utterance_index, span_start, span_end, coalesce(raw_attribute, attribute) "
                "FROM observations").fetchall():
            next_seq[rid] = max(next_seq[rid], seq + 1)
            if ui is not None and s is not None:
                spans[(rid, ui)].append((s, e, attr, seq))
        added: list[tuple] = []
        drop: list[tuple[str, int]] = []
        for _, r in store.rounds():
            for ui, u in enumerate(r.dialogue):
                if u.speaker.strip().lower() in _ASSISTANT or "?" in u.text:
                    continue
                have = spans.get((r.round_id, ui), [])
                for kl, la, lb, va, vb in find_items(u.text, labels):
                    a, b = min(la, va), max(lb, vb)  # the whole item, label and value
                    over = [(s, e, attr, seq) for s, e, attr, seq in have if s < b and a < e]
                    if any(attr != "item" for *_, attr, _ in over):
                        continue  # already read: only a bare item gives way
                    drop += [(r.round_id, seq) for *_, seq in over]
                    raw = u.text[va:vb]
                    number = float(raw) if kl.kind == "number" else None
                    added.append((r.round_id, next_seq[r.round_id], kl.field, raw, number, None, kl.kind, "dialogue",
                                  u.speaker, ui, va, vb, None, u.text[la:lb], "rules",
                                  canonical_text(raw) if kl.kind == "text" else None, kl.raw_attribute))
                    next_seq[r.round_id] += 1
        for rid, seq in drop:
            con.execute("DELETE FROM observations WHERE round_id = ? AND seq = ?", [rid, seq])
        if added:
            cols = ("round_id, seq, attribute, raw_value, number, unit, value_kind, source, speaker, "
                    "utterance_index, span_start, span_end, image_id, label, extractor, text_value, raw_attribute")
            con.executemany(f"INSERT INTO observations ({cols}) VALUES ({', '.join(['?'] * 17)})", added)
            recompute_field_stats(con)
        return RereadReport(len(labels), len(added), len(drop))
