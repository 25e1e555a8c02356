"""Command-line experiments: ``python -m experiments.<name> --help``."""
