"""compperf.inductor_cache: a first call is a warm start only when the caches held its graphs."""

from __future__ import annotations

import pytest
from torch._dynamo.utils import counters

import compperf


@pytest.mark.parametrize(
    ("hits", "misses", "state"),
    [(0, 2, "miss"), (3, 0, "hit"), (1, 1, "mixed"), (0, 0, "none")],
)
def test_state_follows_the_cache_lookups_inside_the_block(hits, misses, state):
    counters["inductor"]["fxgraph_cache_hit"] += 5  # lookups before the block do not count
    with compperf.inductor_cache() as cache:
        counters["inductor"]["fxgraph_cache_hit"] += hits
        counters["inductor"]["fxgraph_cache_miss"] += misses
    assert (cache.hits, cache.misses, cache.state) == (hits, misses, state)
    assert str(cache)  # a sentence for each state


# Importing Inductor imports a module that still uses torch.jit.script_method (torch 2.13).
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method`:DeprecationWarning")
def test_a_second_compile_of_the_same_code_is_warm(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path))

    def chain(x):
        return (x * 2 + 1).relu()

    x = torch.randn(64)
    states = []
    for _ in range(2):
        torch._dynamo.reset()  # forget the compiled code in memory, keep the disk cache
        with compperf.inductor_cache() as cache:
            torch.compile(chain)(x)
        states.append(cache.state)
    assert states == ["miss", "hit"]
