"""Build the Lambda package of deploy/aws/template.yaml: ``make lambda-zip``.

One zip serves both functions (handlers ``booking.lambda_handler.handler``, the streams
decider, and ``booking.lambda_handler.outbox_backlog``, the backlog probe): the project's
runtime code (``booking/``, ``config/``, ``localdynamo/``, an installed app) and the
runtime requirements (``requirements.txt``) installed by pip as wheels for the Lambda
runtime (``--python-version``, default 3.12 as the template's ``python3.12``, and
``--platform``, default the manylinux tags Amazon Linux 2023 on x86_64 runs). Entries are
sorted and dated 1980-01-01, so the same sources give the same bytes (and S3 key hash).

Usage: python deploy/aws/build_lambda.py [--output dist/event-booking-lambda.zip]
       [--python-version 3.12] [--platform TAG ...]
"""
import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE = ("booking", "config", "localdynamo")
SKIPPED_PARTS = {"__pycache__", "tests"}
SKIPPED_SUFFIXES = {".pyc", ".pyo"}
EPOCH = (1980, 1, 1, 0, 0, 0)
# Wheels for glibc 2.28 or older run on Amazon Linux 2023 (glibc 2.34); pip takes the
# tags as given, so the older manylinux names are listed too.
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def install_requirements(target: Path, *, python_version: str, platforms) -> None:
    subprocess.run([
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-compile", "--target", str(target), "--only-binary=:all:",
        "--implementation", "cp", "--python-version", python_version,
        *(f"--platform={p}" for p in platforms), "--upgrade",
        "-r", str(ROOT / "requirements.txt"),
    ], check=True)


def cached_requirements(cache: Path | None, *, python_version: str, platforms) -> Path:
    """The installed requirements, reused from ``cache`` while requirements.txt, the
    Python version and the platforms are the same (else installed afresh)."""
    key = hashlib.sha256("\n".join([(ROOT / "requirements.txt").read_text(), python_version,
                                     *platforms]).encode()).hexdigest()[:16]
    target = cache / f"deps-{key}"
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        install_requirements(target, python_version=python_version, platforms=platforms)
        (target / ".complete").write_text("")
    return target


def files(base: Path, top: Path):
    """The files under ``top`` (or ``top`` itself: a top-level module such as six.py)."""
    for path in ([top] if top.is_file() else sorted(top.rglob("*"))):
        relative = path.relative_to(base)
        if (path.is_file() and not SKIPPED_PARTS & set(relative.parts)
                and path.suffix not in SKIPPED_SUFFIXES):
            yield path, relative.as_posix()


def build(output: Path, *, python_version: str, platforms=PLATFORMS,
          cache: Path | None = None) -> Path:
    """Write the zip to ``output``; ``cache``: a directory where the installed
    requirements are kept for the next build (default: none, install afresh)."""
    with tempfile.TemporaryDirectory() as scratch:
        deps = cached_requirements(Path(cache or scratch), python_version=python_version,
                                   platforms=platforms)
        entries = {}
        for top in sorted(deps.iterdir()):
            for path, name in files(deps, top):
                if name == ".complete":
                    continue
                if not name.split("/")[0].endswith(".dist-info") or name.endswith("METADATA"):
                    entries[name] = path
        for package in CODE:
            for path, name in files(ROOT, ROOT / package):
                entries[name] = path
        output.parent.mkdir(parents=True, exist_ok=True)
        partial = output.with_suffix(".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for name in sorted(entries):
                info = zipfile.ZipInfo(name, EPOCH)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, entries[name].read_bytes())
        shutil.move(partial, output)
    return output


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "dist" / "event-booking-lambda.zip"))
    parser.add_argument("--python-version", default="3.12")
    parser.add_argument("--platform", action="append", default=None,
                        help=f"a wheel platform tag, repeatable (default: {', '.join(PLATFORMS)})")
    parser.add_argument("--cache", default=str(ROOT / "var" / "lambda-build"),
                        help="keep the installed requirements here for the next build")
    args = parser.parse_args(argv)
    path = build(Path(args.output), python_version=args.python_version,
                 platforms=args.platform or PLATFORMS, cache=Path(args.cache))
    size = path.stat().st_size / 1e6
    print(f"{path}: {size:.1f} MB (handlers booking.lambda_handler.handler and "
          "booking.lambda_handler.outbox_backlog)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
