"""Without SECRET_KEY, development (DEBUG) uses a key made once per checkout, so the demo
password and session signatures differ from install to install (kandev/settings.py)."""

from kandev.settings import development_secret_key


def test_each_install_makes_its_own_key_and_keeps_it(tmp_path):
    one, other = tmp_path / "one" / ".secret_key", tmp_path / "other" / ".secret_key"
    one.parent.mkdir()
    other.parent.mkdir()

    first = development_secret_key(one)

    assert len(first) >= 50
    assert development_secret_key(one) == first
    assert development_secret_key(other) != first
    assert (one.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in one.parent.iterdir()] == [".secret_key"]
