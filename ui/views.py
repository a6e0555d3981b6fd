"""Small render helpers shared by pages (a round with its images and OCR text)."""
from __future__ import annotations

import html

import streamlit as st

from core.store import Store



def image_cell(store: Store, image_id: str) -> None:
    """A stored image with its id as caption; a note instead when it is missing or no longer decodes."""
    data = store.image_bytes(image_id)
    if not data:
        st.caption(f"{image_id} (image not available)")
        return
    try:
        st.image(data, caption=image_id, width="stretch")
    except Exception as e:  # a stored blob that no longer decodes: say so, keep the page
        st.warning(f"{image_id}: cannot display ({type(e).__name__})")

def highlight(text: str, start: int | None, end: int | None) -> str:
    """HTML of `text` with [start, end) marked; everything escaped."""
    if start is None or end is None or not (0 <= start <= end <= len(text)):
        return html.escape(text)
    return (html.escape(text[:start]) + "<mark>" + html.escape(text[start:end]) + "</mark>"
            + html.escape(text[end:]))


def round_view(store: Store, round_id: str, *, span: tuple[int, int, int] | None = None,
               image_focus: str | None = None, expanded: bool = False) -> None:
    """A round's dialogue (optionally one utterance span highlighted), images, captions and OCR text.

    span: (utterance_index, start, end).
    """
    got = store.get_round(round_id)
    if got is None:
        st.warning(f"Round {round_id} is not in this memory.")
        return
    order, r = got
    with st.expander(f"{r.round_id} · {r.time:%Y-%m-%d %H:%M} · #{order}", expanded=expanded):
        for i, u in enumerate(r.dialogue):
            text = highlight(u.text, span[1], span[2]) if span and span[0] == i else html.escape(u.text)
            st.markdown(f"**{html.escape(u.speaker)}:** {text}", unsafe_allow_html=True)
        for img in r.images:
            info = store.image_info(img.image_id) or {}
            c1, c2 = st.columns([1, 2])
            with c1:
                image_cell(store, img.image_id)
            with c2:
                if img.caption:
                    st.markdown(f"*Caption:* {html.escape(img.caption)}")
                if info.get("ocr_text"):
                    st.markdown("*OCR text:*" + (" (source of the selected value)" if image_focus == img.image_id else ""))
                    st.code(info["ocr_text"], language=None)


# ---------------------------------------------------------------------- added for the explorer pages
def highlight_spans(text: str, spans) -> str:
    """HTML of `text` with every valid [start, end) span marked (overlaps merged); everything escaped."""
    good = sorted((s, e) for s, e in spans if s is not None and e is not None and 0 <= s < e <= len(text))
    merged: list[list[int]] = []
    for s, e in good:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    out, pos = [], 0
    for s, e in merged:
        out.append(html.escape(text[pos:s]) + "<mark>" + html.escape(text[s:e]) + "</mark>")
        pos = e
    return "".join(out) + html.escape(text[pos:])


def observation_rows(store: Store, round_id: str, attributes=None) -> list[dict]:
    """The observations of a round (optionally only some attributes), as dicts in extraction order."""
    rows = store.con.execute(
        "SELECT seq, attribute, raw_value, number, unit, source, utterance_index, span_start, span_end, image_id "
        "FROM observations WHERE round_id = ? ORDER BY seq", [round_id]).fetchall()
    keys = ("seq", "attribute", "raw_value", "number", "unit", "source", "utterance_index", "span_start",
            "span_end", "image_id")
    out = [dict(zip(keys, r)) for r in rows]
    if attributes is not None:
        wanted = set(attributes)
        out = [o for o in out if o["attribute"] in wanted]
    return out


def provenance_view(store: Store, round_id: str, observations: list[dict]) -> None:
    """Where values came from: the round's dialogue with each extracted span highlighted, each image
    with its caption and OCR text (the extracted spans highlighted there too)."""
    got = store.get_round(round_id)
    if got is None:
        st.warning(f"Round {round_id} is not in this memory.")
        return
    order, r = got
    st.markdown(f"**{html.escape(r.round_id)}** · {r.time:%Y-%m-%d %H:%M} · round #{order}")
    if observations:
        st.dataframe(
            [{"attribute": o["attribute"], "value": o["raw_value"], "unit": o["unit"], "from": o["source"]
              + (f" {o['image_id']}" if o.get("image_id") else "")} for o in observations],
            hide_index=True, width="stretch")
    for i, u in enumerate(r.dialogue):
        spans = [(o["span_start"], o["span_end"]) for o in observations
                 if o["source"] == "dialogue" and o["utterance_index"] == i]
        st.markdown(f"**{html.escape(u.speaker)}:** {highlight_spans(u.text, spans)}", unsafe_allow_html=True)
    for img in r.images:
        info = store.image_info(img.image_id) or {}
        c1, c2 = st.columns([1, 2])
        with c1:
            image_cell(store, img.image_id)
        with c2:
            mine = [o for o in observations if o.get("image_id") == img.image_id]
            if img.caption:
                spans = [(o["span_start"], o["span_end"]) for o in mine if o["source"] == "caption"]
                st.markdown(f"*Caption:* {highlight_spans(img.caption, spans)}", unsafe_allow_html=True)
            if info.get("ocr_text"):
                spans = [(o["span_start"], o["span_end"]) for o in mine if o["source"] == "ocr"]
                st.markdown("*OCR text*" + (" (extracted values highlighted)" if spans else "") + ":")
                st.markdown(
                    "<pre style='white-space:pre-wrap'>" + highlight_spans(info["ocr_text"], spans) + "</pre>",
                    unsafe_allow_html=True)


def validation_rows(report) -> list[dict]:
    """One row per file of a core.formats.UploadReport: file, format, counts, first error with its place.

    A file with several faults says how many ("(+N more)"); the boxes below the table list them."""
    rows = []
    for f in report.files:
        fmt = f.histories[0].format if f.histories else ""
        err = ""
        if f.error is not None:
            err = (f"{f.error.place}: " if getattr(f.error, "place", "") else "") + str(getattr(f.error, "fault", f.error))
            extra = getattr(f.error, "count", 1) - 1
            if extra:
                err += f" (+{extra} more)"
        warnings = getattr(f, "warnings", ())
        rows.append({"file": f.name, "format": fmt, "sessions": f.sessions, "rounds": f.rounds,
                     "images": f"{f.images_loaded}/{f.images}" if f.images else "0", "QAs": f.qas,
                     "status": "ok" if f.ok else "error", "warnings": len(warnings), "error": err})
    return rows


def step_view(step: dict, utility: dict | None = None) -> None:
    """One executed plan step (a StepRecord as a dict): arguments, result, budget, tokens, time.

    utility: {unit key: learned utility U} (core.utility); when given, retrieved units show their U.
    """
    icon = {"ok": ":material/check_circle:", "error": ":material/error:", "refused": ":material/block:",
            "skipped": ":material/skip_next:"}.get(step["status"], "•")
    st.markdown(f"{icon} **Step {step['index'] + 1} · {step['tool']}** — {html.escape(step['goal'])}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Budget left", f"{step['budget_after']}", delta=step["budget_after"] - step["budget_before"] or None)
    c2.metric("Evidence units", len(step.get("units") or []))
    c3.metric("Tokens", (step.get("prompt_tokens") or 0) + (step.get("completion_tokens") or 0),
              help=f"prompt {step.get('prompt_tokens') or 0} + completion {step.get('completion_tokens') or 0}")
    c4.metric("ms", f"{step.get('ms') or 0:.0f}")
    st.caption("Arguments")
    st.json(step.get("args") or {}, expanded=True)
    if step.get("summary"):
        st.markdown(f"**Result:** {html.escape(step['summary'])}")
    if step.get("error"):
        st.error(step["error"])
    if step.get("rows") and step.get("columns"):
        rows = [dict(zip(step["columns"], r)) for r in step["rows"]]
        if utility is not None and "node_id" in step["columns"]:  # retrieval hits: their learned utility
            for r in rows:
                r["U (learned)"] = utility.get(str(r["node_id"]))
        st.dataframe(rows, hide_index=True, width="stretch")
    elif step.get("units"):
        rows = []
        for u in step["units"]:
            row = {"unit": u["unit_id"], "kind": u["kind"], "score": u.get("score")}
            if utility is not None:
                row["U (learned)"] = utility.get(u["unit_id"]) if u["kind"] != "computed" else None
            row.update({"time": u.get("time"), "rounds": ", ".join(u.get("rounds") or []), "text": u["text"][:200]})
            rows.append(row)
        st.dataframe(rows, hide_index=True, width="stretch")
    if step.get("sql"):
        with st.expander("SQL"):
            st.code(step["sql"], language="sql")
            if step.get("params"):
                st.caption(f"parameters: {step['params']}")
    for n in step.get("notes") or []:
        st.caption(n)


def evidence_view(store: Store, rounds, *, limit: int = 10) -> None:
    """The answer's evidence: each source round (dialogue, images, OCR text) in an expander."""
    rounds = list(rounds)
    if not rounds:
        st.caption("No evidence rounds.")
        return
    st.caption(f"{len(rounds)} source round(s)" + (f"; the first {limit} shown" if len(rounds) > limit else ""))
    for rid in rounds[:limit]:
        round_view(store, rid)


def render_validation(report) -> list:
    """Show a core.formats.UploadReport and return the good histories.

    A table per file, then per failed file one error box listing every fault
    (place: fault, and how many were left out), and per accepted file with
    warnings one warning box listing them."""
    def fault_text(e) -> str:  # the file, then its fault or the list of its faults (place: fault)
        faults = list(getattr(e, "faults", ((e.place, e.fault),)))
        unlisted = getattr(e, "unlisted", 0)
        if len(faults) == 1 and not unlisted:
            return f"**{e.file}**" + (f" at `{e.place}`" if e.place else "") + f": {e.fault}"
        lines = [f"- `{place}`: {fault}" if place else f"- {fault}" for place, fault in faults]
        if unlisted:
            lines.append(f"- ... and {unlisted} more")
        return f"**{e.file}**: {len(faults) + unlisted} faults\n\n" + "\n".join(lines)

    if report.error is not None:
        st.error(fault_text(report.error))
    rows = validation_rows(report)
    if rows:
        st.dataframe(rows, hide_index=True, width="stretch",
                     column_config={"error": st.column_config.TextColumn("error (place: fault)", width="large")})
    for f in report.files:
        if f.error is not None:
            st.error(fault_text(f.error))
        elif getattr(f, "warnings", ()):
            st.warning(f"**{f.name}** is accepted, but:\n" + "".join(f"\n- {w}" for w in f.warnings))
    return [h for f in report.files if f.ok for h in f.histories]
