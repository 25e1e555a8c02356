"""The commands users run, one module each (``quadrat --help`` lists them; ``cli.py`` is that tool);
``common/`` is what they share, ``checks/`` the project's checks of itself, and a study of one game
has its own folder (``zudecken/``)."""
