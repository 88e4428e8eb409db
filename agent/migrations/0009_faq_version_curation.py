"""FAQ versions remember their question's key and whether a file row or curation made them, so a batch ingest
can tell that staff edited, renamed or deleted a question after the file row was written. Existing versions:
the key from the snapshot's question; ingest and demo loads were the only writers acting as "system" with
created/updated, everything else (staff edits, renames, deletions) is curation."""

from django.db import migrations, models

from agent.knowledge.faq_services import question_key

_BATCH = 1000


def fill_keys_and_origins(apps, schema_editor):
    FaqVersion = apps.get_model("agent", "FaqVersion")
    batch = []
    for version in FaqVersion.objects.only("id", "snapshot", "reason", "actor").iterator(chunk_size=_BATCH):
        version.question_key = question_key(str((version.snapshot or {}).get("question", "")))
        file_made = version.actor == "system" and version.reason in ("created", "updated")
        version.origin = "file" if file_made else "curation"
        batch.append(version)
        if len(batch) == _BATCH:
            FaqVersion.objects.bulk_update(batch, ["question_key", "origin"])
            batch = []
    FaqVersion.objects.bulk_update(batch, ["question_key", "origin"])


class Migration(migrations.Migration):
    dependencies = [("agent", "0008_answer_run_lease")]

    operations = [
        migrations.AddField(
            model_name="faqversion",
            name="question_key",
            field=models.CharField(blank=True, editable=False, max_length=64, verbose_name="질문 키"),
        ),
        migrations.AddField(
            model_name="faqversion",
            name="origin",
            field=models.CharField(
                choices=[("file", "파일 적재"), ("curation", "큐레이션(직원 변경)")],
                default="curation",
                max_length=16,
                verbose_name="변경 주체",
            ),
        ),
        migrations.RunPython(fill_keys_and_origins, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="faqversion",
            index=models.Index(fields=["question_key", "origin", "-created_at"], name="faqversion_question_key"),
        ),
    ]
