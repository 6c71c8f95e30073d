"""Where uploaded files (task attachments) are kept, from the environment, for
kandev/settings.py's `STORAGES["default"]`. Whatever is missing or malformed stops startup
with an ImproperlyConfigured that names the variable, rather than the first upload failing.

    KANDEV_STORAGE=local (default)   files under MEDIA_ROOT (default: media/ beside db.sqlite3)
    KANDEV_STORAGE=s3                an S3-compatible store (django-storages' S3Storage):
      KANDEV_S3_BUCKET               the bucket (required)
      KANDEV_S3_ENDPOINT_URL         e.g. https://minio.example.com:9000 (default: AWS)
      KANDEV_S3_REGION               e.g. eu-central-1
      KANDEV_S3_ACCESS_KEY_ID, KANDEV_S3_SECRET_ACCESS_KEY
                                     both or neither (neither: boto3's own chain, e.g. an
                                     instance role)
      KANDEV_S3_PREFIX               a folder inside the bucket
      KANDEV_S3_ADDRESSING_STYLE     path or virtual (MinIO and most self-hosted stores: path)

Objects stay private (no ACL, signed URLs only): kandev hands files out itself, after
checking who asks, and never links to the store.
"""

from collections.abc import Mapping
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

LOCAL = "django.core.files.storage.FileSystemStorage"
S3 = "storages.backends.s3.S3Storage"
ADDRESSING_STYLES = ("path", "virtual")


def default_storage(environ: Mapping[str, str], *, media_root: Path) -> dict:
    kind = environ.get("KANDEV_STORAGE", "local").strip().lower() or "local"
    if kind == "local":
        return {"BACKEND": LOCAL, "OPTIONS": {"location": str(media_root)}}
    if kind != "s3":
        raise ImproperlyConfigured(f"KANDEV_STORAGE must be local or s3, not {kind!r}.")
    return {"BACKEND": S3, "OPTIONS": s3_options(environ)}


def s3_options(environ: Mapping[str, str]) -> dict:
    def get(name: str) -> str:
        return environ.get(f"KANDEV_S3_{name}", "").strip()

    if not get("BUCKET"):
        raise ImproperlyConfigured("KANDEV_STORAGE=s3 needs KANDEV_S3_BUCKET.")
    if bool(get("ACCESS_KEY_ID")) != bool(get("SECRET_ACCESS_KEY")):
        raise ImproperlyConfigured("Set both KANDEV_S3_ACCESS_KEY_ID and KANDEV_S3_SECRET_ACCESS_KEY, or neither.")
    style = get("ADDRESSING_STYLE")
    if style and style not in ADDRESSING_STYLES:
        raise ImproperlyConfigured(f"KANDEV_S3_ADDRESSING_STYLE must be path or virtual, not {style!r}.")
    options = {
        "bucket_name": get("BUCKET"),
        "default_acl": None,  # the bucket's own policy: private
        "querystring_auth": True,
        "file_overwrite": False,
    }
    optional = {
        "endpoint_url": get("ENDPOINT_URL"),
        "region_name": get("REGION"),
        "access_key": get("ACCESS_KEY_ID"),
        "secret_key": get("SECRET_ACCESS_KEY"),
        "location": get("PREFIX"),
        "addressing_style": style,
    }
    options.update((name, value) for name, value in optional.items() if value)
    return options
