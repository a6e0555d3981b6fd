"""schemas page (being built)."""
import streamlit as st

st.title("schemas")
st.info("This page is not built yet.")
