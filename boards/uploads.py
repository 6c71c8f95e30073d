"""What an uploaded file must be before it becomes an attachment: no larger than
KANDEV_MAX_ATTACHMENT_BYTES (refused while the request is parsed, not after), not a program
or a page a browser would run, and a file name that is only a name."""

import mimetypes
import re
import unicodedata
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadhandler import FileUploadHandler
from rest_framework import status

from common.errors import Invalid, KandevError

NAME_MAX = 255
# Room in a multipart body for its boundaries and part headers beside the file itself.
MULTIPART_SLACK = 64 * 1024
SAFE_DEFAULT_TYPE = "application/octet-stream"
MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")

# Refused by name or by type: programs and scripts a click might run, and markup a browser
# runs scripts in. Downloads are always attachments, but a file saved and opened later is
# out of kandev's hands.
REFUSED_EXTENSIONS = frozenset(
    {
        # programs, installers, scripts
        ".exe", ".dll", ".com", ".bat", ".cmd", ".msi", ".msp", ".scr", ".pif", ".cpl", ".lnk",
        ".ps1", ".psm1", ".vbs", ".vbe", ".js", ".jse", ".mjs", ".wsf", ".wsh", ".hta", ".reg",
        ".jar", ".apk", ".app", ".sh", ".bash", ".command", ".appref-ms", ".application",
        # markup that runs scripts when opened
        ".html", ".htm", ".xhtml", ".xht", ".shtml", ".mht", ".mhtml", ".svg", ".svgz", ".xsl", ".xslt",
    }
)  # fmt: skip
REFUSED_TYPES = frozenset(
    {
        "text/html", "application/xhtml+xml", "image/svg+xml", "text/xsl", "application/xslt+xml",
        "text/javascript", "application/javascript", "application/x-javascript", "application/ecmascript",
        "application/x-msdownload", "application/x-msdos-program", "application/x-msi",
        "application/vnd.microsoft.portable-executable", "application/x-executable",
        "application/x-sh", "application/x-shellscript", "application/java-archive", "application/hta",
    }
)  # fmt: skip
# How programs begin (Windows PE, ELF, Mach-O), whatever they are named.
PROGRAM_MAGIC = (b"MZ", b"\x7fELF", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")
REFUSED = "Programs, scripts and web pages (HTML, SVG) cannot be attached; put them in an archive (.zip)."


class AttachmentTooLarge(KandevError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "too_large"

    def __init__(self):
        limit = settings.KANDEV_MAX_ATTACHMENT_BYTES
        super().__init__(f"A file may have at most {limit} bytes ({limit / 2**20:.0f} MB).", limit=limit)


class BoundedUpload(FileUploadHandler):
    """First in the chain of upload handlers: passes each chunk on to Django's own handlers
    (memory, then a temporary file) and stops the parse as soon as the body or its files
    pass the bound, so an oversized upload is never read to its end."""

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self.received = 0
        if content_length > settings.KANDEV_MAX_ATTACHMENT_BYTES + MULTIPART_SLACK:
            raise AttachmentTooLarge()

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)  # every file of the body: several small ones add up too
        if self.received > settings.KANDEV_MAX_ATTACHMENT_BYTES:
            raise AttachmentTooLarge()
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handler makes the file


def clean_file_name(raw: str) -> str:
    """The uploader's file name as people will read it: its last path part, without control or
    invisible formatting characters (a right-to-left override makes "gpj.exe" read as
    "exe.jpg"), spaces collapsed, no leading or trailing dots, at most NAME_MAX characters
    with its extension kept. Never used as a path: the storage's name is kandev's own."""
    name = unicodedata.normalize("NFC", raw or "")
    name = re.split(r"[/\\]", name)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = " ".join(name.split()).strip(" .")
    if len(name) > NAME_MAX:
        suffix = PurePosixPath(name).suffix
        suffix = suffix if len(suffix) <= 16 else ""
        name = name[: NAME_MAX - len(suffix)].rstrip(" .") + suffix
    return name or "file"


def checked_type(name: str, declared: str | None, head: bytes) -> str:
    """The content type kept for a file (and sent with it): what its name says, else what the
    uploader declared, else `application/octet-stream`. A 400 for what REFUSED_* name or
    what begins like a program."""
    declared = (declared or "").split(";")[0].strip().lower()
    declared = declared if MEDIA_TYPE.fullmatch(declared) else ""
    guessed = (mimetypes.guess_type(name, strict=False)[0] or "").lower()
    extension = PurePosixPath(name).suffix.lower()
    if extension in REFUSED_EXTENSIONS or {declared, guessed} & REFUSED_TYPES or head.startswith(PROGRAM_MAGIC):
        raise Invalid({"file": [REFUSED]})
    return guessed or declared or SAFE_DEFAULT_TYPE
