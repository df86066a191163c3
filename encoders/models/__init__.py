"""Model resolution and the cache: what ``--model`` names, built into a folder a worker loads."""
