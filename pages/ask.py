"""ask page (being built)."""
import streamlit as st

st.title("ask")
st.info("This page is not built yet.")
