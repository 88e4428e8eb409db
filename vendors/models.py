from django.db import models


class Vendor(models.Model):
    """A B2B counterpart. `code` is the number staff put in room names, e.g. `(1234) 대한물산`."""

    code = models.CharField("벤더 코드", max_length=32, unique=True)
    name = models.CharField("벤더명", max_length=200)
    aliases = models.JSONField("별칭", default=list, blank=True)
    is_active = models.BooleanField("활성", default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]
        verbose_name = "벤더"
        verbose_name_plural = "벤더"

    def __str__(self):
        return f"({self.code}) {self.name}"

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]
