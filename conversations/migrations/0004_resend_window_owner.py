from django.db import migrations, models


class Migration(migrations.Migration):
    """Resend window entries name the upload that stored a key by device and batch id (a batch id is unique per
    device only), and carry when they were last written so entries past the key TTL can be dropped."""

    dependencies = [
        ('conversations', '0003_ingest_quarantine'),
    ]

    operations = [
        migrations.RenameField(model_name='resendwindowentry', old_name='batch_id', new_name='owner'),
        migrations.AlterField(
            model_name='resendwindowentry',
            name='owner',
            field=models.CharField(max_length=130),
        ),
        migrations.AddField(
            model_name='resendwindowentry',
            name='updated_at',
            field=models.DateTimeField(auto_now=True),
        ),
        migrations.AddIndex(
            model_name='resendwindowentry',
            index=models.Index(fields=['updated_at'], name='resend_window_updated'),
        ),
    ]
