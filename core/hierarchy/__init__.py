"""Retrieval memory: the topic -> episode -> event hierarchy (paper 3.4, appendix A).

    from core.hierarchy import Hierarchy, fused_similarity

memory.py builds and reads the hierarchy, fusion.py holds the late-fusion
similarity (eq. 13), nodes.py the rows of the `nodes` table, index.py the
cached embedding matrices used by search, views.py the frozen results.
"""
from .fusion import fused_scores, fused_similarity
from .memory import SCOPES, Hierarchy, event_text
from .views import InsertResult, LocatedEvent, NodeInfo, TreeNode

__all__ = [
    "Hierarchy", "fused_similarity", "fused_scores", "event_text", "SCOPES",
    "InsertResult", "LocatedEvent", "NodeInfo", "TreeNode",
]
