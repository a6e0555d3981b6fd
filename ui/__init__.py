"""Streamlit-side helpers: session keys, cached resources, the shared sidebar.

Pages render; `core` computes. Only this package and app_pages/ import streamlit.
"""
