"""The Fields view's words and rows: plain functions over ui.data's dataclasses (no Streamlit).

`reason_text` says in plain words why a raw label was merged into a field, from the stored score and its
parts (core/align.py: score = 0.5 name + 0.15 unit + 0.1 range + 0.15 companions + 0.1 text);
`apply_change` runs an undo or a merge and turns its outcome or its error into the message the page shows.
"""
from __future__ import annotations

from typing import Callable, Sequence

from core.align import W_COMPANIONS, W_NAME, W_RANGE, W_TEXT, W_UNIT

from .data import FieldView, RawLabel, ReadOnlyMemory

_NAME_WHY = {
    "same words": "has the same words (up to a plural) as",
    "abbreviation": "is an abbreviation of",
    "initials": "is the initials of",
    "a word more or less": "has a word more or less than",
    "similar spelling": "is spelled like",
    "a word shortened to its initial": "writes a word of it as its initial, like",
}


def labels_text(labels: Sequence[tuple[str, int]]) -> str:
    """'"Temp" ×5, "Temperature" ×4' (labels as written, most frequent first)."""
    return ", ".join(f'"{label}" ×{n}' if label else f"(no label) ×{n}" for label, n in labels)


def columns_text(field: FieldView) -> str:
    return ", ".join(str(c) for c in field.columns)


def _name_part(reason: str, field: str, raw: str = "") -> str:
    """'abbreviation (soil_moisture)' -> 'its name is an abbreviation of soil_moisture'."""
    reason = reason.strip()
    if reason.startswith(("fills the place of", "the round's quantities")):
        return f"no name links them, but it {reason}"  # structure: a place in a known kind of record
    if reason.startswith("similar meaning"):
        return f"its name means much the same as the field's {reason[len('similar meaning'):].strip()}".strip()
    for key, words in _NAME_WHY.items():
        if reason.startswith(key):
            rest = reason[len(key):].strip()
            other = rest[1:-1] if rest.startswith("(") and rest.endswith(")") else (rest or field)
            if key in ("abbreviation", "initials") and len(raw) > len(other):
                return f"{other} {words} its name"  # the raw label is the long form
            return f"its name {words} {other}"
    return f"name evidence: {reason}" if reason else "its name"


def _unit_part(x: float) -> str:
    if x >= 0.99:
        return "its unit is the field's"
    if x >= 0.69:
        return "its unit measures the same kind of quantity"
    if x >= 0.59:
        return "neither has a unit"
    return "its unit differs or is missing"


def _range_part(x: float) -> str:
    if x >= 0.999:
        return "its value lies inside the field's range so far"
    if abs(x - 0.5) < 1e-9:
        return "there was no range to compare its value with"
    if x >= 0.9:
        return "its value lies just outside the field's range so far"
    if x > 0.5:
        return "its value lies outside, but near, the field's range so far"
    return "its value is far from the field's range so far"


def _companions_part(x: float) -> str:
    if abs(x - 0.5) < 1e-9:
        return "the round had no other field to compare with"
    if x >= 0.999:
        return "the round's other fields are the ones that usually come with it"
    if x > 0:
        return f"{x:.0%} of the round's other fields usually come with it"
    return "none of the round's other fields usually come with it"


def _text_part(x: float) -> str:
    if abs(x - 0.5) < 1e-9:
        return "there was no round text to compare"
    if x >= 0.75:
        return "the round reads like the field's other rounds"
    if x >= 0.4:
        return "the round reads somewhat like the field's other rounds"
    return "the round reads unlike the field's other rounds"


def _num(ev: dict, key: str) -> float | None:
    try:
        v = ev.get(key)
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def score_parts(raw: RawLabel) -> list[tuple[str, float, float, str]]:
    """(part, value, weight, plain words) for every evidence number stored with the decision."""
    ev = raw.evidence or {}
    out = []
    for key, weight, words in (("name", W_NAME, lambda x: _name_part(raw.reason, raw.field, raw.raw_attribute)),
                               ("unit", W_UNIT, _unit_part), ("range", W_RANGE, _range_part),
                               ("companions", W_COMPANIONS, _companions_part), ("text", W_TEXT, _text_part)):
        x = _num(ev, key)
        if x is not None:
            out.append((key, x, weight, words(x)))
    return out


def reason_text(raw: RawLabel, threshold: float | None = None) -> str:
    """Why `raw` is in its field, in plain words, with the score and its parts."""
    if not raw.joined:
        if raw.decided_by == "user":
            return "Kept apart by you (later builds keep it its own field)."
        return f"Names the field (first seen at round {raw.round_order})."
    if raw.decided_by == "user":
        return f"Merged into **{raw.field}** by you (later builds keep it there)."
    parts = score_parts(raw)
    head = f"Merged into **{raw.field}** automatically at round {raw.round_order} with score {raw.score:.2f}"
    head += f" (a merge needs {threshold:.2f})" if threshold is not None else ""
    if not parts:
        return head + (f": {raw.reason}." if raw.reason else ".")
    body = "; ".join(f"{words} ({key} {x:.2f} × {w:g})" for key, x, w, words in parts)
    return f"{head}: {body}."


def field_rows(fields: Sequence[FieldView]) -> list[dict]:
    """One row per field for the overview table."""
    return [{"field": f.name, "kind": f.kind or "", "unit": f.unit or "", "observations": f.observations,
             "labels as written": labels_text(f.labels), "raw attributes": ", ".join(r.raw_attribute for r in f.raws),
             "in tables": columns_text(f) or "—", "merged": "yes" if f.merged else "",
             "decided by": "you" if any(r.decided_by == "user" for r in f.raws) else "alignment"} for f in fields]


def filter_fields(fields: Sequence[FieldView], query: str) -> list[FieldView]:
    """The fields whose name, raw attributes or labels as written contain `query` (case-insensitive), or that
    are in the table `query` names exactly; merged fields first, keeping the given order otherwise."""
    q = (query or "").strip().lower()

    def hit(f: FieldView) -> bool:
        words = [f.name] + [r.raw_attribute for r in f.raws] + [label for label, _ in f.labels]
        return any(q in w.lower() for w in words) or any(q in (c.table.lower(), str(c).lower()) for c in f.columns)

    picked = [f for f in fields if not q or hit(f)]
    return sorted(picked, key=lambda f: not f.merged)  # stable: the report's order within each group


def rebuilt_text(report, what: str) -> str:
    """The success message after an undo or a merge: what changed and the tables now in the memory."""
    tables = tuple(getattr(report, "tables", ()) or ())
    listed = ", ".join(f"`{t}`" for t in tables) if tables else "none"
    return (f"{what}. The analytic tables were rebuilt from {getattr(report, 'rounds', 0)} round(s) in "
            f"{getattr(report, 'seconds', 0.0):.1f} s; tables now in the memory: {listed}.")


def apply_change(change: Callable[[], object], what: str) -> tuple[str, str]:
    """Run an undo or a merge: ("success", message) or ("error", message); never raises."""
    try:
        report = change()
    except ReadOnlyMemory as e:
        return "error", f"Nothing was changed: {e}. Open the memory for writing (not read-only) to change fields."
    except KeyError as e:
        msg = e.args[0] if e.args else str(e)
        return "error", f"Nothing was changed: {msg} (the memory may have changed meanwhile; the page is refreshed)."
    except Exception as e:  # a busy or read-only file, a failed rebuild: the transaction was rolled back
        text = str(e)
        if "read-only" in text.lower() or "read only" in text.lower():
            return "error", ("Nothing was changed: this memory is open read-only, so its fields cannot be changed "
                             f"({type(e).__name__}).")
        return "error", f"Nothing was changed: {type(e).__name__}: {text}"
    return "success", rebuilt_text(report, what)
