"""The CLI's commands. Input errors raise InputError (exit 2); see core/__main__.py."""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

from .config import DEFAULT
from .errors import InputError


def config_from_args(args) -> "object":
    """Config with --set overrides; a bad name or value is an argument error (exit 2)."""
    from .config import parse_value

    changes = {}
    for item in args.set:
        name, sep, value = item.partition("=")
        if not sep:
            raise InputError("--set", item, "expected NAME=VALUE")
        try:
            changes[name] = parse_value(name, value)
        except KeyError:
            raise InputError("--set", item, f"unknown parameter {name!r}") from None
        except ValueError:
            raise InputError("--set", item, f"{name} takes a {type(getattr(DEFAULT, name)).__name__}") from None
    try:
        return DEFAULT.with_(**changes)
    except ValueError as e:
        raise InputError("--set", " ".join(args.set), str(e)) from None


def progress_bar(enabled: bool):
    """A (stage, done, total) callback drawing one tqdm bar per stage on stderr."""
    if not enabled:
        return lambda stage, done, total: None
    from tqdm import tqdm

    bars: dict[str, tqdm] = {}
    finished: set[str] = set()  # stages whose bar closed: a repeated final call draws nothing

    def progress(stage: str, done: int, total: int) -> None:
        if stage in finished:
            if done >= total:
                return
            finished.discard(stage)  # the stage starts again (the next file of an eval): a new bar
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(total=total, desc=f"{stage:>8}", unit="it", file=sys.stderr, leave=True)
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            del bars[stage]
            finished.add(stage)

    progress.reset = finished.clear  # a new file of an eval: every stage draws its bar again
    return progress


def _file_line(enabled: bool, progress=None):
    """A (k, n, name) callback printing "file k/N name" on stderr before each file of a multi-file eval
    (and resetting `progress`, a progress_bar, so the file's stages draw their bars anew)."""
    if not enabled:
        return lambda k, n, name: None

    def on_file(k: int, n: int, name: str) -> None:
        getattr(progress, "reset", lambda: None)()
        print(f"file {k}/{n} {name}", file=sys.stderr, flush=True)

    return on_file


def read_inputs(paths: list[str], fmt: str | None, images: str | None, config, allow_missing: bool):
    """Parse every input; the first bad file stops the command before anything is stored."""
    from .formats import read_file, read_upload

    histories = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise InputError(p, "", "no such file")
        if path.suffix.lower() == ".zip":
            report = read_upload([(path.name, path.read_bytes())], fmt=fmt, config=config,
                                 allow_missing_images=allow_missing)
            if report.error is not None:  # upload-wide fault: name the zip, not "upload"
                raise InputError(p, report.error.place, report.error.fault)
            for fr in report.files:
                if fr.error is not None:
                    raise fr.error
                histories += list(fr.histories)
        else:
            histories += read_file(path, images=images, fmt=fmt, config=config, allow_missing_images=allow_missing)
    return histories


@contextmanager
def model_flags(args):
    """The --base-url/--model/--vision/--api-key-env/--response-format flags as the settings core.llm
    reads (its environment names), for the duration of one command; the environment is restored after.

    Raises InputError when a flag is given for a backend that does not use it, or the key variable
    named by --api-key-env is not set.
    """
    flags = {"OPENAI_BASE_URL": getattr(args, "base_url", None), "ADAMM_LLM_MODEL": getattr(args, "model", None),
             "ADAMM_LLM_VISION": "1" if getattr(args, "vision", False) else None,
             "ADAMM_LLM_RESPONSE_FORMAT": getattr(args, "response_format", None)}
    key_env = getattr(args, "api_key_env", None)
    given = [n for n, v in flags.items() if v] + (["--api-key-env"] if key_env else [])
    if given and getattr(args, "backend", "rules") != "openai":
        names = {"OPENAI_BASE_URL": "--base-url", "ADAMM_LLM_MODEL": "--model", "ADAMM_LLM_VISION": "--vision",
                 "ADAMM_LLM_RESPONSE_FORMAT": "--response-format"}
        raise InputError("command line", ", ".join(names.get(n, n) for n in given),
                         f"only used with --backend openai (not {getattr(args, 'backend', 'rules')})")
    if key_env:
        if not os.environ.get(key_env):
            raise InputError("command line", "--api-key-env", f"environment variable {key_env} is not set")
        flags["OPENAI_API_KEY"] = os.environ[key_env]
    saved = {n: os.environ.get(n) for n in flags}
    try:
        for n, v in flags.items():
            if v:
                os.environ[n] = v
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def cmd_llm_test(args) -> int:
    """Probe the model: exit 0 when it answered with valid JSON, 1 when it did not."""
    from .deps import make_llm
    from .llm_probe import check_connection

    llm = make_llm(args.backend, args.model_path)
    try:
        report = check_connection(llm)
    finally:
        close = getattr(llm, "close", None)
        if close is not None:
            close()
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


def cmd_build(args) -> int:
    from .build import build
    from .deps import make_build_deps, make_llm
    from .store import Store

    if args.store_dir:
        if args.store:
            raise InputError("command line", "--store", "give --store (one memory) or --store-dir (one per file), "
                                                        "not both")
        from .batch_cli import cmd_build_many

        return cmd_build_many(args, config_from_args(args))
    if args.workers is not None or args.ray_address:
        raise InputError("command line", "--workers", "Ray builds one memory per file: give --store-dir OUT")
    if not args.store:
        raise InputError("command line", "--store", "give the memory file (or --store-dir for one per input file)")
    config = config_from_args(args)
    histories = read_inputs(args.inputs, args.format, args.images, config, args.allow_missing_images)
    with Store(args.store) as store:
        llm = make_llm(args.backend, args.model_path, cache_con=store.con, parallel=config.llm_parallel)
        # a factory: the models load only after the ingest accepted the input
        deps = lambda: make_build_deps(config, cache_con=store.con, llm=llm,  # noqa: E731
                                       clip_checkpoint=args.clip_checkpoint, clip_model=args.clip_model)
        report = build(store, histories, deps, config, progress=progress_bar(not args.quiet))
    print(
        f"built {args.store}: {report.sessions} sessions, {report.rounds} rounds (+{report.rounds_added} new), "
        f"{report.images} images, {report.images_ocr} OCR'd, {report.observations} observations, "
        f"{report.schemas} schemas, {report.episodes} episodes, {report.topics} topics; "
        f"text encoder {report.text_encoder}, image encoder {report.image_encoder}; {report.seconds:.1f} s"
    )
    if report.changed_rounds:
        print(f"warning: {len(report.changed_rounds)} round(s) changed under the same id and were kept as stored: "
              + ", ".join(report.changed_rounds[:10]), file=sys.stderr)
    if report.fallbacks:
        print(f"note: {len(report.fallbacks)} language-model step(s) fell back to rules", file=sys.stderr)
    if report.llm_calls:
        print(f"language model: {report.llm_calls} call(s), {report.llm_tokens} tokens", file=sys.stderr)
    return 0


def question_image(path: str | None, caption: str | None):
    """The question's own picture for `ask --image/--image-caption`: the caption given, else the text
    OCR reads from the file; None with neither. Raises InputError for a missing or unreadable file."""
    from .model import ImageRef

    caption = (caption or "").strip()
    if path and not caption:
        from .encoders import RapidOcr

        p = Path(path)
        if not p.is_file():
            raise InputError(path, "", "no such image file")
        caption = RapidOcr().read(p.read_bytes(), source=path).text.strip()
        if not caption:
            raise InputError(path, "", "no text could be read from the picture; give --image-caption")
    return ImageRef("question:image", caption=caption, path=path) if caption else None


def cmd_ask(args) -> int:
    from .query import open_engine

    config = config_from_args(args)
    if not Path(args.store).exists():
        raise InputError(args.store, "", "no such memory file (build it first with `python -m core build`)")
    image = question_image(getattr(args, "image", None), getattr(args, "image_caption", None))
    plan = read_plan(args.plan, args.question) if getattr(args, "plan", None) else None
    if plan is None and not (args.question or "").strip():
        raise InputError("command line", "question", "give a question (or --plan FILE)")
    with open_engine(args.store, config, backend=args.backend, model_path=args.model_path) as engine:
        if plan is not None:
            from .planning.replay import replay

            trace = replay(engine, plan, image=image)
        else:
            trace = engine.ask(args.question, ablation=args.ablation, image=image)
        payload = trace.to_dict()
        if args.attribute:
            from .attribution import attribute_trace

            payload["attribution"] = attribute_trace(engine, trace)
    if args.json:
        print(json.dumps(payload, indent=2, default=str))
    else:
        print(payload["answer"])
    return 0


def read_plan(path: str, question: str | None):
    """The EditedPlan in the JSON file `path` (its question replaced by `question` when one is given).
    Raises InputError naming the file and every fault."""
    from .planning.replay import EditedPlan

    p = Path(path)
    if not p.is_file():
        raise InputError(path, "", "no such plan file")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(path, "", "not a text file (a plan is JSON written by `ask --json` or the editor)") from None
    except json.JSONDecodeError as e:
        raise InputError(path, f"line {e.lineno} column {e.colno}", f"not valid JSON: {e.msg}") from None
    plan = EditedPlan.from_dict(data, file=path)
    if question and question.strip():
        from dataclasses import replace

        plan = replace(plan, question=question.strip())
    return plan


def cmd_eval_cases(args, config) -> int:
    """`eval --cases`: replay the memory's saved cases; exit 3 when one of them broke."""
    from .cases import list_cases, replay_cases
    from .query import open_engine

    if not args.store:
        raise InputError("command line", "--cases", "give the memory with --store")
    if not Path(args.store).exists():
        raise InputError(args.store, "", "no such memory file")
    with open_engine(args.store, config, backend=args.backend, model_path=args.model_path) as engine:
        cases = list_cases(engine.con)
        if not cases:
            print(f"{args.store}: no saved cases (save one from the Query planner: edit a plan, re-run, "
                  "\"Save as a case\")")
            return 0
        bar = progress_bar(not args.quiet)
        results = replay_cases(engine, cases, progress=lambda k, n: bar("cases", k, n))
    for r in results:
        print(f"case {r.case.case_id} [{r.status()}] {r.case.question}")
        print(f"  expected: {r.case.expected}")
        print(f"  saved plan:    {r.pinned_error or r.pinned_answer}"
              + (f"  (score {r.pinned_score:.2f})" if r.pinned_score is not None else ""))
        print(f"  planner's own: {r.planner_answer}"
              + (f"  (score {r.planner_score:.2f})" if r.planner_score is not None else ""))
    broken = [r for r in results if r.broke]
    print(f"{len(results)} case(s): {sum(r.pinned_passed for r in results)} saved plan(s) pass, "
          f"{sum(r.planner_passed for r in results)} planner plan(s) pass, {len(broken)} broken")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "cases.json").write_text(json.dumps([r.to_dict() for r in results], indent=1, default=str))
    return 3 if broken else 0


def cmd_eval(args) -> int:
    from .batch_cli import batch_pool, check_model_path, outcome_bar, variant_line
    from .evaluation.runner import run_eval
    from .evaluation.sweep import grid, run_sweep

    ablations = args.ablation if isinstance(args.ablation, list) else [args.ablation]
    sweep = len(ablations) > 1 or any("," in item.partition("=")[2] for item in args.set)
    config = DEFAULT if sweep else config_from_args(args)
    if args.cases:
        if args.input:
            raise InputError("command line", "--cases", "takes no input files (the cases are in --store)")
        return cmd_eval_cases(args, config)
    if not args.input:
        raise InputError("command line", "input", "give the input file(s) to evaluate (or --cases --store M)")
    if not args.out:
        raise InputError("command line", "--out", "give the output folder")
    variants = grid(ablations, args.set) if sweep else None
    inputs = args.input if isinstance(args.input, list) else [args.input]
    parallel = args.workers is not None or bool(args.ray_address)
    if parallel and args.store:
        raise InputError("command line", "--store", "a Ray run builds each file in its worker: drop --store")
    check_model_path(args)
    bar = progress_bar(not args.quiet and not parallel)
    with batch_pool(args) as pool:
        kw = dict(fmt=args.format, limit=args.limit, backend=args.backend, model_path=args.model_path,
                  store_path=args.store, progress=bar, allow_missing_images=args.allow_missing_images,
                  on_file=_file_line(not args.quiet and not parallel, bar), pool=pool,
                  on_outcome=outcome_bar(not args.quiet, parallel))
        if sweep:
            def one(inp, out, **variant):
                return run_eval(inp, out, **kw, **variant)

            summaries = run_sweep(inputs, args.out, variants, one, on_variant=variant_line(not args.quiet))
            print(json.dumps({"sweep": str(Path(args.out) / "sweep.csv"),
                              "variants": {v.name: {"n": s.get("n"), "accuracy": s.get("accuracy")}
                                           for v, s in zip(variants, summaries)}}, indent=2))
            return 0
        summary = run_eval(inputs if len(inputs) > 1 else inputs[0], args.out, config=config,
                           ablation=ablations[0], **kw)
    print(json.dumps(summary, indent=2))
    if summary.get("errors"):
        # answered without those questions: each is scored as unanswered and named here, never hidden
        print(f"warning: the engine failed on {summary['errors']} question(s), scored as unanswered:", file=sys.stderr)
        for e in summary.get("error_questions", []):
            print(f"  {e['qa_id']}: {e['question']} -> {e['error']}", file=sys.stderr)
    return 0


def cmd_fields(args) -> int:
    """List the fields (merged ones first) with their labels as written and why they were merged;
    --undo / --merge change one alignment and rebuild the analytic tables."""
    from dataclasses import asdict

    from . import align
    from .store import Store

    if not Path(args.store).exists():
        raise InputError(args.store, "", "no memory file here")
    if bool(args.merge) != bool(args.into):
        raise InputError("--merge/--into", "", "give both --merge RAW and --into FIELD")
    config = config_from_args(args)
    with Store(args.store) as store:
        try:
            if args.undo:
                rep = align.undo_alias(store, args.undo, config)
                print(f"{args.undo} is its own field again; tables rebuilt: {', '.join(rep.tables) or 'none'}")
            elif args.merge:
                rep = align.merge_fields(store, args.merge, args.into, config)
                print(f"{args.merge} now fills {args.into}; tables rebuilt: {', '.join(rep.tables) or 'none'}")
        except (KeyError, ValueError) as e:
            raise InputError(args.store, args.undo or args.merge, str(e.args[0])) from None
        infos = align.field_report(store.con)
    if args.json:
        print(json.dumps([asdict(i) for i in infos], indent=1, default=str))
        return 0
    for info in infos:
        unit = f" ({info.unit})" if info.unit else ""
        print(f"{info.name}{unit}: {info.observations} values")
        for lab in info.labels:
            written = ", ".join(f"{t or '(no label)'} x{n}" for t, n in lab.labels[:6])
            why = f" - {lab.reason}, score {lab.score:.2f}" if lab.raw_attribute != info.name else ""
            user = " [your decision]" if lab.decided_by == "user" else ""
            print(f"  {lab.raw_attribute}: {written}{why}{user}")
    return 0
