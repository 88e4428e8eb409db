"""The import contracts of pyproject.toml hold (the app layers, docs/architecture.md): an import that crosses a
layer upwards fails the suite as it fails `make lint`."""

from django.conf import settings
from importlinter.cli import lint_imports


def test_the_import_contracts_are_kept():
    config = str(settings.BASE_DIR / "pyproject.toml")
    assert lint_imports(config_filename=config, no_cache=True, no_logo=True) == 0  # the broken chains are printed
