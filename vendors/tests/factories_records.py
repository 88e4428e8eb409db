"""Factories for brands, products and vendor records. Rows get their derived search text as the services write it."""

import factory

from vendors.models import Brand, Product, VendorRecord
from vendors.records import product_search_refresh, record_search_refresh


class BrandFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Brand
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"브랜드{n}")
    aliases = factory.LazyFunction(list)


class ProductFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Product

    vendor = factory.SubFactory("vendors.tests.factories.VendorFactory")
    brand = factory.SubFactory(BrandFactory)
    name = factory.Sequence(lambda n: f"상품 {n}")
    sku = factory.Sequence(lambda n: f"SKU-{n:05d}")
    unit_price = 12500

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        product = model_class(*args, **kwargs)
        product_search_refresh(product, product.brand)
        product.save()
        return product


class VendorRecordFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = VendorRecord

    vendor = factory.SubFactory("vendors.tests.factories.VendorFactory")
    kind = VendorRecord.Kind.CONTRACT
    title = factory.Sequence(lambda n: f"거래 조건 {n}")
    body = "월말 마감, 익월 10일 현금 결제."
    values = factory.LazyFunction(dict)
    source = "test"

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        record = model_class(*args, **kwargs)
        record_search_refresh(record)
        record.save()
        return record
