"""Standard Webhooks signatures: the specification's own test vector, and verification."""
from booking.webhooks import signing

# From the Standard Webhooks specification's reference libraries.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
WEBHOOK_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
TIMESTAMP = 1614265330
BODY = b'{"test": 2432232314}'
SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_sign__spec_test_vector():
    assert signing.sign(SECRET, WEBHOOK_ID, TIMESTAMP, BODY) == SIGNATURE


def test_verify__spec_test_vector__accepted_then_tampering_refused():
    headers = {"Webhook-Id": WEBHOOK_ID, "Webhook-Timestamp": str(TIMESTAMP),
               "Webhook-Signature": f"v1,bm90IGl0 {SIGNATURE}"}  # several: one must match
    assert signing.verify(SECRET, headers, BODY, now=TIMESTAMP + 10)
    assert not signing.verify(SECRET, headers, BODY + b" ", now=TIMESTAMP)
    assert not signing.verify(SECRET, {**headers, "Webhook-Id": "msg_other"}, BODY, now=TIMESTAMP)
    assert not signing.verify(SECRET, headers, BODY, now=TIMESTAMP + 301)  # replayed late
    assert not signing.verify(signing.new_secret(), headers, BODY, now=TIMESTAMP)


def test_new_secret__whsec_and_32_random_bytes():
    secret = signing.new_secret()
    assert secret.startswith("whsec_") and len(signing.key_of(secret)) == 32
    assert secret != signing.new_secret()
