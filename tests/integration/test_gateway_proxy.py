"""The gateway reaches the model vendor through the proxy the environment names, as the agent CLIs
do: `HTTPS_PROXY` by a CONNECT tunnel (TLS with the vendor end to end), `HTTP_PROXY` by an
absolute-form request, `NO_PROXY` and the loopback directly. The proxy is a boundary we do not
own, so the test writes a small one on 127.0.0.1; it resolves every host name to this machine's
loopback, so a vendor named `model.test` is reachable only through it. The vendor is the fake
Anthropic API (over TLS with a certificate of the test's own authority, for `https`)."""

from __future__ import annotations

import datetime
import http.client
import json
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from agentctl.domain.agent import ModelApi
from agentctl.domain.model_faults import Retries
from agentctl.execution.gateway.server import Gateway
from agentctl.execution.gateway.upstream import bypassed
from tests.agents.fake_models import FakeModel, Fault, anthropic_server

KEY = "sk-ant-proxy-test-7a8b"
VENDOR = "model.test"  # resolves nowhere: only the test proxy knows it
ONE_TRY = Retries(tries=1)


class LoopbackProxy:
    """An HTTP proxy on 127.0.0.1: CONNECT tunnels and absolute-form requests (one per
    connection), every host name taken as 127.0.0.1. `seen` is each request's method, target
    and headers; `refuse` answers every request with that status instead."""

    def __init__(self, refuse: int | None = None) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.refuse = refuse
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner._handle(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, credentials: str = "") -> str:
        return f"http://{credentials}127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, client: socket.socket) -> None:
        incoming = client.makefile("rb")
        method, target, _ = incoming.readline().decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while (line := incoming.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        self.seen.append((method, target, headers))
        if self.refuse is not None:
            client.sendall(f"HTTP/1.1 {self.refuse} Refused\r\ncontent-length: 0\r\n\r\n"
                           .encode())
            return
        if method == "CONNECT":
            upstream = socket.create_connection(("127.0.0.1", int(target.rsplit(":", 1)[1])))
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:  # absolute-form: passed on in origin-form, the connection closed after it
            parts = urlsplit(target)
            upstream = socket.create_connection(("127.0.0.1", parts.port or 80))
            body = incoming.read(int(headers.get("content-length") or 0))
            kept = {k: v for k, v in headers.items() if not k.startswith("proxy-")}
            head = f"{method} {parts.path}{'?' + parts.query if parts.query else ''} HTTP/1.1\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in {**kept, "connection": "close"}.items())
            upstream.sendall(head.encode("latin-1") + b"\r\n" + body)
        pump = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
        pump.start()
        _copy(client, upstream)
        pump.join(timeout=30)
        upstream.close()


def _copy(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _authority(folder: Path) -> tuple[Path, ssl.SSLContext]:
    """A certificate authority of the test's own (its certificate's file) and a server context
    with a certificate it signed for the vendor's name."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentctl test authority")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(hours=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, VENDOR)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(2)
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(VENDOR)]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    authority, chain, private = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    authority.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    chain.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, private)
    return authority, context


@pytest.fixture
def vendor() -> Iterator[FakeModel]:
    server = anthropic_server()
    yield server
    server.close()


@pytest.fixture
def tls_vendor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """The fake vendor over TLS, its authority trusted the way OpenSSL reads it (SSL_CERT_FILE)."""
    authority, context = _authority(tmp_path)
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))
    server = anthropic_server()
    server.server.socket = context.wrap_socket(server.server.socket, server_side=True)
    yield server
    server.close()


@pytest.fixture
def proxy() -> Iterator[LoopbackProxy]:
    server = LoopbackProxy()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def no_proxy_of_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY",
                 "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)


def post(gateway: Gateway) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30)
    connection.request("POST", "/v1/messages?beta=true", body=json.dumps(
        {"model": "claude-sonnet-4-5", "stream": True, "messages": []}),
        headers={"x-api-key": gateway.placeholder, "content-type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def test_an_https_vendor_is_reached_through_the_https_proxys_connect_tunnel(
        tls_vendor: FakeModel, proxy: LoopbackProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url("agent%40corp:s3cret@"))
    gateway = Gateway(f"https://{VENDOR}:{tls_vendor.port}", KEY, api=ModelApi.ANTHROPIC,
                      retries=ONE_TRY)
    try:
        status, data = post(gateway)
        assert status == 200 and b"message_stop" in data, data
        [(method, target, headers)] = proxy.seen
        assert (method, target) == ("CONNECT", f"{VENDOR}:{tls_vendor.port}")
        assert headers["proxy-authorization"] == "Basic YWdlbnRAY29ycDpzM2NyZXQ="
        assert tls_vendor.script.headers[0]["x-api-key"] == KEY  # inside the tunnel only
        assert "proxy-authorization" not in tls_vendor.script.headers[0]
        [exchange] = gateway.drain()
        assert (exchange.status, exchange.input_tokens) == (200, 1200)
    finally:
        gateway.close()


def test_an_http_vendor_is_reached_through_the_http_proxy_by_its_absolute_url(
        vendor: FakeModel, proxy: LoopbackProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", proxy.url())
    gateway = Gateway(f"http://{VENDOR}:{vendor.port}", KEY, api=ModelApi.ANTHROPIC,
                      retries=ONE_TRY)
    try:
        status, data = post(gateway)
        assert status == 200 and b"message_stop" in data, data
        [(method, target, headers)] = proxy.seen
        assert (method, target) == ("POST", f"http://{VENDOR}:{vendor.port}/v1/messages?beta=true")
        assert headers["x-api-key"] == KEY and headers["host"] == f"{VENDOR}:{vendor.port}"
    finally:
        gateway.close()


def test_through_a_proxy_a_redirect_is_answered_not_followed(
        vendor: FakeModel, proxy: LoopbackProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url())
    vendor.faults = [Fault(status=307, headers=(("location", "http://elsewhere.test/v1"),))]
    gateway = Gateway(f"http://{VENDOR}:{vendor.port}", KEY, api=ModelApi.ANTHROPIC,
                      retries=ONE_TRY)
    try:
        assert post(gateway)[0] == 307
        assert [target for _, target, _ in proxy.seen] == \
            [f"http://{VENDOR}:{vendor.port}/v1/messages?beta=true"]
        assert len(vendor.seen) == 1
    finally:
        gateway.close()


def test_no_proxy_names_a_vendor_reached_directly(
        proxy: LoopbackProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url())
    monkeypatch.setenv("NO_PROXY", "internal.example, .test")
    gateway = Gateway(f"https://{VENDOR}:1", KEY, api=ModelApi.ANTHROPIC, retries=ONE_TRY)
    try:
        status, data = post(gateway)
        assert status == 502 and VENDOR.encode() in data  # it cannot be found without the proxy
        assert proxy.seen == []
    finally:
        gateway.close()


def test_a_vendor_on_the_loopback_is_never_proxied(
        vendor: FakeModel, proxy: LoopbackProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url())
    monkeypatch.setenv("ALL_PROXY", proxy.url())
    gateway = Gateway(vendor.url, KEY, api=ModelApi.ANTHROPIC, retries=ONE_TRY)
    try:
        assert post(gateway)[0] == 200
        assert proxy.seen == []
    finally:
        gateway.close()


def test_a_proxy_that_refuses_the_tunnel_is_a_failed_connection_on_record(
        monkeypatch: pytest.MonkeyPatch) -> None:
    refusing = LoopbackProxy(refuse=407)
    monkeypatch.setenv("HTTPS_PROXY", refusing.url())
    gateway = Gateway(f"https://{VENDOR}", KEY, api=ModelApi.ANTHROPIC, retries=ONE_TRY)
    try:
        status, data = post(gateway)
        assert status == 502 and b"407" in data
        [exchange] = gateway.drain()
        assert exchange.fault is not None and "407" in exchange.fault
    finally:
        gateway.close()
        refusing.close()


@pytest.mark.parametrize("value", ["socks5://127.0.0.1:1080", "https://proxy.corp:3128",
                                   "http://proxy.corp:port"])
def test_a_proxy_the_gateway_cannot_use_stops_it_with_a_reason(
        value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", value.replace("//", "//user:pw@"))
    with pytest.raises(ValueError, match="is not an http://HOST") as raised:
        Gateway(f"https://{VENDOR}", KEY, api=ModelApi.ANTHROPIC)
    assert "pw" not in str(raised.value)


@pytest.mark.parametrize(("host", "port", "no_proxy", "direct"), [
    ("api.anthropic.com", 443, "*", True),
    ("api.anthropic.com", 443, "anthropic.com", True),
    ("api.anthropic.com", 443, ".anthropic.com", True),
    ("api.anthropic.com", 443, "*.anthropic.com", True),
    ("api.anthropic.com", 443, "API.Anthropic.com:443", True),
    ("api.anthropic.com", 443, "api.anthropic.com:8443", False),
    ("api.anthropic.com", 443, "thropic.com", False),
    ("api.anthropic.com", 443, "", False),
    ("10.1.2.3", 443, "10.0.0.0/8", True),
    ("10.1.2.3", 443, "192.168.0.0/16,10.1.2.4", False),
])
def test_no_proxy_entries_match_as_curl_and_go_match_them(
        host: str, port: int, no_proxy: str, direct: bool) -> None:
    assert bypassed(host, port, no_proxy) is direct
