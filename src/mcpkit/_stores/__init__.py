"""Store interfaces and their in-process implementations: what a shared backend replaces."""
