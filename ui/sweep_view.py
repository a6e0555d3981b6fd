"""The Evaluate page's sweep viewer: a sweep.csv written by `python -m core eval ... --ablation A B
--set NAME=V1,V2` (core/evaluation/sweep.py), one metric at a time as a file × variant grid.

Rendering only: the table is read, checked and pivoted by core.evaluation.sweep; the grid is
charts.sweep_figure. The table comes from an upload or from a path on this machine (an OUT folder or
its sweep.csv).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.errors import InputError
from core.evaluation.sweep import POOLED, metrics, pivot, read_table

from . import charts


def _source() -> tuple[str, str] | None:
    """(name, text) of the table chosen by upload or path; None when none is chosen or it cannot be read."""
    up = st.file_uploader("sweep.csv", type=["csv"], key="sw_upload")
    typed = st.text_input("or its path on this machine (the sweep's OUT folder or its sweep.csv)", key="sw_path")
    if up is not None:
        return up.name, up.getvalue().decode("utf-8", errors="replace")
    if typed.strip():
        p = Path(typed.strip()).expanduser()
        p = p / "sweep.csv" if p.is_dir() else p
        try:
            return str(p), p.read_text()
        except OSError as e:
            st.error(f"{p}: cannot read it: {e.strerror or e}")
    return None


def sweep_section() -> None:
    """An expander that opens a sweep table and draws one metric of it."""
    with st.expander("Open a sweep (sweep.csv of `python -m core eval FILES --out OUT --ablation A B "
                     "--set NAME=V1,V2`)"):
        chosen = _source()
        if chosen is None:
            st.caption("A sweep evaluates the same files under every combination of the ablations and "
                       "parameter values given; its OUT/sweep.csv has one row per file, variant and metric.")
            return
        name, text = chosen
        try:
            rows = read_table(text, name)
        except InputError as e:
            st.error(str(e))
            return
        names = metrics(rows)
        metric = st.selectbox("Metric", names, key="sw_metric")
        files, variants, values = pivot(rows, metric)
        st.caption(f"{len(variants)} variant(s) × {len(files) - (POOLED in files)} file(s); the row {POOLED} is "
                   "each variant's figure over all its questions (pooled, not the mean of the files).")
        st.plotly_chart(charts.sweep_figure(files, variants, values, metric=metric), width="stretch",
                        key="sw_chart")
        st.dataframe([{"file": f, **{v: x for v, x in zip(variants, row)}} for f, row in zip(files, values)],
                     hide_index=True, width="stretch")
