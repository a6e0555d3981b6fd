"""Upload & build: validate MemEye / LoCoMo files with their images, then build (or continue) the memory."""
from __future__ import annotations

import hashlib
import time
from dataclasses import asdict
from pathlib import Path

import streamlit as st

from core.errors import InputError
from core.formats import read_upload
from ui import data, links, resources, state
from ui.build_progress import StageClock
from ui.engine import config, cost_text, llm_for, meter_of, model_name
from ui.resources import store_or_none
from ui.views import render_validation

MB = 1024 * 1024
STAGE_LABELS = {
    "store": "Rounds stored", "ocr": "Images OCR'd", "embed": "Texts and images embedded",
    "extract": "Rounds read by the language model (extraction)",
    "rounds": "Rounds processed (observations, schemas, episodes)",
    "realign": "Fields re-aligned (one kind of record named two ways)",
}
IMAGE_TYPES = ["png", "jpg", "jpeg", "webp", "gif", "bmp", "tif", "tiff"]

path = state.store_path()
st.title("Upload & build")
st.caption("Upload MemEye / Mem-Gallery or LoCoMo JSON files with their images (as separate files or in one zip). "
           "Every file is checked before anything is stored; a build adds only new rounds, so new sessions "
           "continue an existing memory.")
st.markdown(f"Memory: **{Path(path).stem}** (`{path}`) — choose or create another one in the sidebar.")

# ------------------------------------------------------------------ limits
cfg = config()
with st.expander("Limits"):
    l1, l2, l3 = st.columns(3)
    up_mb = l1.number_input("Upload size (MB)", 1, 4096, max(1, cfg.max_upload_bytes // MB), key="upl_max_mb")
    px = l2.number_input("Image size (megapixels)", 1, 500, max(1, cfg.max_image_pixels // 1_000_000), key="upl_max_px")
    nr = l3.number_input("Rounds per upload", 1, 10_000_000, cfg.max_rounds_per_upload, key="upl_max_rounds")
    over = dict(state.get(state.CONFIG_OVERRIDES) or {})
    over.update(max_upload_bytes=int(up_mb) * MB, max_image_pixels=int(px) * 1_000_000, max_rounds_per_upload=int(nr))
    state.put(state.CONFIG_OVERRIDES, over)
    cfg = config()
    server_mb = st.get_option("server.maxUploadSize")
    st.caption(f"The browser upload is also capped at {server_mb} MB per file by the server "
               "(`streamlit run app.py --server.maxUploadSize N`).")

_COMPARE = {"description": "the episode's description (paper; re-embedded after each round)",
            "centroid": "the mean of the episode's rounds (faster on long histories)"}
with st.expander("Retrieval memory"):
    mode = st.radio("Compare a new round with", list(_COMPARE), format_func=_COMPARE.get,
                    index=list(_COMPARE).index(cfg.hierarchy_compare), key="upl_hier_compare")
    over = dict(state.get(state.CONFIG_OVERRIDES) or {})
    over["hierarchy_compare"] = mode
    state.put(state.CONFIG_OVERRIDES, over)
    cfg = config()
    st.caption("Either way an episode's stored embedding is its description's, so search is the same; the "
               "grouping differs (`bench/hierarchy_semantics.py`). A memory can be continued in the other mode.")

store = store_or_none(path) if Path(path).exists() else None
if store is not None:
    s = store.summary()
    st.caption(f"This memory holds {s['sessions']} session(s), {s['rounds']} round(s), {s['images']} image(s), "
               f"{s['schemas']} schema(s).")


def _deps(store, llm):
    from core.deps import make_build_deps

    return make_build_deps(cfg, cache_con=store.con, llm=llm, text_encoder=resources.text_encoder(),
                           ocr=resources.ocr_engine(), image_encoder=resources.image_encoder())


def usage_of(meter, since: int, model: str | None) -> dict:
    """What a build spent on the language model: calls, cached calls, fallbacks, tokens and the model name."""
    if meter is None:
        return {"model": model, "calls": 0, "cached": 0, "fallbacks": 0, "prompt_tokens": 0, "completion_tokens": 0}
    u = meter.usage(since)
    return {"model": model, "calls": u.calls, "cached": u.cached_calls, "fallbacks": u.fallbacks,
            "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}


def run_build(histories: list) -> None:
    """Build `histories` into the memory (or only its pending rounds) with a status box and progress."""
    from core.build import build

    target = store_or_none(path)
    if target is None:
        return
    tables_before = data.table_sizes(target)
    with st.status("Building the memory...", expanded=True) as status:
        loading = st.empty()
        loading.write("Loading the models (text encoder, OCR; the first build of this app run takes longest)...")
        llm = llm_for(target)
        meter = meter_of(llm)
        mark = meter.mark() if meter is not None else 0
        deps = _deps(target, llm)
        loading.write("Models ready.")
        bar = st.progress(0.0)
        lines = st.empty()
        clock = StageClock()
        last = [0.0]

        def progress(stage: str, done: int, total: int) -> None:
            now = time.monotonic()
            clock.update(stage, done, total, now)
            if done < total and done > 0 and now - last[0] < 0.25:
                return  # redraw a few times a second, not for every round (a stage's start always shows)
            last[0] = now
            bar.progress(done / total if total else 1.0, text=clock.line(stage, STAGE_LABELS.get(stage, stage)))
            md = []
            for k in clock.state:
                mark = ":material/check_circle:" if clock.finished(k) else ":material/hourglass_top:"
                md.append(f"{mark} {clock.line(k, STAGE_LABELS.get(k, k))}")
            if stage == "rounds":
                s = target.summary()
                md.append(f"observations **{s.get('observations', 0)}** · schemas **{s['schemas']}** · "
                          f"episodes **{s.get('episodes', 0)}**")
            lines.markdown("  \n".join(md))

        try:
            report = build(target, histories, deps, cfg, progress)
        except InputError as e:
            status.update(label="Build stopped: bad input", state="error")
            st.error(str(e))
            return
        except Exception as e:  # keep the page: the memory keeps every round committed before the fault
            status.update(label="Build failed", state="error")
            st.error(f"The build failed: {type(e).__name__}: {e}. Rounds processed before the fault are kept; "
                     "press build again to continue.")
            return
        bar.progress(1.0, text="Done")
        status.update(label=f"Built in {report.seconds:.1f} s: {report.rounds_added} new round(s)", state="complete",
                      expanded=False)
    after = data.table_sizes(target)
    st.session_state["_upl_report"] = asdict(report) | {
        "usage": usage_of(meter, mark, model_name(llm)),
        "new_tables": sorted(set(after) - set(tables_before)),
        "grown_tables": sorted(t for t in after if t in tables_before and after[t] > tables_before[t]),
        "table_rows": after}
    st.session_state["_upl_nonce"] = st.session_state.get("_upl_nonce", 0) + 1  # clear the uploader


def build_links(last: dict) -> None:
    """Where to go after a build: the tables it made or filled (each a link to it), the schemas page."""
    new, grown, rows = last.get("new_tables") or [], last.get("grown_tables") or [], last.get("table_rows") or {}
    if new or grown:
        st.markdown(f"**{len(new)} new table(s)**" + (f", {len(grown)} with new rows" if grown else "") + ":")
        for name in [*new, *grown]:
            links.page_link("app_pages/tables.py", f"{name} ({rows.get(name, 0)} rows)" + (" · new" if name in new else ""),
                            icon=":material/table:", table=name)
    elif last.get("rounds_added"):
        st.caption("No new table: no recurring set of attributes reached the support and confidence thresholds yet.")
    links.page_link("app_pages/schemas.py", "See the schemas being discovered →")


# ------------------------------------------------------------------ upload and validation
fmt_choice = st.radio("Format", ["detect", "memeye", "locomo"], horizontal=True, key="upl_fmt")
allow_missing = st.checkbox("Accept files whose images are missing (keep their captions only)", key="upl_allow_missing")
files = st.file_uploader("JSON files, images, or one zip with both", accept_multiple_files=True,
                         type=["json", "zip", *IMAGE_TYPES], key=f"upl_files_{st.session_state.get('_upl_nonce', 0)}")

if files:
    payload = [(f.name, f.getvalue()) for f in files]
    digest = hashlib.sha256()
    for name, blob in payload:
        digest.update(name.encode() + b"\0" + hashlib.sha256(blob).digest())
    key = (digest.hexdigest(), fmt_choice, allow_missing, cfg.max_upload_bytes, cfg.max_image_pixels,
           cfg.max_rounds_per_upload)
    cached = st.session_state.get("_upl_validation")
    if not cached or cached[0] != key:
        with st.spinner("Checking the files..."):
            report = read_upload(payload, fmt=None if fmt_choice == "detect" else fmt_choice, config=cfg,
                                 allow_missing_images=allow_missing)
        st.session_state["_upl_validation"] = (key, report)
    report = st.session_state["_upl_validation"][1]
    histories = render_validation(report)
    if histories:
        n_rounds = sum(len(h.rounds) for h in histories)
        label = f"Build {len(histories)} history(ies), {n_rounds} round(s) into {Path(path).stem}"
        if not report.ok:
            st.warning("Only the files without errors will be built.")
        if st.button(label, type="primary", key="upl_build"):
            run_build(histories)
            st.rerun()

# ------------------------------------------------------------------ pending rounds and the last build
store = store_or_none(path) if Path(path).exists() else None
if store is not None:
    s = store.summary()
    pending = s["rounds"] - s["rounds_processed"]
    if pending > 0:
        st.warning(f"{pending} round(s) are stored but not processed yet (an interrupted build?).")
        if st.button(f"Process the {pending} pending round(s)", key="upl_pending"):
            run_build([])
            st.rerun()

last = st.session_state.get("_upl_report")
if last:
    st.success(f"Built: {last['rounds_added']} new round(s) in {last['seconds']:.1f} s. The memory now has "
               f"{last['rounds']} rounds, {last['images']} images ({last['images_ocr']} OCR'd), "
               f"{last['observations']} observations, {last['schemas']} schema(s), {last['episodes']} episode(s) "
               f"and {last['topics']} topic(s).")
    cols = st.columns(6)
    for col, (label, k) in zip(cols, [("Rounds", "rounds"), ("New rounds", "rounds_added"), ("Images", "images"),
                                      ("Observations", "observations"), ("Schemas", "schemas"),
                                      ("Episodes", "episodes")]):
        col.metric(label, last[k])
    st.caption("Seconds per stage: " + ", ".join(f"{k} {v:.2f}" for k, v in last["stage_seconds"])
               + f" · text encoder `{last['text_encoder']}` · image encoder `{last['image_encoder']}`")
    use = last.get("usage") or {}
    fbs = list(last.get("fallbacks") or [])
    if use.get("model"):
        st.caption(f"Language model `{use['model']}`: {use['calls']} call(s) ({use['cached']} from the cache), "
                   f"{use['prompt_tokens']} prompt + {use['completion_tokens']} completion token(s), estimated cost "
                   f"{cost_text(use['model'], use['prompt_tokens'], use['completion_tokens'])} · {len(fbs)} "
                   "fallback(s) to the rule-based extractor")
    else:
        st.caption(f"No language model (rules): 0 tokens, {cost_text(None, 0, 0)}.")
    if fbs:
        with st.expander(f"{len(fbs)} fallback(s)"):
            for fb in fbs:
                st.caption(fb)
    if last.get("changed_rounds"):
        st.warning(f"{len(last['changed_rounds'])} round(s) already stored with other content were kept as stored: "
                   + ", ".join(last["changed_rounds"][:10]))
    build_links(last)
