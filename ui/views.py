"""Small render helpers shared by pages (a round with its images and OCR text)."""
from __future__ import annotations

import html

import streamlit as st

from core.store import Store


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
            data = store.image_bytes(img.image_id)
            with c1:
                if data:
                    try:
                        st.image(data, caption=img.image_id, width="stretch")
                    except Exception as e:  # a stored blob that no longer decodes: say so, keep the page
                        st.warning(f"{img.image_id}: cannot display ({type(e).__name__})")
                else:
                    st.caption(f"{img.image_id} (image not available)")
            with c2:
                if img.caption:
                    st.markdown(f"*Caption:* {html.escape(img.caption)}")
                if info.get("ocr_text"):
                    st.markdown("*OCR text:*" + (" (source of the selected value)" if image_focus == img.image_id else ""))
                    st.code(info["ocr_text"], language=None)
