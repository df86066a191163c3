"""paramine refresh: a long-lived Delta table kept up to date by the mining graph."""
