"""Late fusion of text and visual similarity (paper eq. 13).

s(u, v) = λ̄_text cos(text_u, text_v) + λ̄_vis cos(vis_u, vis_v), with the
weights renormalized over the modalities *both* nodes have: when either side
has no visual embedding the visual term is omitted (s = text cosine), never
scored as a zero vector (which would cap s at w_text).
"""
from __future__ import annotations

import numpy as np


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def normalize(v: np.ndarray) -> np.ndarray:
    """L2-normalized float32 copy; a zero vector stays zero."""
    v = np.asarray(v, dtype=np.float32).reshape(-1)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v.copy()


def mean_direction(vectors: list[np.ndarray]) -> np.ndarray | None:
    """Normalized mean of vectors (eq. 12), or None when there are none."""
    if not vectors:
        return None
    return normalize(np.mean(np.stack([np.asarray(v, np.float32) for v in vectors]), axis=0))


def fused_similarity(
    a_text: np.ndarray | None,
    a_vis: np.ndarray | None,
    b_text: np.ndarray | None,
    b_vis: np.ndarray | None,
    w_text: float,
    w_vis: float,
) -> float:
    """Fused similarity of two nodes; modalities missing on either side are left out of the weighting.

    Returns 0.0 when the two nodes share no modality. Raises ValueError for
    negative weights or vectors of different lengths within a modality.
    """
    if w_text < 0 or w_vis < 0:
        raise ValueError(f"fusion weights must be non-negative, got text={w_text}, visual={w_vis}")
    total = 0.0
    weight = 0.0
    for a, b, w in ((a_text, b_text, w_text), (a_vis, b_vis, w_vis)):
        if a is None or b is None or w == 0:
            continue
        a = np.asarray(a, np.float32).reshape(-1)
        b = np.asarray(b, np.float32).reshape(-1)
        if a.shape != b.shape:
            raise ValueError(f"cannot compare embeddings of length {a.size} and {b.size}")
        total += w * _cos(a, b)
        weight += w
    return total / weight if weight > 0 else 0.0


def fused_scores(
    q_text: np.ndarray | None,
    q_vis: np.ndarray | None,
    text: np.ndarray,
    vis: np.ndarray,
    has_vis: np.ndarray,
    w_text: float,
    w_vis: float,
) -> np.ndarray:
    """Vectorized fused_similarity of one query against n nodes.

    text: (n, d) normalized rows; vis: (n, dv) normalized rows (zeros where
    has_vis is False); has_vis: (n,) bool. A node without a visual embedding
    (or a query without one) is scored on text alone.
    """
    n = text.shape[0]
    num = np.zeros(n, dtype=np.float32)
    den = np.zeros(n, dtype=np.float32)
    if q_text is not None and n:
        if text.shape[1] != np.asarray(q_text).size:
            raise ValueError(
                f"query text vector has length {np.asarray(q_text).size}, stored ones {text.shape[1]}: "
                "the memory was built with another text encoder"
            )
        num += w_text * (text @ normalize(q_text))
        den += w_text
    if q_vis is not None and w_vis > 0 and n and has_vis.any():
        if vis.shape[1] != np.asarray(q_vis).size:
            raise ValueError(
                f"query visual vector has length {np.asarray(q_vis).size}, stored ones {vis.shape[1]}: "
                "the memory was built with another image encoder"
            )
        mask = has_vis.astype(np.float32)
        num += w_vis * mask * (vis @ normalize(q_vis))
        den += w_vis * mask
    return np.divide(num, den, out=np.zeros(n, dtype=np.float32), where=den > 0)
