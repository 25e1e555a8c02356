"""What every game shares: the env adapters, the compiled-loop builder, rules verbs, layouts, checks."""
