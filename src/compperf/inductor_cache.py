"""Whether ``torch.compile`` generated its code or loaded it from Inductor's caches on disk.

An earlier run (an earlier docs build, an earlier call of the script) leaves compiled graphs
in Inductor's FX graph cache and AOTAutograd's cache on disk, and the next compile of the
same code loads them: its first call is a warm start, shorter than a cold compile. A miss
is not always fully cold either (the C++ or Triton code of a kernel may still be cached).
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
        Graphs loaded from the caches, and graphs whose code was generated because the FX
        graph cache lacked them (``torch._dynamo.utils.counters``: ``["inductor"]
        ["fxgraph_cache_hit"]`` or ``["aot_autograd"]["autograd_cache_hit"]``, and
        ``["inductor"]["fxgraph_cache_miss"]``; counted by ``torch/_inductor/codecache.py``
        and ``torch/_functorch/_aot_autograd/autograd_cache.py``).
    """

    hits: int = 0
    misses: int = 0

    @property
    def state(self) -> str:
        """``"miss"`` (every graph generated anew), ``"hit"`` (every graph loaded from the
        cache: a warm start), ``"mixed"``, or ``"none"`` (nothing compiled)."""
        if self.hits and self.misses:
            return "mixed"
        return "hit" if self.hits else "miss" if self.misses else "none"

    @property
    def label(self) -> Text:
        """The state in two or three words, for a table cell ("cache hit", "cache miss")."""
        return {
            "hit": tr("cache hit"),
            "miss": tr("cache miss"),
            "mixed": tr("cache hit and miss"),
            "none": tr("nothing compiled"),
        }[self.state]

    def __str__(self) -> Text:
        if self.state == "miss":
            return tr("cache miss: Inductor generated the code of its graphs anew")
        if self.state == "hit":
            return tr("cache hit: Inductor loaded compiled code from its caches on disk (a warm "
                      "start); a cold compile takes longer")  # fmt: skip
        if self.state == "mixed":
            return tr(
                "Inductor loaded some graphs from its caches on disk and generated the others"
            )
        return tr("Inductor compiled no graph here")


@contextlib.contextmanager
def inductor_cache() -> Iterator[InductorCache]:
    """Count the FX graph cache's hits and misses of the compiles inside the block.

    Yields
    ------
    InductorCache
        Filled in when the block ends; ``str()`` of it says, in the reader's language,
        whether the code came from the caches.

    Notes
    -----
    ``torch.compile`` compiles lazily, on the first call: the call belongs inside the block.
    With the cache disabled (``TORCHINDUCTOR_FX_GRAPH_CACHE=0``) every compile is a miss.
    """
    from torch._dynamo.utils import counters

    found = InductorCache()

    def lookups() -> tuple[int, int, int]:
        return (counters["inductor"]["fxgraph_cache_hit"],
                counters["aot_autograd"]["autograd_cache_hit"],
                counters["inductor"]["fxgraph_cache_miss"])  # fmt: skip

    before = lookups()
    try:
        yield found
    finally:
        fx_hits, autograd_hits, misses = (n - m for n, m in zip(lookups(), before, strict=True))
        # A graph AOTAutograd's cache holds is usually looked up in Inductor's too: one hit.
        found.hits = max(fx_hits, autograd_hits)
        found.misses = misses
