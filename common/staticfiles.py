"""Static files in production: WhiteNoise's compressed files with hashed names."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    # Also rewrite `from "./model.js"` in the board's ES modules to the hashed name, so a page
    # never combines modules of two deploys (and each is cached for good).
    support_js_module_import_aggregation = True
