"""What the tests share: the server under test (behind the Go test's proxy) and its controls."""

from __future__ import annotations

import json
import os
import unittest
import urllib.request
import uuid
from typing import Any, Callable, Dict, List

import httpx

import carryon

URL = os.environ.get("CARRYON_URL", "")
KEY = os.environ.get("CARRYON_KEY", "")
CONTROL = os.environ.get("CARRYON_TEST_CONTROL", "")

PICNIC = "Task: plan a picnic: pick a park, then buy food, then invite friends"
WEATHER_TOOL: Dict[str, Any] = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def needs_server(cls: type) -> type:
    """Skips a test class when no server was given (the tests run under TestPythonSDK)."""
    return unittest.skipUnless(URL and KEY, "CARRYON_URL and CARRYON_KEY name no server")(cls)


def control(path: str, method: str = "POST") -> Dict[str, Any]:
    """Calls one of the Go test proxy's controls (/_test/…)."""
    req = urllib.request.Request(CONTROL + path, method=method, data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=120) as res:
        body = res.read()
    return json.loads(body) if body else {}


def seen(key: str) -> int:
    """How many requests with this Idempotency-Key reached the proxy."""
    return int(control("/_test/seen?key=" + key, "GET")["requests"])


class Recorder:
    """Keeps the method, path and Idempotency-Key of every request a client sends."""

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> None:
        self.requests.append({"method": request.method, "path": request.url.path,
                              "key": request.headers.get("Idempotency-Key")})

    def async_hook(self) -> Any:
        async def hook(request: httpx.Request) -> None:
            self(request)
        return hook

    def keys(self, method: str, path: str) -> List[str]:
        """The Idempotency-Keys sent with method on path, in order (a retry repeats one)."""
        return [r["key"] for r in self.requests if r["method"] == method and r["path"] == path]


def client(recorder: Recorder | None = None, **kw: Any) -> carryon.Carryon:
    """A sync client of the server; with a recorder, every request is recorded."""
    hooks: Dict[str, List[Callable[..., Any]]] = {"request": [recorder]} if recorder else {}
    return carryon.Carryon(URL, KEY, http_client=httpx.Client(timeout=60, event_hooks=hooks), **kw)


def async_client(recorder: Recorder | None = None, **kw: Any) -> carryon.AsyncCarryon:
    """An async client of the server; with a recorder, every request is recorded."""
    hooks: Dict[str, List[Callable[..., Any]]] = {"request": [recorder.async_hook()]} if recorder else {}
    return carryon.AsyncCarryon(URL, KEY, http_client=httpx.AsyncClient(timeout=60, event_hooks=hooks), **kw)


_bob: Dict[str, str] = {}


def bob_key() -> str:
    """The key of another user, made once with the admin key (the local user's)."""
    if "key" not in _bob:
        with client() as c:
            made = c.users.create("bob-" + uuid.uuid4().hex[:8])
        _bob["key"] = made["key"]
    return _bob["key"]
