"""hierarchy page (being built)."""
import streamlit as st

st.title("hierarchy")
st.info("This page is not built yet.")
