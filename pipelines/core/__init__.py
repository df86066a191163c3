"""What several rooms share: books, rejects, taps, text keys, groups, coders, vectors."""
