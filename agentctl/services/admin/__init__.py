"""Looking after an installation: the audit of the store and the bundled demo."""
