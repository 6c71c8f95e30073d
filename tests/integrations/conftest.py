import pytest


@pytest.fixture(autouse=True)
def outbound_to_the_fake_github(settings):
    """The fake GitHub listens on plain http on loopback, which kandev refuses by default."""
    settings.KANDEV_OUTBOUND_ALLOW = ["127.0.0.1"]
