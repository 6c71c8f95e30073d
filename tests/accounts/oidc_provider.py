"""A small OpenID Connect provider on loopback for the sign-in tests: a real HTTP server with
a discovery document, an authorization endpoint that approves at once (for the person the
test chose), a token endpoint that checks the client's secret and PKCE verifier and issues
an RS256-signed ID token, a userinfo endpoint and a JWKS."""

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


class Provider:
    def __init__(self, *, client_id: str, client_secret: str):
        self.client_id, self.client_secret = client_id, client_secret
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = secrets.token_hex(4)
        self.person: dict = {}  # the claims of whoever signs in next
        self.audience: str | None = None  # None: the client; a test may set another
        self.grants: dict[str, dict] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def discovery(self) -> dict:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "jwks_uri": f"{self.url}/jwks",
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def jwks(self) -> dict:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "alg": "RS256", "use": "sig"}]}

    def authorize(self, query: dict) -> str:
        code = secrets.token_urlsafe(16)
        self.grants[code] = {**query, "person": dict(self.person)}
        back = {"code": code, "state": query["state"]}
        return f"{query['redirect_uri']}?{urlencode(back)}"

    def token(self, form: dict) -> tuple[int, dict]:
        grant = self.grants.pop(form.get("code", ""), None)
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return 401, {"error": "invalid_client"}
        if grant is None or form.get("redirect_uri") != grant["redirect_uri"]:
            return 400, {"error": "invalid_grant"}
        challenge = base64.urlsafe_b64encode(hashlib.sha256(form["code_verifier"].encode()).digest()).rstrip(b"=")
        if challenge.decode() != grant["code_challenge"]:
            return 400, {"error": "invalid_grant", "error_description": "PKCE"}
        now = int(time.time())
        person = grant["person"]
        claims = {
            "iss": self.url,
            "aud": self.audience or self.client_id,
            "iat": now,
            "exp": now + 300,
            "nonce": grant["nonce"],
            **person,
        }
        id_token = jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.kid})
        access = secrets.token_urlsafe(16)
        self.grants[f"access:{access}"] = person
        return 200, {"access_token": access, "id_token": id_token, "token_type": "Bearer", "expires_in": 300}

    def handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status: int, body: dict | None = None, location: str | None = None):
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                data = json.dumps(body or {}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                if parts.path == "/.well-known/openid-configuration":
                    self.answer(200, provider.discovery())
                elif parts.path == "/jwks":
                    self.answer(200, provider.jwks())
                elif parts.path == "/authorize":
                    self.answer(302, location=provider.authorize(query))
                elif parts.path == "/userinfo":
                    access = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    person = provider.grants.get(f"access:{access}")
                    self.answer(200, person) if person else self.answer(401, {"error": "invalid_token"})
                else:
                    self.answer(404)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if urlsplit(self.path).path == "/token":
                    self.answer(*provider.token(form))
                else:
                    self.answer(404)

        return Handler
