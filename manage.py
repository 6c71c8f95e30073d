#!/usr/bin/env python
import os
import sys
from pathlib import Path


def development_by_default() -> None:
    """A checkout where `bin/dev` made its development key (.secret_key) runs commands in
    development mode, as the README writes them, unless DEBUG or SECRET_KEY says otherwise:
    production sets SECRET_KEY, so nothing changes there."""
    if "DEBUG" not in os.environ and "SECRET_KEY" not in os.environ:
        if (Path(__file__).resolve().parent / ".secret_key").exists():
            os.environ["DEBUG"] = "1"


if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
    development_by_default()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
