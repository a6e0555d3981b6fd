"""Query processing (paper 3.5): planning context, six tools, planners, answers, traces.

    from core.planning import QueryEngine
    trace = QueryEngine(con, text_encoder, config).ask("How much did I water the ferns in March on average?")
"""
from .answer import REFUSAL, LLMAnswerer, RuleAnswerer
from .context import Candidate, ContextBuilder, PlanningContext
from .engine import ABLATIONS, PlanState, QueryEngine
from .retrieval import AdaptedRetrieval, NodeTableRetrieval, RetrievalMemory
from .rule_planner import RulePlanner
from .tools import TOOL_ARGS, TOOL_NAMES, Toolbox, ToolResult
from .trace import Answer, Plan, PlanStep, StepRecord, Trace
from .validate import ToolError

__all__ = [
    "QueryEngine", "PlanState", "ABLATIONS", "Trace", "StepRecord", "Plan", "PlanStep", "Answer",
    "Toolbox", "ToolResult", "ToolError", "TOOL_NAMES", "TOOL_ARGS", "ContextBuilder", "PlanningContext",
    "Candidate", "RetrievalMemory", "NodeTableRetrieval", "AdaptedRetrieval", "RulePlanner",
    "RuleAnswerer", "LLMAnswerer", "REFUSAL",
]
