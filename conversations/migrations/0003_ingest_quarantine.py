import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('conversations', '0002_question_created_index'),
        ('delivery', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='uploadbatch',
            name='rejected_count',
            field=models.PositiveIntegerField(default=0, verbose_name='격리 수'),
        ),
        migrations.AddField(
            model_name='uploadbatch',
            name='cleaned_count',
            field=models.PositiveIntegerField(default=0, verbose_name='정리 후 저장 수'),
        ),
        migrations.AddField(
            model_name='message',
            name='cleaning',
            field=models.JSONField(blank=True, default=dict, verbose_name='저장 전 정리'),
        ),
        migrations.CreateModel(
            name='QuarantinedMessage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('room_key', models.TextField(blank=True, verbose_name='받은 방 키')),
                ('index', models.PositiveIntegerField(verbose_name='배치 안 순번')),
                ('reason', models.CharField(choices=[('invalid', '형식 오류'), ('unstorable_identifier', '저장할 수 없는 식별자'), ('time_out_of_range', '허용 범위 밖의 시각')], max_length=32, verbose_name='사유')),
                ('errors', models.JSONField(blank=True, default=list, verbose_name='오류')),
                ('raw', models.TextField(verbose_name='받은 그대로 (JSON)')),
                ('received_at', models.DateTimeField(auto_now_add=True, verbose_name='받은 시각')),
                ('batch', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='quarantined_messages', to='conversations.uploadbatch', verbose_name='업로드 배치')),
                ('device', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='delivery.device', verbose_name='기기')),
                ('room', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='quarantined_messages', to='conversations.room', verbose_name='대화방')),
            ],
            options={
                'verbose_name': '격리된 메시지',
                'verbose_name_plural': '격리된 메시지',
                'ordering': ['-received_at', 'batch_id', 'index'],
                'constraints': [models.UniqueConstraint(fields=('batch', 'index'), name='quarantined_message_unique_index_per_batch')],
            },
        ),
    ]
