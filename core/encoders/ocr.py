"""OCR with rapidocr (onnxruntime; the models ship in the rapidocr wheel).

Text layout convention (other components parse it; keep it stable)
------------------------------------------------------------------
`RapidOcr.read(png)` returns OcrResult(text, lines) where:

* `lines` are the recognised text boxes in READING ORDER: visual rows from
  top to bottom, and within a row boxes from left to right. Each box is an
  OcrLine(text, (x0, y0, x1, y1) axis-aligned pixel box, score).
* A visual ROW is a set of boxes whose vertical centres overlap: a box joins
  the current row when its vertical centre lies inside the row's vertical
  band or the row's centre lies inside the box. So a small label and a big
  value printed side by side share a row, while a label printed above its
  value starts a row of its own.
* `text` has exactly one line per row; boxes of a row are joined by " | ".
  Box text has its whitespace collapsed to single spaces; a literal " | "
  inside a box is written as " / " so that splitting `text` on "\n" and then
  on " | " gives back the boxes of `lines`, in order, one to one.

How a label-value extractor reads the two dashboard layouts:

* label left, value right  -> one row "Distance | 6.2 km": pair cell k with
  cell k+1 of the same row.
* label above value        -> two rows "Steps | Heart rate" then
  "8,432 | 72 bpm": pair a cell with the cell of the NEXT row that lies below
  it (`cell_below`, by horizontal overlap of the boxes); when both rows have
  the same number of cells this is the k-th cell of the next row.
* rapidocr may merge a label and a value printed close together into one box
  ("Distance 6.2 km"): extractors should also look for a value inside a cell.
  It may also merge two labels of a header row; a header box over two or more
  values of the row below is split at the gaps between them (`split_spanning`), and a box of merged
  values under two or more labels is split at the gaps between the labels (`split_merged`). A word read
  twice, at the end of one box and the start of the next box it overlaps, is kept once (`drop_repeats`).

An image without text (or a 0-byte input) gives OcrResult("", ()).
"""
from __future__ import annotations

import queue
import re
import threading
from typing import Any, Sequence

import numpy as np

from ..config import DEFAULT
from ..protocols import OcrLine, OcrResult
from .decoding import decode_rgb

CELL_SEP = " | "
_WS = re.compile(r"\s+")


def make_rapidocr_engine(threads: int = 1) -> Any:
    """A rapidocr.RapidOCR engine on onnxruntime with the models from its wheel.

    `threads` bounds onnxruntime's intra-op threads (1 by default: predictable
    timings on a shared machine, no oversubscription). Raises ImportError with
    the pip command when rapidocr is missing.
    """
    try:
        from rapidocr import RapidOCR
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"OCR needs rapidocr and onnxruntime: pip install rapidocr==3.10.0 onnxruntime ({e})") from e
    return RapidOCR(
        params={
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            "Global.log_level": "error",  # "no text found" is a normal outcome, not a warning
        }
    )


_PIPE_L = re.compile(r"(?<=\d)\|(?=\s|$)")  # "183|": the letter l of "183 l" read as a bar, glued to the number


def _clean(text: str) -> str:
    """One box's text on one line; a bar glued after a number is the letter l OCR misread ("183| 349.73 m3"
    -> "183 l 349.73 m3": a printed bar between cells has spaces around it); a cell separator inside a box
    is a slash."""
    return _PIPE_L.sub(" l", _WS.sub(" ", text).strip()).replace(CELL_SEP, " / ")


def _centre(line: OcrLine) -> float:
    return (line.box[1] + line.box[3]) / 2.0


def group_rows(lines: Sequence[OcrLine]) -> tuple[tuple[OcrLine, ...], ...]:
    """Group boxes into visual rows (see the module docstring), top to bottom, each left to right.

    Works on any OcrLine sequence (also lines read back from storage).
    Deterministic: ties are broken by x, then by text.
    """
    ordered = sorted(lines, key=lambda ln: (_centre(ln), ln.box[0], ln.text))
    rows: list[list[OcrLine]] = []
    band: tuple[float, float] = (0.0, 0.0)  # mean y0, mean y1 of the current row
    for ln in ordered:
        c = _centre(ln)
        if rows:
            row_c = (band[0] + band[1]) / 2.0
            if band[0] <= c <= band[1] or ln.box[1] <= row_c <= ln.box[3]:
                rows[-1].append(ln)
                n = len(rows[-1])
                # a mean band, not the union: the union grows until it swallows the next row
                band = (band[0] + (ln.box[1] - band[0]) / n, band[1] + (ln.box[3] - band[1]) / n)
                continue
        rows.append([ln])
        band = (ln.box[1], ln.box[3])
    return tuple(tuple(sorted(r, key=lambda ln: (ln.box[0], ln.box[1], ln.text))) for r in rows)


def split_spanning(rows: Sequence[Sequence[OcrLine]]) -> tuple[tuple[OcrLine, ...], ...]:
    """Rows with a header box that spans several value columns split into one box per column.

    rapidocr merges labels printed close together ("BIRDS" and "COUNT TIME (mins)" above "49" and "51")
    into one box, so a header box stands over two or more values of the row below. A box of a header row
    is split when the next row has two or more boxes holding a digit, the others short texts ("9 | 1 |
    shed box"), and two or more of them lie under it: at the word boundary nearest each gap
    between those boxes (the gap's x read as a position in the box's text), with boxes interpolated along
    its width. A header row of one box ("EGGS YOUNG" over "7 | 2") is split only when it has one word per
    box under it and each word starts (or is centred) where its box does: a lone title ("Feeder Cam") over
    values is not a header. A box with fewer words than boxes under it and rows of text stay as they are."""
    out = [list(r) for r in rows]
    for i in range(len(out) - 1):
        head, below = out[i], out[i + 1]
        digits = sum(bool(re.search(r"\d", b.text)) for b in below)
        if digits < 2 or not all(
                re.search(r"\d", b.text) or len(b.text.split()) <= 3 for b in below):
            continue
        new: list[OcrLine] = []
        for box in head:
            under = sorted((b for b in below if _stands_under(b, box) or _starts_under(b, box, below)),
                           key=lambda b: b.box[0])
            parts = _split_box(box, under) if len(under) >= 2 else [box]
            if len(head) == 1 and not _aligned(parts, under):
                parts = [box]
            new.extend(parts)
        out[i] = new
    return tuple(tuple(r) for r in out)


def _stands_under(b: OcrLine, box: OcrLine) -> bool:
    """b lies under box: its centre within box's width, or a fifth of the narrower of the two in common (a
    value box that merely touches the header's edge, "424" after "fil (g)", belongs to the next column)."""
    centre = (b.box[0] + b.box[2]) / 2
    common = min(b.box[2], box.box[2]) - max(b.box[0], box.box[0])
    narrower = min(b.box[2] - b.box[0], box.box[2] - box.box[0])
    return box.box[0] - 1 <= centre <= box.box[2] + 1 or (common > 0 and common >= 0.2 * narrower
                                                          and centre >= box.box[0] - 1)


def _starts_under(b: OcrLine, box: OcrLine, below: Sequence[OcrLine]) -> bool:
    """In a table printed left-aligned (a box of the row below starts where `box` does), b starts under
    `box`, a character or more inside it: "3.9 l 8 percent" starting under the "dil." of "nutrient dose dil."
    (OCR merged two labels, and two values below them, each across the gap between their columns)."""
    char = (box.box[2] - box.box[0]) / max(len(box.text), 1)
    first = any(abs(c.box[0] - box.box[0]) <= char and c is not b for c in below)
    return first and box.box[0] + char < b.box[0] < box.box[2] - char


def _aligned(parts: Sequence[OcrLine], under: Sequence[OcrLine]) -> bool:
    """Each part of a split lone box is one word that starts or is centred within a character and a half
    of the box under it (the columns of a header, not the words of a title); or, of several words, starts
    within a character of it ("nutrient dose | dil." over "5 mL | 2.5 l", printed left-aligned)."""
    if len(parts) != len(under) or len(parts) < 2:
        return False
    chars = sum(len(p.text) for p in parts) + len(parts) - 1
    char = (parts[-1].box[2] - parts[0].box[0]) / max(chars, 1)
    if any(len(p.text.split()) != 1 for p in parts):
        return all(abs(p.box[0] - u.box[0]) <= char for p, u in zip(parts, under))
    tol = 1.5 * char
    return all(abs(p.box[0] - u.box[0]) <= tol or abs((p.box[0] + p.box[2]) - (u.box[0] + u.box[2])) / 2 <= tol
               for p, u in zip(parts, under))


def _split_box(box: OcrLine, under: Sequence[OcrLine]) -> list[OcrLine]:
    edges, starts = _column_edges(box, under)
    return _cut_box(box, edges, starts=starts)


def _column_edges(box: OcrLine, columns: Sequence[OcrLine]) -> tuple[list[float], bool]:
    """Where, along `box`, each of `columns` (left to right) ends and the next begins, and whether those are
    where words start: the next one's left edge when the first starts where the box does (a table printed
    left-aligned: "nutrient dose dil." over "5 mL" and "2.5 l", whose gap's middle lies inside "dose"), the
    previous one's right edge when the last ends where the box does (right-aligned), else the middle of the
    gap between them (centred)."""
    tol = 1.5 * (box.box[2] - box.box[0]) / max(len(box.text), 1)
    if abs(columns[0].box[0] - box.box[0]) <= tol:
        return [c.box[0] for c in columns[1:]], True
    if abs(columns[-1].box[2] - box.box[2]) <= tol:
        return [c.box[2] for c in columns[:-1]], False
    return [(left.box[2] + right.box[0]) / 2 for left, right in zip(columns, columns[1:])], False


UNIT_STAYS = 2.0  # characters: a cut between a number and the short word after it costs this much more


def _unit_after(text: str, k: int) -> bool:
    """The space at k parts a number from a short word after it ("174.4 KM 7.7l/100 km" at 5): a unit."""
    before, after = text[:k].split()[-1:], text[k + 1:].split()[:1]
    return bool(before and after and re.fullmatch(r"[-+]?\d[\d.,]*", before[0])
                and re.fullmatch(r"[^\W\d_]{1,5}\.?", after[0]))


def _cut_box(box: OcrLine, gaps: Sequence[float], *, units_stay: bool = False, starts: bool = False) -> list[OcrLine]:
    """`box` cut at the word boundary nearest each gap's x (read as a position in its text), the parts'
    boxes interpolated along its width; the box whole when it has too few word boundaries. With
    `units_stay` (a row of values), a boundary between a number and a short word after it is
    UNIT_STAYS characters farther: labels printed at their columns' left edge put the gap between two
    labels left of where the values part ("174.4 KM 7.7l/100 km" under "Km. | Consumption."). With `starts`
    the gaps are where words start (left-aligned columns): the boundary whose next word starts nearest is
    taken ("23000 mL | 27 percent", the "27" under "Pct:"; a bold font's digits are wider than the average)."""
    text = box.text
    spaces = [k for k, ch in enumerate(text) if ch == " "]
    if len(spaces) < len(gaps):
        return [box]
    x0, x1 = box.box[0], box.box[2]
    width = max(x1 - x0, 1.0)
    cuts: list[int] = []
    for gap in gaps:
        at = (gap - x0) / width * len(text)
        free = [k for k in spaces if k not in cuts and (not cuts or k > cuts[-1])]
        if not free:
            return [box]
        cuts.append(min(free, key=lambda k: abs(k + starts - at)
                        + (UNIT_STAYS if units_stay and _unit_after(text, k) else 0)))
    parts, start = [], 0
    for k in cuts + [len(text)]:
        parts.append((start, k))
        start = k + 1
    return [OcrLine(text[a:b].strip(), (x0 + width * a / len(text), box.box[1], x0 + width * b / len(text), box.box[3]),
                    box.score) for a, b in parts if text[a:b].strip()]


def split_merged(rows: Sequence[Sequence[OcrLine]]) -> tuple[tuple[OcrLine, ...], ...]:
    """A box of values under a row of labels, spanning two or more of them, split into one box per label.

    rapidocr merges values printed close together ("0.76 KG fat balls 1 days" under "FILL | FOOD | GAP")
    into one box; the labels above it then name one value at most. A box of a row right under a row of
    two or more boxes that open with a letter is split when the centres of two or more of those labels lie
    within its width and it holds a digit or one word per label ("Bronwen loss" under "Opp. | Outcome:"):
    at the word boundary nearest each gap between those labels. Run after `split_spanning` ("Light on Int.
    | CO2" over "9.4 h | 43% 3.3 bps": the labels are split by the values first, then the values by the
    labels). Last, a box of two or more marked labels ("Mv: Rtg:") over one box of as many numbers ("32
    1546") is split into one box per label and per number."""
    out = [list(r) for r in rows]
    for i in range(len(out) - 1):
        head, below = out[i], out[i + 1]
        if len(head) < 2 or not all(re.match(r"[^\W\d_]", h.text) for h in head):  # ("CO2" is a label)
            continue
        new: list[OcrLine] = []
        for box in below:
            over = [h for h in head if box.box[0] <= (h.box[0] + h.box[2]) / 2 <= box.box[2]]
            tol = 1.5 * (box.box[2] - box.box[0]) / max(len(box.text), 1)
            if over and abs(over[0].box[0] - box.box[0]) <= tol:
                # labels at their columns' left edges: a label starting inside the box is over it, however
                # wide the label ("Net: | Frames:" over "21.59 KG 11": "Frames:" is centred past the "11")
                over = [h for h in head if box.box[0] - tol <= h.box[0] < box.box[2] - tol]
            if len(over) < 2 or not (re.search(r"\d", box.text) or len(box.text.split()) == len(over)):
                new.append(box)
                continue
            edges, starts = _column_edges(box, over)
            new.extend(_cut_box(box, edges, units_stay=True, starts=starts))
        out[i + 1] = new
    for i in range(len(out) - 1):
        head, below = out[i], out[i + 1]
        for box in list(head):
            under = [b for b in below if b.box[0] < box.box[2] and b.box[2] > box.box[0]]
            labels, numbers = box.text.split(), under[0].text.split() if len(under) == 1 else []
            if len(labels) < 2 or len(numbers) != len(labels) or not all(w.endswith((":", ".")) for w in labels) \
                    or not all(re.fullmatch(r"[-+]?\d[\d.,:]*", n) for n in numbers):
                continue
            out[i] = [x for b in out[i] for x in (_words(b) if b is box else [b])]
            out[i + 1] = [x for b in out[i + 1] for x in (_words(b) if b is under[0] else [b])]
    return tuple(tuple(r) for r in out)


def _words(box: OcrLine) -> list[OcrLine]:
    """`box` cut into one box per word, boxes interpolated along its width."""
    x0, width, n = box.box[0], max(box.box[2] - box.box[0], 1.0), len(box.text)
    gaps = [x0 + width * k / n for k, ch in enumerate(box.text) if ch == " "]
    return _cut_box(box, gaps)


_POWER = {"2": "²", "3": "³"}
_LENGTH_END = re.compile(r"\d\s?(?:m|cm|mm|km|ft|in)$", re.I)


def superscripts(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """A unit's power read as a box of its own ("5.09 m" and a small "3" at its upper right: 5.09 m³)
    joined to the unit: a box that is only 2 or 3, at most four fifths as tall as a box ending in a length
    unit, starting within half that box's height of its right edge and ending above its bottom."""
    out = list(lines)
    for b in lines:
        if b.text not in _POWER:
            continue
        for k, a in enumerate(out):
            h = a.box[3] - a.box[1]
            if (_LENGTH_END.search(a.text) and b.box[3] - b.box[1] <= 0.8 * h
                    and a.box[2] - h <= b.box[0] <= a.box[2] + h / 2 and b.box[1] >= a.box[1] - h / 4
                    and b.box[3] <= a.box[3] - 0.15 * h):
                out[k] = OcrLine(a.text + _POWER[b.text], (a.box[0], a.box[1], max(a.box[2], b.box[2]), a.box[3]),
                                 a.score)
                out.remove(b)
                break
    return out


def drop_repeats(rows: Sequence[Sequence[OcrLine]]) -> tuple[tuple[OcrLine, ...], ...]:
    """A box whose last word reaches into the next box of its row and repeats that box's opening ("76 min 3"
    over x 19-142 beside "39.75" from x 127: rapidocr read the 3 twice) loses that word: the word's position
    is interpolated along its box's width, and it must start no more than half a character before the next
    box does."""
    out = []
    for row in rows:
        boxes = list(row)
        for k in range(len(boxes) - 1):
            a, b = boxes[k], boxes[k + 1]
            text = a.text
            cut = text.rfind(" ")
            if cut <= 0 or a.box[2] <= b.box[0]:
                continue
            word = text[cut + 1:]
            width = max(a.box[2] - a.box[0], 1.0)
            char = width / max(len(text), 1)
            start = a.box[0] + width * (cut + 1) / len(text)
            if start >= b.box[0] - char / 2 and b.text.startswith(word):
                boxes[k] = OcrLine(text[:cut].rstrip(), (a.box[0], a.box[1], a.box[0] + width * cut / len(text),
                                                         a.box[3]), a.score)
        out.append(tuple(boxes))
    return tuple(out)


def layout_text(rows: Sequence[Sequence[OcrLine]]) -> str:
    """The `text` of an OcrResult: one line per row, cells joined by " | "."""
    return "\n".join(CELL_SEP.join(ln.text for ln in row) for row in rows)


def cell_below(cell: OcrLine, row: Sequence[OcrLine]) -> OcrLine | None:
    """The box of `row` that lies under `cell` (largest horizontal overlap), or None.

    For "label above value" layouts: `cell_below(label, next_row)` is the
    value. Boxes that do not overlap horizontally never match.
    """
    best, best_overlap = None, 0.0
    for other in row:
        overlap = min(cell.box[2], other.box[2]) - max(cell.box[0], other.box[0])
        if overlap > best_overlap:
            best, best_overlap = other, overlap
    return best


def lines_from_json(data: Any) -> tuple[OcrLine, ...]:
    """OcrLines back from the `images.ocr_lines` JSON (a str or the parsed list).

    Accepts the items the build writes, [text, [x0, y0, x1, y1], score], and
    dicts {"text", "box", "score"}. Raises ValueError naming the item index
    for anything else. `group_rows(lines_from_json(...))` gives the rows again.
    """
    import json

    items = json.loads(data) if isinstance(data, (str, bytes)) else (data or [])
    out = []
    for i, item in enumerate(items):
        try:
            if isinstance(item, dict):
                text, box, score = item["text"], item["box"], item.get("score", 1.0)
            else:
                text, box, score = item
            x0, y0, x1, y1 = (float(v) for v in box)
            out.append(OcrLine(str(text), (x0, y0, x1, y1), float(score)))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"ocr_lines[{i}]: expected [text, [x0, y0, x1, y1], score], got {item!r} ({e})") from None
    return tuple(out)


class RapidOcr:
    """OCR protocol implementation over rapidocr; see the module docstring for the text layout.

    `engine` is a rapidocr.RapidOCR (or anything callable the same way);
    None means engines made by `make_rapidocr_engine()` when first needed
    (the models load in about a second). One engine is not safe to share
    between threads, so each call takes an idle engine; with `parallel` > 1
    up to that many engines are made and as many calls run at once (the
    build's OCR stage reads `parallel` images at a time: onnxruntime runs
    outside the GIL, so two engines on two cores read nearly twice as fast).
    A given `engine` is the only one.
    """

    def __init__(self, engine: Any = None, *, max_pixels: int = DEFAULT.max_image_pixels, parallel: int = 1):
        self.parallel = 1 if engine is not None else max(1, int(parallel))
        self._idle: queue.SimpleQueue = queue.SimpleQueue()
        if engine is not None:
            self._idle.put(engine)
        self._made = 1 if engine is not None else 0
        self._lock = threading.Lock()
        self.max_pixels = max_pixels
        try:
            from importlib.metadata import version

            self.name = f"rapidocr-{version('rapidocr')}"
        except Exception:  # pragma: no cover - metadata missing
            self.name = "rapidocr"

    def _take(self) -> Any:
        """An idle engine: one waiting, else a new one while fewer than `parallel` exist, else the
        next one released."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            make = self._made < self.parallel
            self._made += make
        if not make:
            return self._idle.get()
        try:
            return make_rapidocr_engine()
        except BaseException:
            with self._lock:
                self._made -= 1  # it was never made: a later call may try again
            raise

    def read(self, image: bytes, *, source: str = "image") -> OcrResult:
        """OCR one encoded image. 0 bytes or no text -> OcrResult("", ()).

        Raises core.errors.InputError naming `source` when the bytes are not a
        decodable image or exceed `max_pixels`.
        """
        if image is not None and len(image) == 0:
            return OcrResult("", ())
        rgb = decode_rgb(image, source=source, max_pixels=self.max_pixels)
        engine = self._take()
        try:
            raw = engine(rgb)
        finally:
            self._idle.put(engine)
        boxes = getattr(raw, "boxes", None)
        txts = getattr(raw, "txts", None)
        scores = getattr(raw, "scores", None)
        if boxes is None or txts is None:
            return OcrResult("", ())
        if scores is None:
            scores = [1.0] * len(txts)
        lines = []
        for pts, txt, score in zip(boxes, txts, scores):
            text = _clean(str(txt))
            if not text:
                continue
            p = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
            box = (float(p[:, 0].min()), float(p[:, 1].min()), float(p[:, 0].max()), float(p[:, 1].max()))
            lines.append(OcrLine(text=text, box=box, score=float(score)))
        rows = drop_repeats(split_merged(split_spanning(group_rows(superscripts(lines)))))
        return OcrResult(text=layout_text(rows), lines=tuple(ln for row in rows for ln in row))
