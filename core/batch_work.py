"""The work of a batch run on one file, done by a long-lived worker that keeps its models.

A FileWorker loads the text encoder, OCR and image encoder once (deps.load_models) and the
language model of each backend once, and reuses them for every file it is given. The same class
runs in-process for a serial run and as a Ray actor (core/batch.py) for a parallel one, so both
produce the same results.
"""
from __future__ import annotations

import os
import resource
import tempfile

from .build_many import BuildOutcome, BuildSettings, BuildTask, build_file
from .evaluation.runner import EvalSettings, FileOutcome, FileTask, evaluate_task, new_run


class FileWorker:
    """Evaluates or builds one file at a time with models loaded on first use and kept."""

    def __init__(self, clip_checkpoint: str | None = None, clip_model: str | None = None) -> None:
        self._clip = (clip_checkpoint, clip_model)
        self._models: dict | None = None
        self._llms: dict[tuple, object] = {}
        self.files = 0

    def models(self) -> dict:
        """The encoders and OCR, loaded the first time they are needed."""
        if self._models is None:
            from .deps import load_models

            self._models = load_models(*self._clip)
        return self._models

    def llm(self, backend: str, model_path: str | None, parallel: int):
        """The model of `backend` (None for rules), loaded once per (backend, model file)."""
        key = (backend, model_path)
        if key not in self._llms:
            from .deps import make_llm

            self._llms[key] = make_llm(backend, model_path, parallel=parallel)
        return self._llms[key]

    def evaluate(self, settings: EvalSettings, task: FileTask) -> FileOutcome:
        """The outcome of evaluating one file (runner.evaluate_task; never raises for the file)."""
        llm = self.llm(settings.backend, settings.model_path, settings.config.llm_parallel)
        self.files += 1
        with tempfile.TemporaryDirectory(prefix="adamm-eval-") as tmp:
            return evaluate_task(new_run(settings, tmp=tmp, llm=llm, models=self.models()), task)

    def build(self, settings: BuildSettings, task: BuildTask, progress=None) -> BuildOutcome:
        """The outcome of building one file (build_many.build_file; never raises for the file);
        `progress(stage, done, total)` as build() reports it, when the worker runs in-process."""
        llm = self.llm(settings.backend, settings.model_path, settings.config.llm_parallel)
        self.files += 1
        return build_file(settings, task, models=self.models(), llm=llm, progress=progress or (lambda *a: None))

    def info(self) -> dict:
        """Where this worker runs and what it used: pid, Ray node id (None outside Ray), files done,
        peak resident memory in MiB."""
        node = None
        try:
            import ray

            if ray.is_initialized():
                node = ray.get_runtime_context().get_node_id()
        except ImportError:
            pass
        return {"pid": os.getpid(), "node_id": node, "files": self.files,
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}

    def close(self) -> None:
        for llm in self._llms.values():
            if llm is not None and hasattr(llm, "close"):
                llm.close()
        self._llms.clear()

