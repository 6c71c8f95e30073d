"""Secrets kandev must use again later (webhook secrets, GitHub tokens): stored encrypted.

The key is derived from SECRET_KEY (HKDF-SHA256), so a database dump alone does not reveal
them; with DEBUG off kandev refuses to start on the public development key (settings), so
this key never derives from it in production. SECRET_KEY_FALLBACKS keep older secrets
readable after a key rotation.
"""

import base64
import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

from common.errors import KandevError


class SecretUnreadable(KandevError):
    """Stored with another SECRET_KEY: the owner must set it again."""

    status_code = 503
    code = "secret_unreadable"


def _fernet_key(secret_key: str) -> bytes:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"kandev.integrations").derive(
        secret_key.encode()
    )
    return base64.urlsafe_b64encode(derived)


@functools.cache
def _fernet(secret_key: str, fallbacks: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(key)) for key in (secret_key, *fallbacks)])


def _current() -> MultiFernet:
    return _fernet(settings.SECRET_KEY, tuple(getattr(settings, "SECRET_KEY_FALLBACKS", ())))


def encrypt(plain: str) -> str:
    return _current().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SecretUnreadable("A stored secret cannot be decrypted with the current SECRET_KEY.") from None
