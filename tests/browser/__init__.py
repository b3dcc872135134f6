"""Browser tests: a package, so this folder's conftest does not shadow tests/ui's `conftest` module."""
