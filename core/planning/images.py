"""The images of evidence rounds, for answers that name an image (core.planning.answer).

`round_images(con, rounds)` reads the store's `images` table: one `RoundImage` (round, image id,
caption, OCR text, and the round's own text and time) per image of the given rounds, in the order of
`rounds` then by position; `images_between(con, start, end)` those of the rounds of some days.
The engine hands `functools.partial(round_images, con)` to RuleAnswerer(round_images=...).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import duckdb


@dataclass(frozen=True)
class RoundImage:
    round_id: str
    image_id: str
    caption: str = ""
    ocr_text: str = ""
    said: str = ""  # the text of the round the image came with (what was said about it)
    time: str | None = None  # the round's time (ISO), None when unknown

    @property
    def text(self) -> str:
        return " ".join(x for x in (self.caption, self.ocr_text) if x)


def round_images(con: duckdb.DuckDBPyConnection, rounds: Sequence[str]) -> list[RoundImage]:
    """The images of `rounds` (their order, then position); [] for none or a memory without images."""
    rounds = [str(r) for r in rounds if r]
    if not rounds:
        return []
    cur = con.cursor()
    try:
        rows = cur.execute(
            "SELECT i.round_id, i.image_id, coalesce(i.caption, ''), coalesce(i.ocr_text, ''), coalesce(r.text, ''), "
            "CAST(r.time AS VARCHAR) FROM images i LEFT JOIN rounds r USING (round_id) "
            "WHERE i.round_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY i.position, i.image_id", [rounds]).fetchall()
    except duckdb.Error:
        return []
    finally:
        cur.close()
    order = {r: k for k, r in enumerate(dict.fromkeys(rounds))}
    rows.sort(key=lambda r: order.get(r[0], len(order)))
    return [RoundImage(str(a), str(b), str(c), str(d), str(e), t) for a, b, c, d, e, t in rows]


def images_between(con: duckdb.DuckDBPyConnection, start, end, limit: int = 50) -> list[RoundImage]:
    """The images of the rounds whose time falls on the days `start`..`end` (dates, inclusive), in time
    order, at most `limit`; [] for none or a memory without images."""
    cur = con.cursor()
    try:
        rows = cur.execute(
            "SELECT i.round_id, i.image_id, coalesce(i.caption, ''), coalesce(i.ocr_text, ''), coalesce(r.text, ''), "
            "CAST(r.time AS VARCHAR) FROM images i JOIN rounds r USING (round_id) "
            "WHERE CAST(r.time AS DATE) BETWEEN ? AND ? ORDER BY r.time, i.position, i.image_id LIMIT ?",
            [start, end, int(limit)]).fetchall()
    except duckdb.Error:
        return []
    finally:
        cur.close()
    return [RoundImage(str(a), str(b), str(c), str(d), str(e), t) for a, b, c, d, e, t in rows]


__all__ = ["RoundImage", "images_between", "round_images"]
