"""CDK synthesis fanned out to Ray actors, each keeping its own warm sandbox pool.

`RaySynthesizer` has the interface of `CdkSynthesizer` (`check_app`, `check_response`,
`acheck_response`, `close`), so the `cdk_verify` scorer and `plumbline cdk check` use it
unchanged (`--cdk-executor ray`). It starts `actors` Ray actors spread over the cluster's
nodes; each builds a `CdkSynthesizer` there, whose warm pool of `pool_size` bubblewrap
workers serves that actor's jobs, so the jsii start-up overlaps with other samples exactly as
on one machine. A job goes to the actor with the fewest jobs in flight. The judging is the
local scorer's own code run on the worker node, so outcomes are identical; only `engine`
says where it ran (`ray/bwrap-pool`).

An actor lost with its node is restarted by Ray on another node and its jobs retried there
(`max_restarts`, `max_task_retries`); a job that still cannot run is an `infra_error`, never
counted against the model. Every node needs bubblewrap, Node.js and plumbline's [cdk] extra.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from plumbline.cdk.extract import ExtractedApp
from plumbline.cdk.outcomes import Outcome, SynthReport
from plumbline.cdk.scorer import CdkExecutor
from plumbline.cdk.synth import CdkSynthesizer, SynthesizerBase, SynthOptions
from plumbline.cluster.connect import ClusterError, connect, disconnect, require_ray

#: How often Ray restarts an actor lost with its node, and retries its jobs.
RESTARTS = 3


class SynthWorker:
    """The body of one Ray actor: a `CdkSynthesizer` (warm pool) on its node."""

    def __init__(self, options: SynthOptions) -> None:
        self.synthesizer = CdkSynthesizer(options)

    def check_app(self, app: ExtractedApp) -> SynthReport:
        return self.synthesizer.check_app(app)

    def close(self) -> None:
        self.synthesizer.close()


class RaySynthesizer(SynthesizerBase):
    """Synthesizes apps on Ray actors; one outcome per sample (see the module docstring).

    Args:
        options: the synthesis options of every actor (`pool_size`: jobs at once per actor).
        address: the Ray cluster (None: `RAY_ADDRESS`, else a new local Ray instance).
        actors: how many actors (default: one per alive node).
    """

    def __init__(
        self,
        options: SynthOptions | None = None,
        *,
        address: str | None = None,
        actors: int | None = None,
    ) -> None:
        self.options = options or SynthOptions()
        ray = require_ray()
        self._connected = connect(address)
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
        count = actors or max(1, len(nodes))
        size = self.options.pool_size or 2
        actor_class: Any = ray.remote(SynthWorker)
        self._actors = [
            actor_class.options(
                num_cpus=1,
                max_concurrency=size,
                max_restarts=RESTARTS,
                max_task_retries=RESTARTS,
                scheduling_strategy="SPREAD",
            ).remote(self.options)
            for _ in range(count)
        ]
        self._load = [0] * count
        self._lock = threading.Lock()

    @property
    def engine(self) -> str:
        return "ray/" + ("unsafe-no-sandbox" if self.options.unsafe_no_sandbox else "bwrap-pool")

    def check_app(self, app: ExtractedApp) -> SynthReport:
        ray = require_ray()
        with self._lock:
            index = min(range(len(self._actors)), key=self._load.__getitem__)
            self._load[index] += 1
        try:
            report: SynthReport = ray.get(self._actors[index].check_app.remote(app))
        except ray.exceptions.RayError as error:
            lines = [line for line in str(error).splitlines() if line.strip()]
            report = SynthReport(
                Outcome.INFRA_ERROR,
                reason="the Ray worker synthesizing this app failed: "
                + (lines[-1] if lines else type(error).__name__)[:500],
                files=dict(app.files),
                entry=app.entry,
                notes=list(app.notes),
            )
        finally:
            with self._lock:
                self._load[index] -= 1
        report.engine = self.engine
        return report

    def close(self) -> None:
        ray = require_ray()
        if not ray.is_initialized():
            return
        for actor in self._actors:
            with contextlib.suppress(ray.exceptions.RayError, TimeoutError):
                ray.get(actor.close.remote(), timeout=30)
            ray.kill(actor)
        self._actors = []
        disconnect(self._connected)
        self._connected = False


def ray_synthesizer(options: SynthOptions, executor: CdkExecutor) -> RaySynthesizer:
    """The `ray` entry of `plumbline.cdk.scorer.SYNTHESIZERS` (`--cdk-executor ray`)."""
    return RaySynthesizer(options, address=executor.address, actors=executor.actors)


__all__ = ["RESTARTS", "ClusterError", "RaySynthesizer", "SynthWorker", "ray_synthesizer"]
