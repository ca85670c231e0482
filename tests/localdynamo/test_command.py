"""manage.py dynamodb_local: clear errors before anything starts, and the pinned release."""
import base64
import hashlib
import socket

import pytest
from django.core.management import CommandError, call_command

from localdynamo import distribution, jvm


def test_dynamodb_local__port_taken__clear_error():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]

        with pytest.raises(CommandError, match="Is another dynamodb_local"):
            call_command("dynamodb_local", "--port", str(port), "--in-memory")


def test_dynamodb_local__bad_fault_spec__clear_error():
    with pytest.raises(CommandError, match="Bad fault spec 'lost=0.1'.*unknown fault 'lost'"):
        call_command("dynamodb_local", "--in-memory", "--faults", "lost=0.1")


def test_dynamodb_local__no_java__says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))

    with pytest.raises(CommandError, match="needs Java.*apt-get install default-jre-headless"):
        call_command("dynamodb_local", "--in-memory", "--port", "0")


def test_dynamodb_local_dir__other_jar__refused_by_its_hash(monkeypatch, tmp_path):
    (tmp_path / "DynamoDBLocal_lib").mkdir()
    (tmp_path / "DynamoDBLocal.jar").write_bytes(b"not the pinned release")
    monkeypatch.setenv("DYNAMODB_LOCAL_DIR", str(tmp_path))

    with pytest.raises(CommandError, match=f"is not DynamoDB Local {distribution.VERSION}"):
        call_command("dynamodb_local", "--in-memory", "--port", "0")


def test_dynamodb_local_jar__missing_lib__refused(monkeypatch, tmp_path):
    (tmp_path / "DynamoDBLocal.jar").write_bytes(b"x")
    monkeypatch.setenv("DYNAMODB_LOCAL_JAR", str(tmp_path / "DynamoDBLocal.jar"))

    with pytest.raises(distribution.DistributionError, match="no DynamoDBLocal.jar with"):
        distribution.locate()


def test_check_integrity__published_sha512__accepts_only_that_content(tmp_path):
    tarball = tmp_path / "package.tgz"
    tarball.write_bytes(b"content")
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(b"content").digest()).decode()

    distribution.check_integrity(tarball, integrity)
    tarball.write_bytes(b"tampered")
    with pytest.raises(distribution.DistributionError, match="published integrity"):
        distribution.check_integrity(tarball, integrity)


def test_cached_release__is_the_pinned_one():
    release = distribution.locate()

    assert distribution.sha256_of(release.jar) == distribution.JAR_SHA256
    assert (release.lib / "libsqlite4java-linux-amd64.so").exists()


def test_java_command__binds_the_given_host_with_a_shared_database(tmp_path):
    release = distribution.locate()
    java = jvm.find_java()

    argv = jvm.command(java, release, host="127.0.0.1", port=8123, data_dir=tmp_path)

    assert argv[argv.index("BoundDynamoDBLocal") + 1] == "127.0.0.1"
    assert argv[-6:] == ["-port", "8123", "-sharedDb", "-disableTelemetry", "-dbPath",
                         str(tmp_path)]


def test_java_command__extra_jvm_options_before_the_class(monkeypatch, tmp_path):
    release, java = distribution.locate(), jvm.find_java()
    monkeypatch.setenv("DYNAMODB_LOCAL_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1  -Xss1m")
    argv = jvm.command(java, release, host="127.0.0.1", port=8123, data_dir=tmp_path)
    assert argv[1:3] == ["-XX:TieredStopAtLevel=1", "-Xss1m"]
    assert argv.index("-Xss1m") < argv.index("BoundDynamoDBLocal")
    monkeypatch.setenv("DYNAMODB_LOCAL_JAVA_OPTIONS", "")
    assert "-Xss1m" not in jvm.command(java, release, host="127.0.0.1", port=8123,
                                       data_dir=tmp_path)
