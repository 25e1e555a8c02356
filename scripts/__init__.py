"""Research and maintenance scripts, run from a clone of the repository (not installed with the wheel)."""
