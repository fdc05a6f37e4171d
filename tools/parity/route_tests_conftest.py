# Appended to TiTiler's own tests/conftest.py by tools/parity/route-tests.sh: the `app` fixture
# becomes an HTTP client of a running tessera (instead of FastAPI's TestClient over TiTiler), and
# the tests' https://myurl.com/ files are served by a local file server. Host "testserver" keeps the
# URLs tessera writes into TileJSON and WMTS as TestClient's would be.
import os as _os

import httpx as _httpx
import pytest as _pytest

_TESSERA = _os.environ["TESSERA_URL"]
_FILES = _os.environ["FILES_URL"]


def _swap(v):
    if isinstance(v, str):
        return v.replace("https://myurl.com/", _FILES + "/")
    if isinstance(v, dict):
        return {k: _swap(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_swap(x) for x in v)
    return v


class _TesseraClient:
    def __init__(self):
        self._client = _httpx.Client(base_url=_TESSERA, timeout=60, headers={"host": "testserver"})

    def _send(self, method, url, **kw):
        for k in ("params", "json"):
            if k in kw:
                kw[k] = _swap(kw[k])
        return self._client.request(method, _swap(url), **kw)

    def get(self, url, **kw):
        return self._send("GET", url, **kw)

    def post(self, url, **kw):
        return self._send("POST", url, **kw)

    def head(self, url, **kw):
        return self._send("HEAD", url, **kw)


@_pytest.fixture(autouse=True)
def app(set_env):  # noqa: F811 (replaces TiTiler's fixture of the same name)
    return _TesseraClient()
