import factory
from django.utils import timezone

from conversations.models import Message, Question, Room, UploadBatch
from delivery.tests.factories import DeviceFactory


class RoomFactory(factory.django.DjangoModelFactory):
    """A room matched to a fresh vendor; pass `vendor=None, resolution_status=...` for other outcomes."""

    class Meta:
        model = Room

    stable_key = factory.Sequence(lambda n: f"chat-{n}")
    vendor = factory.SubFactory("vendors.tests.factories.VendorFactory")
    name = factory.LazyAttribute(lambda room: f"({room.vendor.code}) {room.vendor.name}" if room.vendor else "방")
    resolution_status = factory.LazyAttribute(
        lambda room: Room.ResolutionStatus.MATCHED if room.vendor else Room.ResolutionStatus.UNRESOLVED
    )
    resolved_name = factory.SelfAttribute("name")
    resolved_at = factory.LazyFunction(timezone.now)


class UploadBatchFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = UploadBatch

    device = factory.SubFactory(DeviceFactory)
    batch_id = factory.Sequence(lambda n: f"batch-{n}")


class MessageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Message

    room = factory.SubFactory(RoomFactory)
    batch = factory.SubFactory(UploadBatchFactory)
    sender_name = "김대리"
    text = "안녕하세요"
    sent_at = factory.LazyFunction(timezone.now)


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Question

    message = factory.SubFactory(MessageFactory, is_tagged=True, text=factory.SelfAttribute("..text"))
    room = factory.SelfAttribute("message.room")
    vendor = factory.SelfAttribute("message.room.vendor")
    text = "이번 달 결제 조건이 어떻게 되나요?"
