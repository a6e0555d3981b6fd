"""The two comparison modes of the hierarchy against each other and against the first implementation.

    OMP_NUM_THREADS=1 .venv/bin/python bench/hierarchy_semantics.py [--ref c99b56a] [--locomo DIR] [--limit N] [--demo]

Three constructions of the same rounds with the real MiniLM (round texts
embedded once, in a batch, for all): `ref`, core/hierarchy as first committed
(--ref, read with `git show`, nothing checked out; paper-exact but one encoder
call and one topic refresh per insert, no batching); `desc`, today's code with
hierarchy_compare="description" (the default, paper-exact); `cent`, today's
code with hierarchy_compare="centroid" (the fast mode). Printed per history:
episodes and topics of each, the adjusted Rand index (1 = identical) of the
event->episode and event->topic partitions of desc vs ref and of cent vs desc,
and the construction time of each. --ref none skips the reference.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from math import comb
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.config import DEFAULT  # noqa: E402
from core.hierarchy import Hierarchy, event_text  # noqa: E402
from core.store import Store  # noqa: E402

FILES = ("__init__.py", "fusion.py", "index.py", "memory.py", "nodes.py", "views.py")


def reference_hierarchy(commit: str, folder: Path):
    """The Hierarchy class of core/hierarchy at `commit`, imported as core.hierarchy_ref."""
    pkg = folder / "hierarchy_ref"
    pkg.mkdir()
    for f in FILES:
        text = subprocess.run(["git", "show", f"{commit}:core/hierarchy/{f}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        (pkg / f).write_text(text)
    spec = importlib.util.spec_from_file_location("core.hierarchy_ref", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["core.hierarchy_ref"] = mod
    spec.loader.exec_module(mod)
    return mod.Hierarchy


def ari(a: list, b: list) -> float:
    """Adjusted Rand index of two labelings of the same items."""
    n = len(a)
    pairs = Counter(zip(a, b))
    sa, sb = Counter(a), Counter(b)
    idx = sum(comb(v, 2) for v in pairs.values())
    ea, eb = sum(comb(v, 2) for v in sa.values()), sum(comb(v, 2) for v in sb.values())
    expected = ea * eb / comb(n, 2) if n > 1 else 0.0
    top = (ea + eb) / 2 - expected
    return 1.0 if top == 0 else (idx - expected) / top


def build_with(cls, history, encoder, vectors, folder: Path, name: str, config=DEFAULT) -> tuple[dict, float]:
    with Store(folder / f"{name}.duckdb") as store:
        store.ingest(history)
        rounds = store.rounds()
        h = cls(store.con, encoder, None, config)
        t0 = time.perf_counter()
        with store.transaction():
            batch = getattr(h, "batch", None)
            if batch is not None:
                with batch():
                    for order, r in rounds:
                        h.insert(order, r, {}, text_vector=vectors[r.round_id])
            else:
                for order, r in rounds:
                    h.insert(order, r, {}, text_vector=vectors[r.round_id])
            h.finalize()
        seconds = time.perf_counter() - t0
        rows = store.con.execute(
            "SELECT e.node_id, e.parent_id, p.parent_id FROM nodes e JOIN nodes p ON p.node_id = e.parent_id "
            "WHERE e.level = 'event' ORDER BY e.first_order"
        ).fetchall()
    return {ev: (ep, tp) for ev, ep, tp in rows}, seconds


def compare(label: str, history, encoder, ref_cls, folder: Path) -> None:
    rounds = [r for s in history.sessions for r in s.rounds]
    vectors = dict(zip([r.round_id for r in rounds], encoder.encode([event_text(r, {}) for r in rounds])))
    desc, t_desc = build_with(Hierarchy, history, encoder, vectors, folder, f"{label}-desc",
                              DEFAULT.with_(hierarchy_compare="description"))
    cent, t_cent = build_with(Hierarchy, history, encoder, vectors, folder, f"{label}-cent",
                              DEFAULT.with_(hierarchy_compare="centroid"))
    ref, t_ref = (build_with(ref_cls, history, encoder, vectors, folder, f"{label}-ref") if ref_cls is not None
                  else (desc, float("nan")))
    evs = sorted(desc)

    def parts(h: dict, level: int) -> list:
        return [h[e][level] for e in evs]

    cells = [f"{label:10s} {len(evs):>6d}"]
    for level in (0, 1):
        r, d, c = parts(ref, level), parts(desc, level), parts(cent, level)
        cells.append(f"{len(set(r)):>5d} {len(set(d)):>5d} {len(set(c)):>5d} {ari(r, d):>6.3f} {ari(d, c):>6.3f}")
    cells.append(f"{t_ref:>6.1f} {t_desc:>6.1f} {t_cent:>6.1f}")
    print("  ".join(cells), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", default="c99b56a")
    ap.add_argument("--locomo", type=Path, default=ROOT.parent / "shared" / "data" / "locomo")
    ap.add_argument("--limit", type=int, default=2, help="LoCoMo files to use")
    ap.add_argument("--demo", action="store_true", help="also the bundled demo history (no images)")
    a = ap.parse_args(argv)
    import torch

    from core.encoders import MiniLMEncoder, load_minilm
    from core.formats import read_file

    torch.set_num_threads(1)
    encoder = MiniLMEncoder(load_minilm())
    histories = []
    if a.demo:
        histories.append(("demo", read_file(ROOT / "data" / "demo" / "demo.json", allow_missing_images=True)[0]))
    for f in sorted(a.locomo.glob("*.json"))[: a.limit]:
        histories.append((f"locomo{f.stem}", read_file(f, allow_missing_images=True)[0]))
    head = "  ".join(f"{p}ref {p}desc {p}cent {'d~r':>6s} {'c~d':>6s}".replace("ep", "ep:").replace("tp", "tp:")
                     for p in ("ep", "tp"))
    print("episodes (ep:) and topics (tp:) per construction; d~r, c~d: adjusted Rand index desc vs ref, cent vs desc")
    print(f"{'history':10s} {'events':>6s}  {head}  {'ref s':>6s} {'desc s':>6s} {'cent s':>6s}")
    with tempfile.TemporaryDirectory() as tmp:
        ref_cls = None if a.ref == "none" else reference_hierarchy(a.ref, Path(tmp))
        for label, h in histories:
            if label == "demo":  # the semantics question is about text: drop the images' bytes
                from dataclasses import replace

                h = replace(h, sessions=tuple(replace(s, rounds=tuple(
                    replace(r, images=tuple(replace(i, data=None) for i in r.images)) for r in s.rounds))
                    for s in h.sessions))
            compare(label, h, encoder, ref_cls, Path(tmp))


if __name__ == "__main__":
    main()
