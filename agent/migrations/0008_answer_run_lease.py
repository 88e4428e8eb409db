# Runs hold a lease on their question while open (renewed by a heartbeat) and record which worker ran them.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('agent', '0007_faq_search_bigrams'),
    ]

    operations = [
        migrations.AddField(
            model_name='answerrun',
            name='lease_expires_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='리스 만료'),
        ),
        migrations.AddField(
            model_name='answerrun',
            name='worker',
            field=models.CharField(blank=True, max_length=200, verbose_name='작업자'),
        ),
        migrations.AddConstraint(
            model_name='answerrun',
            constraint=models.CheckConstraint(condition=models.Q(('finished_at__isnull', True), ('lease_expires_at__isnull', True), _connector='OR'), name='answer_run_lease_only_while_open'),
        ),
    ]
