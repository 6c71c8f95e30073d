"""HTTP formats of portable workflow documents: YAML and JSON bodies in, YAML out.

Both parsers read at most KANDEV_MAX_IMPORT_BYTES (413 beyond) and leave the parsing, with its
guards against alias bombs and deep nesting, to workflows.portable.
"""

import yaml
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer

from common.validation import whole_number
from workflows.portable import DocumentTooLarge, max_document_bytes, parse_document


def read_limited(stream, parser_context) -> bytes:
    request = parser_context["request"]
    limit = max_document_bytes()
    declared = whole_number(request.META.get("CONTENT_LENGTH") or "")
    if declared is not None and declared > limit:
        raise DocumentTooLarge()
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise DocumentTooLarge()
    return raw


class YAMLDocumentParser(BaseParser):
    media_type = "application/yaml"

    def parse(self, stream, media_type=None, parser_context=None):
        return parse_document(read_limited(stream, parser_context), fmt="yaml")


class TextYAMLDocumentParser(YAMLDocumentParser):
    media_type = "text/yaml"


class XYAMLDocumentParser(YAMLDocumentParser):
    media_type = "application/x-yaml"  # what many clients (and older tools) send


class JSONDocumentParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        return parse_document(read_limited(stream, parser_context), fmt="json")


DOCUMENT_PARSERS = [YAMLDocumentParser, XYAMLDocumentParser, TextYAMLDocumentParser, JSONDocumentParser]


def dump_yaml(document) -> str:
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, default_flow_style=False)


class YAMLRenderer(BaseRenderer):
    media_type = "application/yaml"
    format = "yaml"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return dump_yaml(data).encode("utf-8")
