"""Send, receive and ack one message with mq, using only Python's standard library.

    MQ_URL=http://127.0.0.1:8080/v1 MQ_KEY=<key> python3 mq_example.py [queue]

The queue is created when it does not exist. Exits non-zero, with the server's error kind and
message, on any answer the API does not promise here.
"""

import json
import os
import sys
import urllib.error
import urllib.request

BASE = os.environ.get("MQ_URL", "http://127.0.0.1:8080/v1").rstrip("/")
KEY = os.environ.get("MQ_KEY", "")
SPOOL = os.environ.get("MQ_SPOOL", "default")


class ApiError(Exception):
    """An error answer: its status and the kind from the JSON body."""

    def __init__(self, status, body):
        try:
            error = json.loads(body)
        except ValueError:
            error = {}
        self.status = status
        self.kind = error.get("kind")
        super().__init__(f"{status} {self.kind}: {error.get('message', body[:200])}")


def call(method, path, body=b"", headers=None):
    """One request; returns (status, headers, body bytes). Raises ApiError for 4xx and 5xx."""
    request = urllib.request.Request(BASE + path, data=body, method=method)
    request.add_header("Authorization", f"Bearer {KEY}")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        raise ApiError(error.code, error.read().decode("utf-8", "replace")) from None


def ensure_queue(queue):
    settings = json.dumps({"maxRetries": 3}).encode()
    try:
        call("PUT", f"/spools/{SPOOL}/queues/{queue}", settings,
             {"Content-Type": "application/json"})
    except ApiError as error:
        if error.kind != "queue_exists":
            raise


def main():
    queue = sys.argv[1] if len(sys.argv) > 1 else "examples"
    ensure_queue(queue)

    status, headers, _ = call("POST", f"/spools/{SPOOL}/queues/{queue}/send",
                              b"hello from python",
                              {"Content-Type": "application/octet-stream"})
    print(f"sent {headers['Svc-Message-Id']} ({status})")

    status, headers, payload = call("POST", f"/spools/{SPOOL}/queues/{queue}/recv?waitSeconds=5")
    if status == 204:
        sys.exit("nothing to receive")
    lease = headers["Svc-Lease"]
    print(f"received {headers['Svc-Message-Id']}: {payload.decode()} "
          f"(retries {headers['Svc-Message-Retries']})")

    # The work would happen here; on failure, POST .../nack (retry) or .../fail instead.
    call("POST", f"/spools/{SPOOL}/ack", headers={"Svc-Lease": lease})
    print(f"acked {headers['Svc-Message-Id']}")


if __name__ == "__main__":
    try:
        main()
    except ApiError as error:
        sys.exit(f"mq: {error}")
