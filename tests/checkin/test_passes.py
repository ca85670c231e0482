"""Pass codes: signed per event, read back, refused when forged, altered or another event's."""
import base64

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from booking.checkin.passes import PassRef, PassSigner, b64url, unb64url

EVENT = "a" * 32
OTHER = "b" * 32
PASS = "c" * 32 + "-2"


def test_a_code_is_the_documented_text_and_reads_back():
    signer = PassSigner(b"secret")
    code = signer.code(EVENT, PASS, "workshop-a")
    prefix, payload, signature = code.split(".")
    assert prefix == "BP1" and "=" not in code
    assert unb64url(payload) == f"{EVENT}.{PASS}.workshop-a".encode()
    # Anyone holding the event's public key checks it (what the scanner page does offline).
    key = Ed25519PublicKey.from_public_bytes(unb64url(signer.public_key(EVENT)))
    key.verify(unb64url(signature), f"BP1.{payload}".encode("ascii"))
    assert signer.read(code) == PassRef(EVENT, PASS, "workshop-a")
    assert signer.read(code).registration_id == "c" * 32 and signer.read(code).seat == 2


def test_forged_altered_and_other_event_codes_read_as_nothing():
    signer = PassSigner(b"secret")
    code = signer.code(EVENT, PASS, "admission")
    forged = PassSigner(b"another secret").code(EVENT, PASS, "admission")
    prefix, payload, signature = code.split(".")
    altered = ".".join([prefix, b64url(f"{EVENT}.{'c' * 32}-3.admission".encode()), signature])
    flipped = code[:-2] + ("A" if code[-2] != "A" else "B") + code[-1]
    assert signer.read(forged) is None
    assert signer.read(altered) is None
    assert signer.read(flipped) is None
    assert signer.read(code, event_id=OTHER) is None
    assert signer.read(signer.code(OTHER, PASS, "admission"), event_id=EVENT) is None
    for junk in ("", "BP1.", "BP1.x.y", code + ".", None, 42, "BP1." + "A" * 500):
        assert signer.read(junk) is None


def test_keys_differ_per_event_and_per_secret():
    one, two = PassSigner(b"secret"), PassSigner(b"other")
    assert one.public_key(EVENT) != one.public_key(OTHER)
    assert one.public_key(EVENT) != two.public_key(EVENT)
    assert len(base64.urlsafe_b64decode(one.public_key(EVENT) + "=")) == 32
    assert PassSigner(b"secret").code(EVENT, PASS, "admission") == one.code(EVENT, PASS, "admission")


def test_rotated_secret__old_passes_still_read_new_ones_signed_with_the_new_key():
    from booking.checkin.passes import PassSigner
    event_id, pass_ = "a" * 32, "b" * 32 + "-1"
    old = PassSigner(b"old secret")
    issued = old.code(event_id, pass_, "admission")
    rotated = PassSigner(b"new secret", fallbacks=[b"old secret"])
    assert rotated.read(issued, event_id=event_id) is not None
    assert rotated.public_keys(event_id) == [PassSigner(b"new secret").public_key(event_id),
                                             old.public_key(event_id)]
    fresh = rotated.code(event_id, pass_, "admission")
    assert fresh != issued and PassSigner(b"new secret").read(fresh) is not None
    assert PassSigner(b"new secret").read(issued) is None  # the fallback is what reads it
    assert PassSigner(b"other", fallbacks=[b"new secret"]).read(issued) is None


def test_wiring__secret_key_fallbacks_reach_the_pass_signer(settings):
    from booking.checkin.passes import PassSigner
    from booking.wiring import pass_signer
    event_id = "c" * 32
    issued = PassSigner(b"before-rotation").code(event_id, "d" * 32 + "-1", "admission")
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "after-rotation", ["before-rotation"]
    signer = pass_signer()
    assert signer.read(issued, event_id=event_id) is not None
    assert len(signer.public_keys(event_id)) == 2
