"""Command-line experiments: ``python -m quadrat_env.experiments.<name> --help``; a study of one game
in its own folder (``zudecken/``)."""
