"""The command line: `python -m core build|ask|eval ...`.

Exit status: 0 on success; 2 on bad input or bad arguments (one clear line on
stderr, never a traceback); 1 on an internal error; 3 when `eval --cases` finds a
saved case broken.
"""
from __future__ import annotations

import argparse
import json
import sys
import traceback

from .errors import InputError, LLMError, MemoryBusyError


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's default is exit 2 with usage; keep one line
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def _backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["rules", "openai", "local"], default="rules",
                   help="language-model backend (default: rules, no model)")
    p.add_argument("--model-path", help="GGUF file for --backend local")
    _endpoint_args(p)
    p.add_argument("--clip-checkpoint", help="open_clip checkpoint file (else the image descriptor)")
    p.add_argument("--clip-model", default="ViT-B-32", help="open_clip model name for --clip-checkpoint")
    p.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="override a config parameter, e.g. --set theta_s=3; with a model, --set llm_mode=free "
                        "lets it plan and answer on its own (default guided: the rule-based plan and answer "
                        "are its drafts), --set llm_steps=extract+describe+plan+answer chooses the steps it takes (default "
                        "describe+plan+answer); in eval, NAME=V1,V2 sweeps the values (see --ablation)")


def _endpoint_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", help="--backend openai: the endpoint, e.g. http://localhost:11434/v1 (Ollama), "
                                      "http://localhost:8000/v1 (vLLM); default OPENAI_BASE_URL, else the OpenAI API")
    p.add_argument("--model", help="--backend openai: the model name (default ADAMM_LLM_MODEL)")
    p.add_argument("--vision", action="store_true", help="--backend openai: the model takes images")
    p.add_argument("--api-key-env", metavar="NAME",
                   help="--backend openai: read the API key from this environment variable instead of "
                        "OPENAI_API_KEY (keys are never taken on the command line)")
    p.add_argument("--response-format", choices=["json_schema", "json_object", "none"],
                   help="--backend openai: how JSON is asked for (default json_schema; json_object or none "
                        "for servers without schema support)")


def _batch_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=int, metavar="N",
                   help="run the files on N Ray workers (a local Ray instance, started and stopped here, "
                        "unless --ray-address is given); each worker loads its models once")
    p.add_argument("--ray-address", metavar="HOST:PORT",
                   help="run on this existing Ray cluster (`ray start --head` ...; see the README)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m core", description="AdaMM Explorer engine")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    b = sub.add_parser("build", help="ingest histories into a memory file and build both memories")
    b.add_argument("inputs", nargs="+", help="MemEye or LoCoMo JSON files (or a zip with JSON + images)")
    b.add_argument("--store", help="memory file (DuckDB), created if missing: every input goes into it")
    b.add_argument("--store-dir", metavar="OUT",
                   help="instead of --store: one memory per input file, OUT/<file stem>.duckdb (inputs may be "
                        "folders or globs; a rerun skips the files already built from the same input)")
    _batch_args(b)
    b.add_argument("--format", choices=["memeye", "locomo"], help="input format (default: detect)")
    b.add_argument("--images", help="folder or zip where images are looked up")
    b.add_argument("--allow-missing-images", action="store_true",
                   help="keep rounds whose image files are missing (caption only) instead of failing")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    _backend_args(b)

    a = sub.add_parser("ask", help="answer a question from a memory file")
    a.add_argument("question", nargs="?", help="the question (with --plan: the plan file's question when omitted)")
    a.add_argument("--store", required=True)
    a.add_argument("--plan", metavar="FILE",
                   help="run this plan instead of planning: a file saved by the Query planner's editor or the "
                        "output of `ask --json` (steps with arguments run as given, after validation; steps "
                        "with \"args\": null are instantiated as they run)")
    a.add_argument("--json", action="store_true",
                   help="print the whole trace as JSON (its \"mode\": rules, guided or free, and \"fallbacks\")")
    a.add_argument("--ablation", default="full",
                   choices=["full", "no-analytic", "no-retrieval", "no-context", "no-progressive", "rag", "no-utility"])
    a.add_argument("--attribute", action="store_true", help="Shapley attribution of the evidence units")
    a.add_argument("--image", help="the question's own picture (its OCR text is searched when no caption is given)")
    a.add_argument("--image-caption", help="what the question's picture shows (searched with the question)")
    _backend_args(a)

    e = sub.add_parser("eval", help="build a fresh memory per input file and answer its QA set")
    e.add_argument("input", nargs="*",
                   help="a MemEye/Mem-Gallery or LoCoMo JSON file, or several files, folders or globs "
                        "(one memory per file; OUT/<file stem>/ per file and a pooled OUT/summary.json)")
    e.add_argument("--out",
                   help="output folder for predictions.jsonl and summary.json (a rerun reuses the files "
                        "already done there with the same input, ablation and limit)")
    e.add_argument("--allow-missing-images", action="store_true",
                   help="keep rounds whose image files are missing (caption only) instead of failing")
    e.add_argument("--cases", action="store_true",
                   help="replay the debugging cases saved in --store (no input files): each case's question with "
                        "the planner's own plan and with its saved plan, scored against its expected answer; "
                        "exit 3 when a case that passed when saved is broken now")
    e.add_argument("--format", choices=["memeye", "locomo"])
    e.add_argument("--ablation", nargs="+", default=["full"], metavar="ABLATION",
                   choices=["full", "no-analytic", "no-retrieval", "no-context", "no-progressive", "rag", "no-utility"],
                   help="one or several of full, no-analytic, no-retrieval, no-context, no-progressive, rag, "
                        "no-utility; several (or --set NAME=V1,V2) run a sweep: OUT/<variant>/ each and "
                        "OUT/sweep.csv (file x variant x metric)")
    _batch_args(e)
    e.add_argument("--limit", type=int, help="answer at most N questions (per file)")
    e.add_argument("--store", help="memory file to build into, for a single input file (default: a temporary file)")
    e.add_argument("--quiet", action="store_true")
    _backend_args(e)

    t = sub.add_parser("llm-test", help="test the connection to a language model: reply, latency, JSON schema, images")
    t.add_argument("--backend", choices=["openai", "local"], default="openai")
    t.add_argument("--model-path", help="GGUF file for --backend local")
    _endpoint_args(t)

    f = sub.add_parser("fields", help="list a memory's fields with their raw labels; undo or make a merge")
    f.add_argument("--store", required=True)
    f.add_argument("--undo", metavar="RAW", help="make raw attribute RAW its own field again (tables rebuilt)")
    f.add_argument("--merge", metavar="RAW", help="align raw attribute RAW with the field given by --into")
    f.add_argument("--into", metavar="FIELD", help="the field --merge joins")
    f.add_argument("--json", action="store_true", help="print the fields as JSON")
    f.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="config for the rebuild")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from . import cli_commands

        with cli_commands.model_flags(args):
            return getattr(cli_commands, f"cmd_{args.command.replace('-', '_')}")(args)
    except (InputError, MemoryBusyError) as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    except LLMError as e:
        sys.stderr.write(f"error: language model: {e}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Exception as e:  # internal error: short message, details only on request
        sys.stderr.write(f"internal error: {type(e).__name__}: {e}\n")
        if __import__("os").environ.get("ADAMM_DEBUG"):
            traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
