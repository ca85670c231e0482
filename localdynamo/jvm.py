"""The Java command line that runs DynamoDB Local on one address and port.

DynamoDB Local needs Java 17 or newer. Its own runner listens on every interface, so the
command runs ``java/BoundDynamoDBLocal.java`` (compiled once into the cache with the JDK's
``javac``) to bind the address asked for. With only a JRE (no ``javac``) it falls back to
DynamoDB Local's runner, which listens on every interface, and says so.
"""
import hashlib
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from .distribution import VERSION, Distribution, cache_root

MIN_JAVA = 17
LAUNCHER = Path(__file__).resolve().parent / "java" / "BoundDynamoDBLocal.java"
INSTALL_HINT = ("Install Java 17 or newer (Debian/Ubuntu: apt-get install default-jre-headless; "
                "`make run` and `make test` do this when run as root) or set JAVA_HOME.")


class JavaMissing(RuntimeError):
    """No usable Java; the message says what to install."""


def find_java() -> str:
    """The ``java`` of ``JAVA_HOME`` or the PATH, checked to be version 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        raise JavaMissing(f"DynamoDB Local needs Java, and none was found. {INSTALL_HINT}")
    major = java_major_version(java)
    if major < MIN_JAVA:
        raise JavaMissing(f"DynamoDB Local needs Java {MIN_JAVA}+, {java} is Java {major}. "
                          f"{INSTALL_HINT}")
    return java


def java_major_version(java: str) -> int:
    answer = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', answer.stderr + answer.stdout)
    if not match:
        raise JavaMissing(f"Cannot tell the version of {java}. {INSTALL_HINT}")
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major  # "1.8.0" is Java 8


def bound_launcher(java: str, distribution: Distribution) -> Path | None:
    """The compiled launcher's class directory, or None when no ``javac`` is at hand."""
    source = LAUNCHER.read_bytes()
    key = hashlib.sha256(source + VERSION.encode()).hexdigest()[:12]
    classes = cache_root() / f"launcher-{key}"
    if (classes / "BoundDynamoDBLocal.class").exists():
        return classes
    javac = Path(java).with_name("javac")
    if not javac.exists():
        return None
    scratch = classes.with_name(f"{classes.name}.{os.getpid()}")
    subprocess.run([str(javac), "-nowarn", "-cp", distribution.classpath, "-d", str(scratch),
                    str(LAUNCHER)], check=True, capture_output=True, timeout=300)
    try:
        scratch.rename(classes)
    except OSError:  # another process compiled it first
        shutil.rmtree(scratch, ignore_errors=True)
    return classes


def command(java: str, distribution: Distribution, *, host: str, port: int,
            data_dir: Path | None, log=print) -> list[str]:
    """``java ...`` for a shared-database DynamoDB Local, on disk in ``data_dir`` or in memory."""
    storage = ["-dbPath", str(data_dir)] if data_dir else ["-inMemory"]
    options = ["-port", str(port), "-sharedDb", "-disableTelemetry", *storage]
    # The test suite's many short-lived servers: -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
    # (scripts/test.sh) spend less CPU compiling and collecting (docs/local-dynamodb.md).
    extra = shlex.split(os.environ.get("DYNAMODB_LOCAL_JAVA_OPTIONS", ""))
    jvm = [java, *extra, f"-Djava.library.path={distribution.lib}"]
    classes = bound_launcher(java, distribution)
    if classes is None:
        log(f"No javac next to {java}: DynamoDB Local listens on every interface, not only "
            f"{host}. Install a JDK (default-jdk-headless) to bind one address.")
        return [*jvm, "-jar", str(distribution.jar), *options]
    classpath = os.pathsep.join([str(classes), distribution.classpath])
    return [*jvm, "-cp", classpath, "BoundDynamoDBLocal", host, *options]
