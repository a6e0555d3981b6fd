"""A sweep: the same files evaluated under a grid of variants, pooled into one long table.

`python -m core eval FILES --out OUT --ablation full rag --set theta_s=3,4` runs every combination
(here 2 × 2 variants). Each variant is an ordinary eval in OUT/<variant>/ (its per-file folders and
pooled summary.json, reused on a rerun like any eval); OUT/sweep.csv then holds one row per
(file, variant, metric) — the file "(all)" is the variant's pooled figures — and OUT/sweep.json
lists the variants. The Evaluate page opens sweep.csv.
"""
from __future__ import annotations

import csv
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..config import DEFAULT, Config, parse_value
from ..errors import InputError

POOLED = "(all)"
COLUMNS = ("file", "variant", "ablation")


@dataclass(frozen=True)
class Variant:
    """One point of the grid: its folder name, its ablation, the swept parameters' values and the
    whole config (the fixed --set values included)."""
    name: str
    ablation: str
    params: tuple[tuple[str, object], ...]
    config: Config


def _parse(item: str) -> tuple[str, list[object]]:
    name, sep, text = item.partition("=")
    if not sep:
        raise InputError("--set", item, "expected NAME=VALUE or NAME=V1,V2,...")
    values = []
    for part in text.split(","):
        try:
            values.append(parse_value(name, part.strip()))
        except KeyError:
            raise InputError("--set", item, f"unknown parameter {name!r}") from None
        except ValueError:
            raise InputError("--set", item, f"{name} takes a {type(getattr(DEFAULT, name)).__name__}: "
                                            f"{part.strip()!r}") from None
    if len(set(map(repr, values))) != len(values):
        raise InputError("--set", item, "a value is given twice")
    return name, values


def variant_name(ablation: str, params: Sequence[tuple[str, object]]) -> str:
    """A folder name for a variant: the ablation, then name-value of each swept parameter."""
    return "__".join([ablation] + [f"{k}-{v}" for k, v in params]).replace("/", "_")


def grid(ablations: Sequence[str], set_items: Sequence[str], base: Config = DEFAULT) -> list[Variant]:
    """Every combination of `ablations` and of the values of each `--set NAME=V1,V2` (a single value is
    fixed for all). Raises InputError naming every bad item (unknown name, wrong type, value out of
    range, a value twice), not only the first."""
    faults, fixed, swept = [], {}, {}
    for item in set_items:
        try:
            name, values = _parse(item)
        except InputError as e:
            faults.append(str(e))
            continue
        if name in fixed or name in swept:
            faults.append(f"--set: {item}: {name} is set twice")
        elif len(values) == 1:
            fixed[name] = values[0]
        else:
            swept[name] = values
    if len(set(ablations)) != len(ablations):
        faults.append(f"--ablation: {' '.join(ablations)}: an ablation is given twice")
    variants = []
    for ablation in ablations:
        for combo in itertools.product(*swept.values()):
            params = tuple(zip(swept, combo))
            try:
                config = base.with_(**fixed, **dict(params))
            except ValueError as e:
                faults.append(f"--set: {e}")
                continue
            variants.append(Variant(variant_name(ablation, params), ablation, params, config))
    if faults:
        raise InputError("command line", "--set/--ablation", "; ".join(dict.fromkeys(faults)))
    return variants


def metric_rows(summary: dict) -> dict[str, float | None]:
    """The figures of one summary (a file's line or a pooled summary) by metric name."""
    out = {k: summary.get(k) for k in ("n", "accuracy", "mean_score", "evidence_recall", "flat_top10_recall",
                                       "llm_judge")}
    for bench, figs in (summary.get("benchmark") or {}).items():
        for k, v in figs.items():
            if k not in ("by_type",) and isinstance(v, (int, float)) and not isinstance(v, bool):
                out[f"{bench}.{k}"] = v
    out["false_refusal_share"] = summary.get("false_refusal_share",
                                             (summary.get("false_refusals") or {}).get("share"))
    out["right_refusal_share"] = summary.get("right_refusal_share",
                                             (summary.get("right_refusals") or {}).get("share"))
    return {k: v for k, v in out.items() if v is not None}


def table_rows(variant: Variant, summary: dict) -> list[dict]:
    """The long rows of one variant's summary: each file done (by stem), then the pooled figures."""
    base = {"variant": variant.name, "ablation": variant.ablation, **dict(variant.params)}
    rows = []
    files = summary.get("files")
    if files is None:  # one input file, flat layout: the summary is the file's
        name = Path((summary.get("input") or {}).get("path", "input")).stem
        files = [{"name": name, "status": "done", **summary}]
    for line in files:
        if line.get("status") == "failed":
            continue
        rows += [{"file": line["name"], **base, "metric": k, "value": v} for k, v in metric_rows(line).items()]
    if summary.get("files") is not None:
        rows += [{"file": POOLED, **base, "metric": k, "value": v} for k, v in metric_rows(summary).items()]
    return rows


def write_table(out: Path, variants: Sequence[Variant], summaries: Sequence[dict]) -> Path:
    """OUT/sweep.csv (file, variant, ablation, the swept parameters, metric, value) and OUT/sweep.json."""
    params = list(dict.fromkeys(k for v in variants for k, _ in v.params))
    rows = [r for v, s in zip(variants, summaries) for r in table_rows(v, s)]
    path = out / "sweep.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*COLUMNS, *params, "metric", "value"])
        w.writeheader()
        w.writerows(rows)
    (out / "sweep.json").write_text(json.dumps(
        {"variants": [{"name": v.name, "ablation": v.ablation, "params": dict(v.params),
                       "config": v.config.changes(), "files_done": s.get("files_done"),
                       "files_failed": s.get("files_failed")} for v, s in zip(variants, summaries)]},
        indent=1, default=str))
    return path


def run_sweep(inputs: Sequence[str], out_dir: str, variants: Sequence[Variant], run_one: Callable[..., dict],
              on_variant: Callable[[int, int, Variant], None] = lambda *a: None) -> list[dict]:
    """Each variant evaluated by `run_one(inputs, OUT/<variant>, config=, ablation=)` (runner.run_eval
    with the run's other settings bound), then the table written. Returns the variants' summaries."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summaries = []
    for k, v in enumerate(variants, start=1):
        on_variant(k, len(variants), v)
        summaries.append(run_one(list(inputs), str(out / v.name), config=v.config, ablation=v.ablation))
    write_table(out, variants, summaries)
    return summaries


def read_table(text: str, name: str = "sweep.csv") -> list[dict]:
    """The rows of a sweep.csv (`value` as a number; the other columns as text). Raises InputError
    naming the file and every fault (a missing column, a line whose value is not a number)."""
    lines = text.splitlines()
    reader = csv.DictReader(lines)
    header = reader.fieldnames or []
    missing = [c for c in (*COLUMNS, "metric", "value") if c not in header]
    if missing:
        raise InputError(name, "line 1", f"not a sweep table: no column {', '.join(missing)}")
    rows, faults = [], []
    for k, row in enumerate(reader, start=2):
        try:
            rows.append({**row, "value": float(row["value"])})
        except (TypeError, ValueError):
            faults.append(f"line {k}: value {row.get('value')!r} is not a number")
    if faults:
        raise InputError(name, faults[0].split(":")[0], "; ".join(faults[:20])
                         + (f" (and {len(faults) - 20} more)" if len(faults) > 20 else ""))
    if not rows:
        raise InputError(name, "", "the sweep table has no rows")
    return rows


def metrics(rows: Sequence[dict]) -> list[str]:
    """The metrics of a sweep table, accuracy first, in the order they appear."""
    names = list(dict.fromkeys(r["metric"] for r in rows))
    return sorted(names, key=lambda m: (m != "accuracy", names.index(m)))


def pivot(rows: Sequence[dict], metric: str) -> tuple[list[str], list[str], list[list[float | None]]]:
    """(files, variants, values[file][variant]) of one metric: the pooled row "(all)" first, then the
    files and the variants in the order they appear; None where a file has no figure (it failed)."""
    mine = [r for r in rows if r["metric"] == metric]
    files = list(dict.fromkeys(r["file"] for r in mine))
    files.sort(key=lambda f: f != POOLED)
    variants = list(dict.fromkeys(r["variant"] for r in mine))
    at = {(r["file"], r["variant"]): r["value"] for r in mine}
    return files, variants, [[at.get((f, v)) for v in variants] for f in files]
