"""The stage that pairs: MakePairs, paraphrase pairs inside each pivot's group."""
