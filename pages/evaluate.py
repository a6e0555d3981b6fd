"""evaluate page (being built)."""
import streamlit as st

st.title("evaluate")
st.info("This page is not built yet.")
