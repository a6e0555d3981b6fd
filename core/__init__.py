"""AdaMM Explorer engine: analytic + retrieval memory over multimodal histories.

Importing `core` sets the offline switches for model hubs unless the user has
opted into downloads (ADAMM_ALLOW_DOWNLOADS=1): without them a missing model
hangs for about a minute before failing.
"""
import os as _os

if _os.environ.get("ADAMM_ALLOW_DOWNLOADS") != "1":
    _os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

__version__ = "0.1.0"
