"""Every management command of the project explains itself in Korean: its description, each of its own
arguments and Django's common options, and the argparse headings."""

import argparse
import re

import pytest
from django.core.management import get_commands, load_command_class

PROJECT_APPS = {"agent", "conversations", "delivery", "monitoring", "vendors", "demo"}
HANGUL = re.compile(r"[\uac00-\ud7a3]")
COMMANDS = sorted((app, name) for name, app in get_commands().items() if app.split(".")[-1] in PROJECT_APPS)


def test_the_project_has_commands():
    assert {"ingest_faq", "rebuild_faq_index", "import_records", "import_vendors"} <= {name for _, name in COMMANDS}


@pytest.mark.parametrize(("app", "name"), COMMANDS)
def test_help_is_korean(app, name):
    parser = load_command_class(app, name).create_parser("manage.py", name)

    assert HANGUL.search(parser.description or ""), f"{name}: description"
    for action in parser._actions:
        if action.help != argparse.SUPPRESS:
            assert HANGUL.search(action.help or ""), f"{name} {action.option_strings or action.dest}: {action.help!r}"
    text = parser.format_help()
    assert text.startswith("사용법: ") and "옵션:" in text
    assert "show this help message" not in text
