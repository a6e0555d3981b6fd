"""Construction: ingest -> OCR -> embeddings -> per round (extract, induce, materialize, hierarchy).

`build(store, histories, deps, config)` is incremental: rounds already
processed are never touched again, new rounds continue the statistics where
they stopped, so building in several calls equals building at once. Rounds
are processed in transactions of ROUNDS_PER_COMMIT rounds, each marked
processed in its transaction, so a process killed at any point leaves a
usable memory (losing at most the open batch) and a rerun completes it with
no duplicates.

The work that cannot be avoided (each image OCR'd once, each text embedded
once in batches) happens in batched stages before the per-round loop.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, Sequence

import numpy as np

from .config import Config
from .errors import InputError
from .model import BuildReport, History, Observation, Round
from .protocols import LLM, OCR, ImageEncoder, TextEncoder
from .store import Store

Progress = Callable[[str, int, int], None]  # (stage, done, total)

STAGES = ("store", "ocr", "embed", "extract", "induce", "materialize", "realign", "hierarchy")


class Extractor(Protocol):
    name: str

    def extract(self, round: Round, ocr: dict[str, str]) -> list[Observation]: ...


@dataclass
class BuildDeps:
    """Everything a build needs that is expensive or external, passed in."""

    text_encoder: TextEncoder
    image_encoder: ImageEncoder
    ocr: OCR
    extractor: Extractor
    llm: LLM | None = None
    image_encoder_label: str = ""


@dataclass
class _Timer:
    seconds: dict[str, float] = field(default_factory=lambda: {s: 0.0 for s in STAGES})

    def add(self, stage: str, t0: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - t0
        return now


def _noop(stage: str, done: int, total: int) -> None:
    pass


OCR_COMMIT_EVERY = 16
# Rounds per transaction: a killed build loses at most this many rounds of work, and the rerun
# redoes them. Committing each round cost ~5 ms of commit and per-round writes.
ROUNDS_PER_COMMIT = 64


def run_ocr(store: Store, ocr: OCR, progress: Progress = _noop) -> int:
    """OCR every stored image that has bytes and no OCR text yet; identical bytes are OCR'd once.

    With an OCR that reads several images at once (`ocr.parallel` > 1, e.g. RapidOcr(parallel=2))
    that many images of each batch are read concurrently; results are written in image order
    either way, so the stored text does not depend on it. Commits every few images so a killed
    build keeps what it read. Returns the number of images OCR'd by the engine (cache hits not
    counted).
    """
    todo = store.con.execute(
        "SELECT image_id, sha256 FROM images WHERE sha256 IS NOT NULL AND ocr_text IS NULL ORDER BY round_id, position"
    ).fetchall()
    done_by_sha: dict[str, tuple[str, str]] = {}
    done_ocr = 0
    if not todo:
        return 0
    progress("ocr", 0, len(todo))  # the stage shows before its first (slowest: models load) image
    workers = max(1, int(getattr(ocr, "parallel", 1) or 1))
    pool = ThreadPoolExecutor(workers, thread_name_prefix="ocr") if workers > 1 else None
    try:
        for k in range(0, len(todo), OCR_COMMIT_EVERY):
            batch = todo[k : k + OCR_COMMIT_EVERY]
            reads = _start_reads(store, ocr, batch, done_by_sha, pool)
            done_ocr += len(reads)
            with store.transaction():
                for j, (image_id, sha) in enumerate(batch, start=k + 1):
                    pending = reads.pop(sha, None)
                    hit = done_by_sha.get(sha) or (pending() if pending else None) or store.ocr_by_sha(sha)
                    done_by_sha[sha] = hit
                    store.con.execute(
                        "UPDATE images SET ocr_text = ?, ocr_lines = ?, ocr_engine = ? WHERE image_id = ?",
                        [hit[0], hit[1], ocr.name, image_id],
                    )
                    progress("ocr", j, len(todo))  # per image, in order: one OCR call takes seconds
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return done_ocr


def _start_reads(store: Store, ocr: OCR, batch, done: dict, pool) -> dict[str, Callable[[], tuple[str, str]]]:
    """sha -> a call giving (text, lines JSON) for each image of `batch` not read yet, in this build or
    an earlier one. With `pool` the reads have started on it (the call waits for its own); without,
    the call reads. The store is only touched from this thread."""
    wanted: dict[str, bytes | None] = {}
    for image_id, sha in batch:
        if sha not in done and sha not in wanted and store.ocr_by_sha(sha) is None:
            wanted[sha] = store.image_bytes(image_id)
    if pool is None:
        return {sha: (lambda data=data: _ocr_one(ocr, data)) for sha, data in wanted.items()}
    futures = {sha: pool.submit(_ocr_one, ocr, data) for sha, data in wanted.items()}
    return {sha: f.result for sha, f in futures.items()}


def _ocr_one(ocr: OCR, data: bytes | None) -> tuple[str, str]:
    try:
        res = ocr.read(data) if data else None
    except InputError:
        # validated at ingest, so this is a decoder disagreement: keep the build going
        # with no text for this image rather than losing the whole build
        res = None
    text = res.text if res else ""
    lines = json.dumps([[l.text, list(l.box), l.score] for l in (res.lines if res else ())])
    return text, lines


_OBS_COLUMNS = ("round_id, seq, attribute, raw_value, number, unit, value_kind, source, speaker, utterance_index, "
                "span_start, span_end, image_id, label, extractor, text_value, raw_attribute")


def _insert_observations(store: Store, rounds: Sequence[tuple[str, Sequence[Observation]]]) -> None:
    """Insert the observations of several rounds in one statement (the caller deleted older ones)."""
    rows = [
        (
            round_id, seq, o.attribute, o.raw_value, o.number, o.unit, o.value_kind, o.source, o.speaker,
            o.utterance_index, o.start, o.end, o.image_id, o.label, o.extractor, o.text_value,
            o.raw_attribute,
        )
        for round_id, obs in rounds
        for seq, o in enumerate(obs)
    ]
    for k in range(0, len(rows), 2000):
        part = rows[k : k + 2000]
        # one statement per 2000 rows: executemany runs one statement per row in DuckDB
        values = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(part))
        store.con.execute(f"INSERT INTO observations ({_OBS_COLUMNS}) VALUES {values}",
                          [v for row in part for v in row])


def build(
    store: Store,
    histories: Sequence[History],
    deps: BuildDeps | Callable[[], BuildDeps],
    config: Config,
    progress: Progress = _noop,
) -> BuildReport:
    """Ingest `histories` (may be empty: then only pending rounds are processed) and build both memories.

    `deps` may be a factory called after the ingest, so input refused at
    ingest (InputError, nothing stored) is reported before any model loads.
    """
    from .hierarchy import Hierarchy, event_text
    from .align import FieldAligner
    from .analytic import AnalyticBuilder, rebuild

    t_start = time.perf_counter()
    timer = _Timer()
    t0 = time.perf_counter()
    changed: list[str] = []
    added = 0
    # one transaction for all histories: a file refused at ingest leaves nothing of the others
    with store.transaction():
        for i, h in enumerate(histories, start=1):
            res = store.ingest(h)
            added += res.rounds_added
            changed += list(res.changed_rounds)
            progress("store", i, len(histories))
    t0 = timer.add("store", t0)
    if not isinstance(deps, BuildDeps):
        deps = deps()
    # every LLM call of this build (extraction, metadata, descriptions) is metered from here
    meter = getattr(deps.llm, "meter", None) if deps.llm is not None else None
    mark = meter.mark() if meter is not None else 0

    images_ocr = run_ocr(store, deps.ocr, progress)
    t0 = timer.add("ocr", t0)

    pending = store.rounds(pending_only=True)
    ocr_by_round = _ocr_texts(store, [r.round_id for _, r in pending])
    texts = [event_text(r, ocr_by_round.get(r.round_id, {})) for _, r in pending]
    text_vectors = _embed_texts(deps.text_encoder, texts, progress)
    image_vectors = _image_vectors(store, deps.image_encoder, pending)
    progress("embed", len(pending), len(pending))
    t0 = timer.add("embed", t0)

    # Pending rounds have observations only when an older version of the build left some (a chunk's
    # observations commit together with its `processed` flags). One check here instead of a DELETE per
    # chunk: the table has no index on round_id, so each DELETE scanned it (O(history) per chunk).
    stale = bool(pending) and store.con.execute(
        "SELECT count(*) FROM observations o JOIN rounds r ON r.round_id = o.round_id WHERE NOT r.processed"
    ).fetchone()[0] > 0
    analytic = AnalyticBuilder(store.con, config, llm=deps.llm)
    aligner = FieldAligner(store.con, config, encoder=deps.text_encoder)
    hierarchy = Hierarchy(store.con, deps.text_encoder, deps.image_encoder, config, llm=deps.llm)
    fallbacks: list[str] = []
    pool = _extraction_pool(deps, config, len(pending))
    if pool is not None:  # a batch's episode and topic descriptions are independent calls too
        hierarchy.map = pool.map
    extracted_before = 0
    try:
        for k in range(0, len(pending), ROUNDS_PER_COMMIT):
            chunk = pending[k : k + ROUNDS_PER_COMMIT]
            # one transaction per chunk; the hierarchy describes and writes the chunk's episodes and
            # topics when its batch ends, just before the commit
            with store.transaction(), hierarchy.batch():
                t0 = time.perf_counter()
                if stale:  # one DELETE per chunk (one per round would scan the table each time)
                    store.con.execute("DELETE FROM observations WHERE round_id IN (SELECT unnest(?::VARCHAR[]))",
                                      [[r.round_id for _, r in chunk]])
                # with a model, extraction is most of the build: its progress is shown per round
                on_done = (None if getattr(deps.extractor, "name", "") != "llm" else
                           lambda n, base=extracted_before: progress("extract", base + n, len(pending)))
                results = _extract_chunk(store, deps, [r for _, r in chunk], ocr_by_round, pool, on_done)
                extracted_before += len(chunk)
                extracted: list[tuple[Observation, ...]] = []
                for (_, r), res in zip(chunk, results):
                    extracted.append(res.observations)
                    if res.fallback:
                        fallbacks.append(f"extract {r.round_id}: {res.fallback}")
                # raw labels -> the memory's fields, before induction counts them (new labels embedded at once)
                aligner.prepare(extracted)
                observed = [aligner.align(order, obs, text_vector=text_vectors[i])
                            for i, ((order, _), obs) in enumerate(zip(chunk, extracted), start=k)]
                aligner.flush()
                _insert_observations(store, [(r.round_id, obs) for (_, r), obs in zip(chunk, observed)])
                timer.add("extract", t0)
                for i, ((order, r), obs) in enumerate(zip(chunk, observed), start=k):
                    ocr = ocr_by_round.get(r.round_id, {})
                    analytic.add(order, r.round_id, obs)
                    t0 = time.perf_counter()
                    hierarchy.insert(
                        order, r, ocr,
                        image_vectors={im.image_id: image_vectors[im.image_id] for im in r.images
                                       if im.image_id in image_vectors},
                        text_vector=text_vectors[i],
                    )
                    timer.add("hierarchy", t0)
                    progress("rounds", i + 1, len(pending))
                analytic.flush()
                t0 = time.perf_counter()
                store.con.execute("UPDATE rounds SET processed = true WHERE round_id IN (SELECT unnest(?::VARCHAR[]))",
                                  [[r.round_id for _, r in chunk]])
            timer.add("hierarchy", t0)  # the batch's end: episodes and topics written
    finally:
        hierarchy.map = map  # finalize() runs after the pool is gone
        if pool is not None:  # a failed chunk: the calls still queued are not sent
            pool.shutdown(wait=True, cancel_futures=True)
    if pending:
        with store.transaction():
            # every value is known now: a column typed from its first few rounds is typed again
            # and a table made by this build is named from all its rounds, not its first few
            analytic.settle(pending[-1][0], names_since=pending[0][0])
        # the whole record structure is known now: one kind of record named two ways becomes one
        from .realign import realign
        from .reread import reread

        t0 = time.perf_counter()
        progress("realign", 0, 1)
        # the history's own labels, read again where the extractor could not split an item
        again = reread(store, config) if config.reread_labels else None
        realigned = realign(store, config, encoder=deps.text_encoder, llm=deps.llm)  # logged in field_events
        if again is not None and again.added and not realigned.rebuilt:
            rebuild(store, config, llm=deps.llm)
        progress("realign", 1, 1)
        timer.add("realign", t0)
    t0 = time.perf_counter()
    with store.transaction():
        # the open episode gets a provisional topic so it shows in the tree; the next insert undoes it.
        # Also when nothing was pending: a build killed after its last round but before this commit
        # leaves the episode without its topic, and the rerun must still attach it (idempotent).
        # It also describes and embeds the topics the batches left undescribed.
        hierarchy.finalize()
    timer.add("hierarchy", t0)
    # the other LLM steps fall back too (table metadata, episode/topic descriptions): report them all
    fallbacks += [f"materialize: {f}" for f in analytic.fallbacks]
    for stage, secs in analytic.seconds.items():
        timer.seconds[stage] += secs
    fallbacks += [f"hierarchy: {f}" for f in hierarchy.fallbacks]

    store.set_meta("text_encoder", deps.text_encoder.name)
    store.set_meta("image_encoder", deps.image_encoder_label or deps.image_encoder.name)
    s = store.summary()
    usage = meter.usage(since=mark) if meter is not None else None
    report = BuildReport(
        sessions=s["sessions"], rounds=s["rounds"], rounds_added=added, images=s["images"],
        images_ocr=s["images_ocr"], observations=s["observations"], schemas=s["schemas"],
        episodes=s["episodes"], topics=s["topics"],
        image_encoder=deps.image_encoder_label or deps.image_encoder.name, text_encoder=deps.text_encoder.name,
        seconds=round(time.perf_counter() - t_start, 3), changed_rounds=tuple(changed),
        fallbacks=tuple(fallbacks), stage_seconds=tuple((k, round(v, 3)) for k, v in timer.seconds.items()),
        llm_tokens=usage.tokens if usage is not None else 0, llm_calls=usage.calls if usage is not None else 0,
    )
    _record_run(store, report, images_ocr)
    return report


def _extraction_pool(deps: BuildDeps, config: Config, pending: int):
    """A thread pool for concurrent model calls (extraction, a batch's descriptions), or None (rules,
    one round, or llm_parallel 1).

    Its size is `config.llm_parallel`, capped by the model's own `parallel` (an in-process
    llama.cpp server's slots: calls beyond them would only queue inside the server).
    """
    if deps.llm is None or pending < 2:
        return None
    workers = min(int(config.llm_parallel), int(getattr(deps.llm, "parallel", None) or config.llm_parallel))
    if workers < 2:
        return None
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="adamm-extract")


def _extract_chunk(store: Store, deps: BuildDeps, rounds: Sequence[Round], ocr_by_round: dict[str, dict[str, str]],
                   pool, on_done: Callable[[int], None] | None) -> list:
    """The extraction results of `rounds`, in their order (`pool`: calls in flight at once).

    Image bytes are read here, on the calling thread (the store's connection is not shared
    with the workers). `on_done(n)` is called as the n-th result of the chunk arrives. An
    extractor that raises (model faults are already fallbacks) stops the chunk with that error;
    nothing of the chunk is stored (its transaction rolls back).
    """
    from .extract import run_extractor

    vision = deps.llm is not None and getattr(deps.llm, "vision", False)
    jobs = [(r, ocr_by_round.get(r.round_id, {}),
             {im.image_id: store.image_bytes(im.image_id) for im in r.images if im.sha256} if vision else None)
            for r in rounds]
    if pool is None:
        out = []
        for n, (r, ocr, images) in enumerate(jobs, start=1):
            out.append(run_extractor(deps.extractor, r, ocr, images=images))
            if on_done is not None:
                on_done(n)
        return out
    from concurrent.futures import as_completed

    futures = [pool.submit(run_extractor, deps.extractor, r, ocr, images=images) for r, ocr, images in jobs]
    for n, _ in enumerate(as_completed(futures), start=1):
        if on_done is not None:
            on_done(n)
    return [f.result() for f in futures]


def _ocr_texts(store: Store, round_ids: list[str]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    if not round_ids:
        return out
    rows = store.con.execute(
        "SELECT round_id, image_id, ocr_text FROM images WHERE round_id IN (SELECT unnest(?)) "
        "AND ocr_text IS NOT NULL AND ocr_text <> '' ORDER BY round_id, position",
        [round_ids],
    ).fetchall()
    for rid, iid, text in rows:
        out.setdefault(rid, {})[iid] = text
    return out


EMBED_CHUNK = 256  # texts per encoder call: the bar moves every few seconds on a long history


def _embed_texts(encoder, texts: list[str], progress: Progress) -> np.ndarray:
    """The texts' vectors in order, encoded in chunks so the "embed" stage reports real progress
    (k of n rounds); an empty list gives a (0, dim) array."""
    if not texts:
        return np.zeros((0, encoder.dim), np.float32)
    parts = []
    for k in range(0, len(texts), EMBED_CHUNK):
        progress("embed", k, len(texts))
        parts.append(np.asarray(encoder.encode(texts[k : k + EMBED_CHUNK])))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def _image_vectors(store: Store, encoder: ImageEncoder, pending: list[tuple[int, Round]]) -> dict[str, np.ndarray]:
    ids = [im.image_id for _, r in pending for im in r.images if im.sha256]
    if not ids:
        return {}
    blobs = [store.image_bytes(i) for i in ids]
    keep = [(i, b) for i, b in zip(ids, blobs) if b]
    if not keep:
        return {}
    vecs = encoder.encode_images([b for _, b in keep])
    return {i: vecs[k] for k, (i, _) in enumerate(keep)}


def _record_run(store: Store, report: BuildReport, images_ocr: int) -> None:
    from dataclasses import asdict

    run_id = store.con.execute("SELECT coalesce(max(run_id), 0) + 1 FROM runs").fetchone()[0]
    payload = asdict(report) | {"images_ocr_this_run": images_ocr}
    store.con.execute(
        "INSERT INTO runs VALUES (?, 'build', now() - to_microseconds(CAST(? * 1e6 AS BIGINT)), now(), ?)",
        [run_id, report.seconds, json.dumps(payload, default=str)],
    )
