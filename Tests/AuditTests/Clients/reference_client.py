# Reference clients for `ipdirect audit`: curl and Python, each used rightly and wrongly, run
# against one audit's setup (its JSON line, in a file) and every trap it lists. Loopback only.
#
#   python3 reference_client.py MODE SETUP.json
#
# MODE is one of:
#   curl-right       curl --resolve NAME:PORT:IP --cacert CA, asking HTTPDNS before every request,
#                    falling back to the system DNS, following redirects itself, a cookie jar.
#   curl-wrong       curl -k with the IP in the URL and -H "Host: NAME", -d @file, -L, an IPv4
#                    address kept forever (IPv6 answers ignored), no fallback when HTTPDNS fails.
#   python-right     http.client with an adapter that connects to the IP and keeps the name for
#                    SNI and the certificate check, answers cached for their TTL, system DNS fallback.
#   python-insecure  the same adapter with verification off, following redirects to the first IP,
#                    cookies kept by IP.
#
# For the proxy trap the setup's `proxy` is the proxy the user configured: curl-right and
# python-right skip IP-direct and send the request through it by name (CONNECT NAME:PORT);
# curl-wrong goes IP-direct around it, python-insecure IP-direct through it (CONNECT IP:PORT).
import http.client
import json
import random
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit


class HTTPDNSFailed(Exception):
    pass


def split(url):
    parts = urlsplit(url)
    return parts.hostname, parts.port or 443, parts.path or "/"


def httpdns(setup, name):
    """The lab's plain answer: (addresses, ttl); HTTPDNSFailed when the service errs."""
    url = setup["httpdns"]["ip"].replace("NAME", name)
    try:
        # Two seconds, as the SDKs wait a few: the fallback-timeout trap holds its answer longer.
        with urllib.request.urlopen(url, timeout=2) as answer:
            body = answer.read().decode()
            ttl = 60
            for part in (answer.headers.get("Cache-Control") or "").split(","):
                if part.strip().startswith("max-age="):
                    ttl = int(part.strip()[8:])
            return [line for line in body.splitlines() if line], ttl
    except (urllib.error.URLError, OSError) as error:
        raise HTTPDNSFailed(str(error))


def system_dns(setup, name):
    """An A query to the app's system DNS (the lab's DNS server): (addresses, ttl)."""
    host, port = setup["dns"].rsplit(":", 1)
    ident = random.randrange(65536)
    question = b"".join(bytes([len(label)]) + label.encode() for label in name.split(".")) + b"\0"
    packet = struct.pack(">HHHHHH", ident, 0x0100, 1, 0, 0, 0) + question + struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5)
        sock.sendto(packet, (host, int(port)))
        reply, _ = sock.recvfrom(4096)
    count = struct.unpack(">H", reply[6:8])[0]
    offset = 12 + len(question) + 4
    addresses, ttl = [], 60
    for _ in range(count):
        if reply[offset] & 0xC0 == 0xC0:
            offset += 2
        else:
            while reply[offset] != 0:
                offset += reply[offset] + 1
            offset += 1
        kind, _, record_ttl, length = struct.unpack(">HHIH", reply[offset:offset + 10])
        offset += 10
        if kind == 1:
            addresses.append(socket.inet_ntoa(reply[offset:offset + 4]))
            ttl = record_ttl
        offset += length
    return addresses, ttl


class Resolver:
    """HTTPDNS first, the system DNS when it fails; answers kept for their TTL unless `every`."""

    def __init__(self, setup, every=False, fallback=True, forever=False, ipv4_only=False):
        self.setup, self.every, self.fallback, self.forever = setup, every, fallback, forever
        self.ipv4_only = ipv4_only
        self.cache = {}

    def ip(self, name):
        kept = self.cache.get(name)
        if kept and not self.every and (self.forever or kept[1] > time.monotonic()):
            return kept[0]
        try:
            addresses, ttl = httpdns(self.setup, name)
        except HTTPDNSFailed:
            if not self.fallback:
                raise
            addresses, ttl = system_dns(self.setup, name)
        if self.ipv4_only:
            addresses = [address for address in addresses if ":" not in address]
            if not addresses:
                raise HTTPDNSFailed(f"no IPv4 address for {name}")
        self.cache[name] = (addresses[0], time.monotonic() + ttl)
        return addresses[0]


# curl ------------------------------------------------------------------------------------------


class Curl:
    def __init__(self, setup, right):
        self.setup, self.right = setup, right
        self.resolver = Resolver(setup, every=right, fallback=right, forever=not right, ipv4_only=not right)
        self.jar = tempfile.mktemp(prefix="audit-cookies-")

    def run(self, url, *extra, follow=False, output="/dev/null"):
        """One request; returns (status, redirect URL); None when curl failed."""
        name, port, path = split(url)
        try:
            ip = self.resolver.ip(name)
        except HTTPDNSFailed:
            return None
        literal = f"[{ip}]" if ":" in ip else ip
        if self.right:
            args = ["--cacert", self.setup["caPEM"], "--resolve", f"{name}:{port}:{literal}", url]
        else:
            args = ["-k", "-H", f"Host: {name}", f"https://{literal}:{port}{path}"] + (["-L"] if follow else [])
        done = subprocess.run(
            ["curl", "-sS", "-o", output, "-w", "%{http_code} %{redirect_url}", "--max-time", "5",
             "-b", self.jar, "-c", self.jar, *extra, *args],
            capture_output=True, text=True)
        if done.returncode != 0:
            return None
        status, _, location = done.stdout.partition(" ")
        return int(status), location.strip()

    def body(self, url):
        target = tempfile.mktemp(prefix="audit-body-")
        self.run(url.rstrip("/") + "/body", output=target)
        return target

    def get(self, url):
        self.run(url)

    def post_body(self, url):
        body = self.body(url)
        self.run(url, "--data-binary" if self.right else "-d", "@" + body)

    def proxied(self, url, proxy):
        if self.right:
            subprocess.run(
                ["curl", "-sS", "-o", "/dev/null", "--max-time", "5", "--proxy", proxy,
                 "--cacert", self.setup["caPEM"], url], capture_output=True)
        else:
            self.get(url)

    def redirect(self, url):
        answer = self.run(url, follow=True)
        if self.right and answer and answer[1]:
            self.run(answer[1])


# Python ----------------------------------------------------------------------------------------


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to `ip`; the TLS layer (SNI, the name check) and Host keep the name."""

    def __init__(self, name, port, ip, context):
        super().__init__(name, port, context=context, timeout=5)
        self.ip = ip

    def connect(self):
        sock = socket.create_connection((self.ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


class Python:
    def __init__(self, setup, verify):
        self.setup, self.verify = setup, verify
        self.resolver = Resolver(setup)
        self.cookies = {}
        if verify:
            self.context = ssl.create_default_context(cafile=setup["caPEM"])
        else:
            self.context = ssl.create_default_context()
            self.context.check_hostname = False
            self.context.verify_mode = ssl.CERT_NONE

    def request(self, url, method="GET", body=None, ip=None):
        """One request; returns (status, headers, body), None on a failure."""
        name, port, path = split(url)
        try:
            ip = ip or self.resolver.ip(name)
            connection = PinnedHTTPSConnection(name, port, ip, self.context)
            # Done rightly cookies belong to the name; the insecure client keeps them by IP.
            jar = name if self.verify else ip
            headers = {"Cookie": self.cookies[jar]} if jar in self.cookies else {}
            connection.request(method, path, body=body, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            if answer.getheader("Set-Cookie"):
                self.cookies[jar] = answer.getheader("Set-Cookie").split(";")[0]
            connection.close()
            return answer.status, answer, data
        except (OSError, ssl.SSLError, HTTPDNSFailed):
            return None

    def get(self, url):
        self.request(url)

    def proxied(self, url, proxy):
        name, port, path = split(url)
        proxy_host, proxy_port, _ = split(proxy)
        try:
            # Done rightly the proxy is asked for the name; the insecure client asks it for the IP.
            target = name if self.verify else self.resolver.ip(name)
            connection = http.client.HTTPSConnection(proxy_host, proxy_port, context=self.context, timeout=5)
            connection.set_tunnel(target, port, headers={"Host": f"{name}:{port}"})
            connection.request("GET", path)
            connection.getresponse().read()
            connection.close()
        except (OSError, ssl.SSLError, HTTPDNSFailed):
            pass

    def post_body(self, url):
        got = self.request(url.rstrip("/") + "/body")
        if got:
            self.request(url, "POST", got[2])

    def redirect(self, url):
        got = self.request(url)
        if got and got[0] in (301, 302, 303, 307, 308):
            location = got[1].getheader("Location")
            # Done rightly the redirect's host is resolved again; the insecure client also
            # keeps the first connection's IP, a mistake the audit must name.
            ip = None if self.verify else self.resolver.ip(split(url)[0])
            self.request(location, ip=ip)


def exercise(client, kind, urls, proxy):
    """What every client does with one trap, as its `asks` says (client.get, post_body, redirect)."""
    url = urls[0]
    if kind == "post-body":
        client.post_body(url)
    elif kind == "redirect":
        client.redirect(url)
    elif kind in ("fallback", "fallback-timeout"):
        client.get(url)
        time.sleep(2.5)
        client.get(url)
    elif kind == "ttl":
        client.get(url)
        client.get(url)
        time.sleep(4)
        client.get(url)
    elif kind == "cookie":
        client.get(url)
        client.get(url)
        client.get(urls[1])
    elif kind == "proxy":
        client.proxied(url, proxy)
    elif kind == "family":
        client.get(url)
        client.get(urls[1])
    else:
        client.get(url)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    with open(path) as file:
        setup = json.load(file)
    client = {
        "curl-right": lambda: Curl(setup, right=True),
        "curl-wrong": lambda: Curl(setup, right=False),
        "python-right": lambda: Python(setup, verify=True),
        "python-insecure": lambda: Python(setup, verify=False),
    }[mode]()
    for trap in setup["traps"]:
        exercise(client, trap["trap"], trap["urls"], setup["proxy"])


if __name__ == "__main__":
    main()
