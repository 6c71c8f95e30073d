"""Where the server may send requests of its own.

By default only `https` URLs whose host resolves to public addresses. The operator setting
`KANDEV_OUTBOUND_ALLOW` (comma-separated) names more:

- `host` — that host name or address, any port (`ghe.internal`, `10.1.2.3`): plain `http`
  and private addresses are allowed for it;
- `host:port` — the same, on that port only (`ghe.internal:8443`, `[fd00::1]:443`);
- a CIDR — `https` to any host resolving into it (`10.0.0.0/8`, `fd00::/8`).

The check runs when a request is made: the host is resolved once, every address it
resolves to is checked, and the connection goes to the checked address (the URL's host
stays in the Host header and the TLS server name), so a DNS answer that changes between
the check and the connection (rebinding) cannot redirect it.
"""

import ipaddress
import socket
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from common.errors import KandevError


class OutboundRefused(KandevError):
    code = "outbound_refused"


@dataclass(frozen=True)
class Allowance:
    hosts: frozenset  # "host" entries
    host_ports: frozenset  # ("host", port) entries
    networks: tuple  # ip_network entries

    def names(self, host: str, port: int) -> bool:
        return host in self.hosts or (host, port) in self.host_ports

    def covers(self, address) -> bool:
        return any(address in network for network in self.networks)


def allowance() -> Allowance:
    """KANDEV_OUTBOUND_ALLOW, parsed (settings may change under tests: read each time)."""
    hosts, host_ports, networks = set(), set(), []
    for entry in settings.KANDEV_OUTBOUND_ALLOW:
        entry = entry.strip().lower()
        try:
            if "/" in entry:
                networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            url = httpx.URL(f"//{entry}")  # splits host and port, IPv6 brackets included
        except (ValueError, httpx.InvalidURL):
            raise ImproperlyConfigured(f"KANDEV_OUTBOUND_ALLOW: {entry!r} is not a host, host:port or CIDR.") from None
        if url.port is None:
            hosts.add(url.host)
        else:
            host_ports.add((url.host, url.port))
    return Allowance(frozenset(hosts), frozenset(host_ports), tuple(networks))


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _address(host: str):
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def url_errors(url: str) -> list[str]:
    """What is wrong with `url` as a destination, judged without resolving it."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return ["Enter a valid URL."]
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return ["Enter an http(s) URL."]
    rules = allowance()
    if rules.names(parsed.host, _port(parsed)):
        return []
    if parsed.scheme != "https":
        return ["Must be an https URL (KANDEV_OUTBOUND_ALLOW may name others)."]
    address = _address(parsed.host)
    if address is not None and not (address.is_global or rules.covers(address)):
        return ["Must be a public address (KANDEV_OUTBOUND_ALLOW may name others)."]
    return []


def checked_address(url: httpx.URL) -> str:
    """The one address to connect to for `url`, or OutboundRefused."""
    problems = url_errors(str(url))
    if problems:
        raise OutboundRefused(f"Refused to contact {url.host}: {problems[0]}")
    rules, port = allowance(), _port(url)
    try:
        found = socket.getaddrinfo(url.host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise OutboundRefused(f"Refused to contact {url.host}: the name does not resolve.") from None
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in found]
    if not rules.names(url.host, port):
        for address in addresses:
            if not (address.is_global or rules.covers(address)):
                raise OutboundRefused(
                    f"Refused to contact {url.host}: it resolves to a private address "
                    "(KANDEV_OUTBOUND_ALLOW may name it)."
                )
    return str(addresses[0])


class GuardedTransport(httpx.HTTPTransport):
    """An httpx transport that connects only where `checked_address` allows."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        address = checked_address(url)
        # The Host header was set from the original URL when the request was built.
        request.url = url.copy_with(host=address)
        request.extensions = {**request.extensions, "sni_hostname": url.host}
        return super().handle_request(request)
