from django.apps import AppConfig


class DemoConfig(AppConfig):
    """`manage.py demo`: the `make demo` story drives every app (and the monitor over them), so it is an app of its
    own above all of them, like `config`, not a command of one of them."""

    name = "demo"
    verbose_name = "데모"
