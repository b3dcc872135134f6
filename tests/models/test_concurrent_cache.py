"""Four processes loading a chunked model for the first time at once: one joins it, none fails."""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from dataclasses import replace
from pathlib import Path

from kgqa_core.models import registry

N_PARTS = 6
PART_BYTES = 3 << 20


def _join_worker(args: tuple) -> str:
    """In a fresh process: the real `packaged_gguf` on a fake chunked spec whose parts are files."""
    cache, sha, parts, barrier = args
    os.environ["KGQA_CACHE_DIR"] = cache
    from kgqa_core.models import manager

    by_module = {f"kgqa_fake_part_{i}": Path(p) for i, p in enumerate(parts)}
    manager._part_path = lambda module: by_module[module]
    manager.missing_packages = lambda spec: []
    spec = replace(registry.PACKAGED_MODELS["smollm2-135m"], gguf_filename="joined.gguf", sha256=sha,
                   packages=tuple(f"fake-part-{i}" for i in range(len(parts))), modules=tuple(by_module))
    barrier.wait(timeout=120)  # all four start joining at the same moment
    return str(manager.packaged_gguf(spec))


def test_four_processes_join_a_chunked_model_at_once(tmp_path):
    rng = os.urandom
    parts = []
    whole = hashlib.sha256()
    for i in range(N_PARTS):
        data = rng(PART_BYTES)
        whole.update(data)
        p = tmp_path / f"part{i}"
        p.write_bytes(data)
        parts.append(str(p))
    cache = tmp_path / "cache"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as sync, ctx.Pool(4) as pool:
        args = (str(cache), whole.hexdigest(), parts, sync.Barrier(4))
        paths = pool.map(_join_worker, [args] * 4)
    assert len(set(paths)) == 1
    target = Path(paths[0])
    assert hashlib.sha256(target.read_bytes()).hexdigest() == whole.hexdigest()
    leftovers = [p.name for p in target.parent.iterdir() if p.name.endswith((".partial", ".tmp"))]
    assert leftovers == []
