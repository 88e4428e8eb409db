import factory

from vendors.models import Vendor


class VendorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Vendor
        django_get_or_create = ("code",)

    code = factory.Sequence(lambda n: str(9000 + n))
    name = factory.Sequence(lambda n: f"테스트상사{n}")
    aliases = factory.LazyFunction(list)
    is_active = True
