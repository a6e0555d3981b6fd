"""Batch evaluation on Ray against the serial run, on this machine.

    OMP_NUM_THREADS=1 .venv/bin/python bench/ray_bench.py [--files 20] [--workers 2] [--limit N]
        [--data ../shared/data/mem-gallery]

The inputs are the Mem-Gallery files of --data (captions only: their images are not shipped, so
--allow-missing-images), repeated under new names until there are --files of them. Each is
evaluated once serially (one process, its models loaded once) and once on a local Ray instance with
--workers workers (each loading its own models), both through core.evaluation.runner.run_eval as
`python -m core eval` runs them. Printed:
  serial_files_per_min / ray_files_per_min / speedup   wall clock of the whole run, model loading
                                                      and Ray's start-up and teardown included
  ray_start_s / ray_teardown_s    ray.init + the workers answering, and shutdown
  serial_peak_mib / worker_peak_mib   peak resident memory of the serial process / of each worker
  differences                     files whose predictions or summary differ (timings aside)
  one_file_serial_s / one_file_ray_s / ray_overhead_s   `python -m core eval` of one small generated
                                                      history without and with --workers 1 (new processes)
Targets (issue 22): speedup >= 1.7 with 2 workers; Ray start-up + teardown <= 15 s; no difference.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
def inputs(data: Path, n: int, folder: Path) -> list[Path]:
    """--files copies of the dataset's files (round robin), each under its own name."""
    src = sorted(p for p in data.glob("*.json"))
    if not src:
        raise SystemExit(f"no JSON file in {data}: give --data")
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(n):
        p = src[k % len(src)]
        dst = folder / f"{k + 1:02d}-{p.stem}.json"
        shutil.copyfile(p, dst)
        out.append(dst)
    return out


def differences(a: Path, b: Path) -> int:
    from core.evaluation.runner import untimed

    n = 0
    for sub in sorted(p for p in a.iterdir() if p.is_dir()):
        other = b / sub.name
        same = (other / "summary.json").exists() and \
            untimed(json.loads((sub / "summary.json").read_text())) == \
            untimed(json.loads((other / "summary.json").read_text())) and \
            [untimed(json.loads(x)) for x in (sub / "predictions.jsonl").read_text().splitlines()] == \
            [untimed(json.loads(x)) for x in (other / "predictions.jsonl").read_text().splitlines()]
        n += not same
    return n


def one_file(tmp: Path) -> tuple[float, float]:
    """Wall clock of `python -m core eval` on one small history, serially and with --workers 1."""
    from history_factory import write_health_history

    (tmp / "small").mkdir(parents=True, exist_ok=True)
    path = write_health_history(tmp / "small", n_sessions=4, rounds_per_session=4)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    times = []
    for extra in ([], ["--workers", "1"]):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "core", "eval", str(path), "--out", str(tmp / f"one{len(extra)}"),
                        "--quiet", *extra], cwd=ROOT, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="questions per file (default: all)")
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "mem-gallery"))
    args = ap.parse_args()
    import ray

    from core.batch import RayPool
    from core.evaluation.runner import run_eval

    tmp = Path(tempfile.mkdtemp(prefix="ray-bench-"))
    try:
        files = inputs(Path(args.data), args.files, tmp / "in")
        kw = dict(allow_missing_images=True, limit=args.limit)
        t0 = time.perf_counter()
        serial = run_eval([str(f) for f in files], str(tmp / "serial"), **kw)
        serial_s = time.perf_counter() - t0
        serial_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"serial: {len(files)} files, {serial['n']} questions in {serial_s:.1f} s", flush=True)

        t0 = time.perf_counter()
        pool = RayPool(args.workers)
        pool.__enter__()
        try:
            pool.worker_info()  # the workers are up
            start_s = time.perf_counter() - t0
            par = run_eval([str(f) for f in files], str(tmp / "ray"), pool=pool, **kw)
            info = pool.worker_info()
        finally:
            t1 = time.perf_counter()
            pool.__exit__(None, None, None)
            teardown_s = time.perf_counter() - t1
        ray_s = time.perf_counter() - t0
        assert not ray.is_initialized()
        print(f"ray: {len(files)} files, {par['n']} questions in {ray_s:.1f} s on {args.workers} workers", flush=True)
        one_serial, one_ray = one_file(tmp)
        figures = {
            "files": len(files), "questions": serial["n"], "workers": args.workers,
            "serial_files_per_min": round(60 * len(files) / serial_s, 2),
            "ray_files_per_min": round(60 * len(files) / ray_s, 2),
            "speedup": round(serial_s / ray_s, 2),
            "ray_start_s": round(start_s, 1), "ray_teardown_s": round(teardown_s, 1),
            "serial_peak_mib": round(serial_peak), "worker_peak_mib": [round(w["peak_rss_mib"]) for w in info],
            "worker_files": [w["files"] for w in info],
            "differences": differences(tmp / "serial", tmp / "ray"),
            "one_file_serial_s": round(one_serial, 1), "one_file_ray_s": round(one_ray, 1),
            "ray_overhead_s": round(one_ray - one_serial, 1),
        }
        for k, v in figures.items():
            print(f"{k}={v}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
