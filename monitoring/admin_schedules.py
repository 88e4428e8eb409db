"""django-celery-beat's schedule pages with Korean labels where the package's labels cannot be translated (plain
strings and properties; its translatable strings are in the project catalogue under `locale/`)."""

from django.contrib import admin
from django_celery_beat import admin as beat_admin
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, IntervalSchedule, PeriodicTask, SolarSchedule


class PeriodicTaskInline(beat_admin.PeriodicTaskInline):
    fields = ("name", "task_name", "args", "kwargs")
    readonly_fields = fields

    @admin.display(description="작업 이름")
    def task_name(self, task):
        return task.task


class PeriodicTaskAdmin(beat_admin.PeriodicTaskAdmin):
    @admin.display(description="크론 설명")
    def crontab_translation(self, task):
        return task.crontab.human_readable if task.crontab else "-"


class _ScheduleAdmin(admin.ModelAdmin):
    inlines = [PeriodicTaskInline]


class ClockedScheduleAdmin(_ScheduleAdmin, beat_admin.ClockedScheduleAdmin):
    pass


class CrontabScheduleAdmin(_ScheduleAdmin, beat_admin.CrontabScheduleAdmin):
    list_display = ("__str__", "readable")
    fields = ("readable", "minute", "hour", "day_of_month", "month_of_year", "day_of_week", "timezone")
    readonly_fields = ("readable",)

    @admin.display(description="읽기 쉬운 표현")
    def readable(self, schedule):
        return schedule.human_readable


class SolarScheduleAdmin(_ScheduleAdmin, beat_admin.SolarScheduleAdmin):
    pass


class IntervalScheduleAdmin(_ScheduleAdmin, beat_admin.IntervalScheduleAdmin):
    pass


for model, model_admin in (
    (PeriodicTask, PeriodicTaskAdmin),
    (ClockedSchedule, ClockedScheduleAdmin),
    (CrontabSchedule, CrontabScheduleAdmin),
    (SolarSchedule, SolarScheduleAdmin),
    (IntervalSchedule, IntervalScheduleAdmin),
):
    if admin.site.is_registered(model):
        admin.site.unregister(model)
    admin.site.register(model, model_admin)
