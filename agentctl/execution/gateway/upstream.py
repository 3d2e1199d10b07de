"""The gateway's connections to the model vendor, through the proxy the environment names.

On many company networks the vendor is reachable only through an HTTP proxy named by
`HTTPS_PROXY`/`HTTP_PROXY` (`ALL_PROXY` for both), with `NO_PROXY` naming the hosts reached
directly. The agent CLIs honour them, so the gateway must too, or the CLI could reach the vendor
and agentctl could not. The proxies are read as urllib reads them (`getproxies_environment`:
lower case first, `HTTP_PROXY` ignored in a CGI request), once, when the gateway starts;
`NO_PROXY` as curl and Go read it (`*`, host names matching themselves and their subdomains,
with or without a leading dot, an optional `:PORT`, and IP ranges as CIDR). An `https`
endpoint is reached through a CONNECT tunnel (TLS with the vendor end to end: the proxy sees the
host name, never the key); an `http` one by an absolute-form request to the proxy. An endpoint
on the loopback (a model server on this machine) is never proxied, as Go's net/http does it.
Nothing else changes: the request goes to its one route, no redirect is followed (`http.client`
follows none), and the handler keeps its caps. A proxy reached over TLS or SOCKS is not
supported: the gateway refuses to start with one.
"""

from __future__ import annotations

import base64
import http.client
from dataclasses import dataclass
from ipaddress import ip_address, ip_network
from urllib.parse import SplitResult, unquote, urlsplit
from urllib.request import getproxies_environment


@dataclass(frozen=True)
class Proxy:
    host: str
    port: int
    authorization: str | None  # the Proxy-Authorization header, from the URL's user:password

    @property
    def headers(self) -> dict[str, str]:
        return {} if self.authorization is None else {"Proxy-Authorization": self.authorization}


@dataclass(frozen=True)
class Outbound:
    """How the gateway reaches `endpoint`: directly, or through `proxy`."""

    endpoint: SplitResult
    proxy: Proxy | None

    @classmethod
    def of(cls, endpoint: SplitResult) -> Outbound:
        """The way out the environment gives; ValueError for a proxy URL it cannot use."""
        return cls(endpoint, proxy_for(endpoint))

    def connection(self, timeout: float) -> http.client.HTTPConnection:
        """A new connection (not yet open) to the endpoint, or to the proxy in front of it."""
        endpoint, proxy = self.endpoint, self.proxy
        https = endpoint.scheme == "https"
        if proxy is None:
            factory = http.client.HTTPSConnection if https else http.client.HTTPConnection
            return factory(endpoint.hostname or "", endpoint.port, timeout=timeout)
        if https:
            connection = http.client.HTTPSConnection(proxy.host, proxy.port, timeout=timeout)
            connection.set_tunnel(endpoint.hostname or "", endpoint.port or 443,
                                  headers=proxy.headers)
            return connection
        return http.client.HTTPConnection(proxy.host, proxy.port, timeout=timeout)

    def request(self, connection: http.client.HTTPConnection, method: str, path: str,
                body: bytes, headers: dict[str, str]) -> None:
        """Send one request on `connection`: to the endpoint's `path`; through a proxy that
        forwards plain HTTP, as the absolute URL, with the proxy's credentials."""
        if self.proxy is not None and self.endpoint.scheme == "http":
            path = f"http://{_host_port(self.endpoint)}{path}"
            headers = {**headers, **self.proxy.headers}
        connection.request(method, path, body=body or None, headers=headers)


def proxy_for(endpoint: SplitResult) -> Proxy | None:
    """The proxy the environment names for `endpoint` (None: go directly)."""
    host = endpoint.hostname or ""
    if _loopback(host):
        return None
    proxies = getproxies_environment()
    url = proxies.get(endpoint.scheme) or proxies.get("all")
    if not url or bypassed(host, endpoint.port, proxies.get("no", "")):
        return None
    return _parsed(url, endpoint.scheme)


def bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether `NO_PROXY`'s value `no_proxy` names `host` (at `port`)."""
    host = host.lower().rstrip(".")
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        name, _, only_port = entry.rpartition(":") if entry.count(":") == 1 \
            else (entry, "", "")
        if only_port and (not only_port.isdigit() or int(only_port) != port):
            continue
        name = name.removeprefix("*").removeprefix(".").strip("[]")
        if name and (host == name or host.endswith(f".{name}") or _in_range(host, name)):
            return True
    return False


def _in_range(host: str, entry: str) -> bool:
    try:
        return "/" in entry and ip_address(host) in ip_network(entry, strict=False)
    except ValueError:
        return False


def _parsed(url: str, scheme: str) -> Proxy:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme != "http" or not parts.hostname or port == -1:
        shown = f"{parts.scheme}://{parts.hostname or ''}"  # never the password
        raise ValueError(f"the {scheme} proxy the environment names ({shown}...) is not an "
                         "http://HOST[:PORT] URL (a proxy reached over TLS or SOCKS is not "
                         "supported)")
    authorization = None
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return Proxy(parts.hostname, port or 80, authorization)


def _host_port(endpoint: SplitResult) -> str:
    host = endpoint.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{endpoint.port}" if endpoint.port else host


def _loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False
