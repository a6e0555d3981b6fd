"""Build the retrieval hierarchy of each LoCoMo conversation with the real MiniLM and print its shape.

    OMP_NUM_THREADS=1 .venv/bin/python bench/hierarchy_locomo.py [LOCOMO_DIR] [--limit N] [--mode description|centroid]

No images (LoCoMo ships captions only). For each conversation: events,
episodes, topics, episode length min/median/max, the share of one-event
episodes, how many rounds joined the open episode, and the number of episodes
whose consecutive members lie more than a day apart (must be 0), plus build
time and a sample description.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.config import DEFAULT  # noqa: E402
from core.formats import read_file  # noqa: E402
from core.hierarchy import Hierarchy, event_text  # noqa: E402
from core.store import Store  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo"


def crossing_episodes(con, max_gap_hours: float) -> int:
    """Episodes with two consecutive events more than max_gap_hours apart."""
    return con.execute(
        """
        SELECT count(DISTINCT parent_id) FROM (
            SELECT parent_id, t_start - lag(t_start) OVER (PARTITION BY parent_id ORDER BY first_order) AS gap
            FROM nodes WHERE level = 'event')
        WHERE gap > to_hours(CAST(? AS BIGINT))
        """,
        [int(max_gap_hours)],
    ).fetchone()[0]


def main(argv: list[str]) -> None:
    import torch

    from core.encoders import MiniLMEncoder, load_minilm

    torch.set_num_threads(1)
    args = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] not in ("--limit", "--mode"))]
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else None
    folder = Path(args[0]) if args and not args[0].isdigit() else DEFAULT_DIR
    files = sorted(folder.glob("*.json"))
    if not files:
        sys.exit(f"no LoCoMo JSON files in {folder}")
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else DEFAULT.hierarchy_compare
    config = DEFAULT.with_(hierarchy_compare=mode)
    encoder = MiniLMEncoder(load_minilm())
    print(f"encoder {encoder.name}; θ_epi={DEFAULT.theta_epi} θ_topic={DEFAULT.theta_topic} "
          f"max gap {DEFAULT.episode_max_gap_hours} h; compare with the episode's {mode}")
    header = f"{'conv':>5} {'sess':>4} {'events':>6} {'episodes':>8} {'topics':>6} {'ep len min/med/max':>18} " \
             f"{'1-event':>7} {'joined':>6} {'cross>1d':>8} {'multi-sess':>10} {'s/build':>7} {'ms/round':>8}"
    print(header)
    totals = {"events": 0, "episodes": 0, "topics": 0, "cross": 0}
    for f in files:
        history = read_file(f, allow_missing_images=True)[0]
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "m.duckdb")
            store.ingest(history)
            rounds = store.rounds()
            if limit:
                rounds = rounds[:limit]
            t0 = time.perf_counter()
            vectors = encoder.encode([event_text(r, {}) for _, r in rounds])
            h = Hierarchy(store.con, encoder, None, config)
            joined = 0
            with store.transaction():
                for k, (order, r) in enumerate(rounds):
                    res = h.insert(order, r, {}, text_vector=vectors[k])
                    joined += not res.opened_episode
                h.finalize()
            seconds = time.perf_counter() - t0
            counts = h.counts()
            lengths = [n.n_members for n in h.tree(["episode"])]
            cross = crossing_episodes(store.con, DEFAULT.episode_max_gap_hours)
            multi = store.con.execute(
                "SELECT count(*) FROM (SELECT e.parent_id FROM nodes e JOIN rounds r ON r.round_id = e.round_id "
                "WHERE e.level = 'event' GROUP BY e.parent_id HAVING count(DISTINCT r.session_id) > 1)"
            ).fetchone()[0]
            longest = max(h.tree(["episode"]), key=lambda n: n.n_members)
            sample = h.node(longest.node_id).description
            store.close()
        print(f"{f.stem:>5} {len(history.sessions):>4} {counts['event']:>6} {counts['episode']:>8} "
              f"{counts['topic']:>6} {min(lengths):>6}/{statistics.median(lengths):>4g}/{max(lengths):<6} "
              f"{sum(n == 1 for n in lengths) / len(lengths):>7.0%} {joined:>6} {cross:>8} {multi:>10} "
              f"{seconds:>7.1f} {1000 * seconds / max(len(rounds), 1):>8.1f}")
        print(f"      longest episode ({longest.n_members} events): {sample}")
        totals["events"] += counts["event"]
        totals["episodes"] += counts["episode"]
        totals["topics"] += counts["topic"]
        totals["cross"] += cross
    print(f"total: {totals['events']} events, {totals['episodes']} episodes, {totals['topics']} topics, "
          f"{totals['cross']} episodes crossing a gap of more than a day")


if __name__ == "__main__":
    main(sys.argv[1:])
