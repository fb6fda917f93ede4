"""Whether ``torch.compile`` compiled from scratch or loaded Inductor's cached graphs.

A compile time is only a cold compile when Inductor's caches held none of the graphs:
an earlier run (an earlier docs build, an earlier call of the script) leaves compiled
graphs in the FX graph cache on disk, and the next compile of the same code loads them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator

from compperf.i18n import Text, tr

__all__ = ["InductorCache", "inductor_cache"]


@dataclasses.dataclass
class InductorCache:
    """Lookups of Inductor's FX graph cache made inside an :func:`inductor_cache` block.

    Attributes
    ----------
    hits, misses : int
        Graphs loaded from the cache, and graphs compiled because the cache lacked them
        (``torch._dynamo.utils.counters["inductor"]["fxgraph_cache_hit"]`` and
        ``["fxgraph_cache_miss"]``, counted by ``torch/_inductor/codecache.py``).
    """

    hits: int = 0
    misses: int = 0

    @property
    def state(self) -> str:
        """``"cold"`` (only misses), ``"warm"`` (only hits), ``"mixed"`` or ``"none"``."""
        if self.hits and self.misses:
            return "mixed"
        return "warm" if self.hits else "cold" if self.misses else "none"

    def __str__(self) -> Text:
        if self.state == "cold":
            return tr("a cold compile: Inductor's cache held none of its graphs")
        if self.state == "warm":
            return tr("not a cold compile: Inductor loaded its graphs from an earlier run's cache")
        if self.state == "mixed":
            return tr("partly cold: Inductor loaded some of its graphs from its cache")
        return tr("Inductor compiled no graph here")


@contextlib.contextmanager
def inductor_cache() -> Iterator[InductorCache]:
    """Count the FX graph cache's hits and misses of the compiles inside the block.

    Yields
    ------
    InductorCache
        Filled in when the block ends; ``str()`` of it says, in the reader's language,
        whether the compiles were cold.

    Notes
    -----
    ``torch.compile`` compiles lazily, on the first call: the call belongs inside the block.
    With the cache disabled (``TORCHINDUCTOR_FX_GRAPH_CACHE=0``) every compile is a miss.
    """
    from torch._dynamo.utils import counters

    found = InductorCache()
    before = counters["inductor"]["fxgraph_cache_hit"], counters["inductor"]["fxgraph_cache_miss"]
    try:
        yield found
    finally:
        found.hits = counters["inductor"]["fxgraph_cache_hit"] - before[0]
        found.misses = counters["inductor"]["fxgraph_cache_miss"] - before[1]
