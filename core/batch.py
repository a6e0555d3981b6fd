"""Batch builds and evaluations on Ray: long-lived workers, results streamed back file by file.

`RayPool(workers, address)` is a context manager. Without an address it starts a local Ray
instance with `workers` CPUs and stops it on exit; with one (`ray start --head` on one machine,
`ray start --address HEAD:PORT` on the others) it joins that cluster and leaves it running. Either
way it starts one FileWorker actor (core/batch_work.py) per worker, each loading its models once,
and hands each actor one file at a time (`on_dispatch(task, worker index)` as it is sent);
`evaluate(settings, tasks)` and `build(settings, tasks)` yield each file's outcome as soon as it
is finished. A file whose work raised, or whose worker
died, is a "failed" outcome naming the fault; a dead worker is replaced and the run goes on.

Workers import this checkout (PYTHONPATH = its root) with the driver's offline and thread
settings; on a cluster every machine needs the same checkout and input files at the same paths.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .build_many import BuildOutcome, BuildSettings, BuildTask
from .errors import InputError
from .evaluation.runner import EvalSettings, FileOutcome, FileTask

ROOT = Path(__file__).resolve().parent.parent
# what a worker must see as the driver does: no model hub, one thread per worker, the model endpoint
PASSED_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "OMP_NUM_THREADS", "OPENAI_BASE_URL", "OPENAI_API_KEY",
              "ADAMM_LLM_MODEL", "ADAMM_LLM_VISION", "ADAMM_LLM_RESPONSE_FORMAT", "ADAMM_LLM_API_KEY_ENV")


def worker_env() -> dict[str, str]:
    """The environment variables every worker gets (runtime_env env_vars)."""
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    env.update({k: os.environ[k] for k in PASSED_ENV if k in os.environ and k not in env})
    key_env = os.environ.get("ADAMM_LLM_API_KEY_ENV")
    if key_env and key_env in os.environ:
        env[key_env] = os.environ[key_env]
    return env


def import_ray():
    """The ray module; InputError saying how to install it when it is missing."""
    try:
        import ray
    except ImportError:
        raise InputError("--workers", "ray", "Ray is not installed: run `make ray` "
                                             "(pip install -r requirements-ray.txt)") from None
    return ray


def reachable(address: str, timeout_s: float = 10.0) -> None:
    """InputError unless something listens at HOST:PORT (Ray itself waits for an absent head for
    minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise InputError("--ray-address", address, "expected HOST:PORT, e.g. 127.0.0.1:6379")
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise InputError("--ray-address", address, f"no Ray head answers there ({e.strerror or e}); start "
                                                    "one with `ray start --head --port PORT`") from None


class RayPool:
    """Ray actors running FileWorker, one file each at a time (see the module docstring)."""

    def __init__(self, workers: int | None = None, address: str | None = None, *,
                 clip_checkpoint: str | None = None, clip_model: str | None = None,
                 on_dispatch: Callable[[object, int], None] = lambda task, worker: None) -> None:
        if workers is not None and workers < 1:
            raise InputError("--workers", str(workers), "expected at least 1 worker")
        self.workers, self.address = workers, address
        self._clip = (clip_checkpoint, clip_model)
        self.on_dispatch = on_dispatch
        self.actors: list = []
        self.replaced = 0
        self._ray = None

    def __enter__(self) -> "RayPool":
        ray = self._ray = import_ray()
        from .batch_work import FileWorker

        runtime_env = {"env_vars": worker_env()}
        if self.address:
            reachable(self.address)
            try:
                ray.init(address=self.address, runtime_env=runtime_env, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise InputError("--ray-address", self.address, f"cannot join the Ray cluster: {e}") from None
        else:
            ray.init(num_cpus=self.workers or 1, include_dashboard=False, runtime_env=runtime_env,
                     log_to_driver=False, configure_logging=False)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        if self.workers is not None and self.workers > cpus:
            # a worker needs a CPU of its own: one that cannot start would hold its files forever
            ray.shutdown()
            raise InputError("--workers", str(self.workers),
                             f"the Ray cluster at {self.address} has {cpus} CPU(s); give at most --workers {cpus}")
        n = self.workers or max(1, cpus)
        # SPREAD: on a cluster the workers go to different machines before doubling up on one
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(FileWorker)
        self.actors = [self._new_actor() for _ in range(n)]
        return self

    def _new_actor(self):
        return self._actor_class.remote(*self._clip)

    def __exit__(self, *exc) -> None:
        ray = self._ray
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:  # an actor already gone: nothing to stop
                pass
        self.actors = []
        if ray is not None and ray.is_initialized():
            ray.shutdown()  # a local instance stops with it; a cluster stays up

    def worker_info(self) -> list[dict]:
        """FileWorker.info() of every worker (pid, node id, files, peak memory)."""
        return self._ray.get([a.info.remote() for a in self.actors])

    def evaluate(self, settings: EvalSettings, tasks: Sequence[FileTask]) -> Iterator[FileOutcome]:
        return self._stream("evaluate", settings, tasks,
                            lambda t, msg: FileOutcome(t, "failed", error=msg))

    def build(self, settings: BuildSettings, tasks: Sequence[BuildTask]) -> Iterator[BuildOutcome]:
        return self._stream("build", settings, tasks,
                            lambda t, msg: BuildOutcome(t, "failed", error=msg))

    def _stream(self, method: str, settings, tasks: Sequence, fail: Callable[[object, str], object]) -> Iterator:
        """Each task on an idle actor; outcomes in the order they finish (the next task is sent
        before the outcome is handed on, so a worker never waits for the driver)."""
        ray = self._ray
        from ray.exceptions import RayActorError, RayTaskError

        queue = list(tasks)
        inflight: dict = {}
        settings_ref = ray.put(settings)

        def submit(i: int) -> None:
            if queue:
                t = queue.pop(0)
                self.on_dispatch(t, i)
                inflight[getattr(self.actors[i], method).remote(settings_ref, t)] = (i, t)

        for i in range(len(self.actors)):
            submit(i)
        while inflight:
            (ref,), _ = ray.wait(list(inflight), num_returns=1)
            i, t = inflight.pop(ref)
            try:
                outcome = ray.get(ref)
            except RayActorError as e:  # the worker died (killed, out of memory): a new one takes its place
                self.actors[i] = self._new_actor()
                self.replaced += 1
                outcome = fail(t, f"worker died: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            except RayTaskError as e:  # the work raised outside the file's own error handling
                cause = e.cause if getattr(e, "cause", None) is not None else e
                outcome = fail(t, f"{type(cause).__name__}: {cause}")
            submit(i)
            yield outcome
