"""upload page (being built)."""
import streamlit as st

st.title("upload")
st.info("This page is not built yet.")
