"""Code that runs inside the spawned client processes of the door's HTTP race: one
process is one gate, its threads scan at the same instant."""
import http.client
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor


def post_scan(port: int, token: str, list_id: str, body: dict) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request("POST", f"/api/v1/checkin-lists/{list_id}/scans/",
                           body=json.dumps(body),
                           headers={"Content-Type": "application/json",
                                    "Authorization": f"Bearer {token}",
                                    "Connection": "close"})
        response = connection.getresponse()
        text = response.read().decode()
    finally:
        connection.close()
    if response.status != 200:
        return {"status": f"http-{response.status}", "detail": text[:300]}
    return json.loads(text)


def gate_scans(port: int, token: str, list_id: str, code: str, gate: str, threads: int,
               start_at: float) -> list[dict]:
    """``threads`` scans of ``code`` at ``gate``, all sent at ``start_at``; each answer
    with the nonce it was sent with."""
    def one(_):
        nonce = uuid.uuid4().hex
        time.sleep(max(0.0, start_at - time.time()))
        answer = post_scan(port, token, list_id, {"code": code, "nonce": nonce, "gate": gate})
        return {**answer, "sent_nonce": nonce, "sent_gate": gate}

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, range(threads)))
