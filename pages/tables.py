"""tables page (being built)."""
import streamlit as st

st.title("tables")
st.info("This page is not built yet.")
