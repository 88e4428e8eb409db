"""The base of the project's management commands: `--help` in Korean, Django's own options included."""

import argparse

from django.core.management.base import BaseCommand, DjangoHelpFormatter

# Django adds these to every command with English help; staff read the Korean.
_COMMON_OPTION_HELP = {
    "-h": "이 도움말을 보여 주고 끝냅니다.",
    "--version": "Django 버전을 보여 주고 끝냅니다.",
    "--verbosity": "출력 정도: 0 최소, 1 보통(기본), 2 자세히, 3 매우 자세히",
    "--settings": "설정 모듈 (예: config.settings.local). 없으면 DJANGO_SETTINGS_MODULE 환경 변수를 씁니다.",
    "--pythonpath": "파이썬 경로에 더할 디렉터리",
    "--traceback": "오류가 나면 전체 트레이스백을 보여 줍니다.",
    "--no-color": "출력에 색을 쓰지 않습니다.",
    "--force-color": "터미널이 아니어도 출력에 색을 씁니다.",
    "--skip-checks": "시스템 점검을 건너뜁니다.",
}


class _KoreanHelpFormatter(DjangoHelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, prefix="사용법: " if prefix is None else prefix)


class ProjectCommand(BaseCommand):
    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, formatter_class=_KoreanHelpFormatter, **kwargs)
        # argparse has no public way to retitle its groups or reword actions added by Django.
        parser._positionals.title = "위치 인자"
        parser._optionals.title = "옵션"
        for action in parser._actions:
            for option in action.option_strings:
                if option in _COMMON_OPTION_HELP:
                    action.help = _COMMON_OPTION_HELP[option]
            if isinstance(action, argparse._VersionAction):
                action.help = _COMMON_OPTION_HELP["--version"]
        return parser
