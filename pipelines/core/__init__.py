"""What the stages share: accounting, text keys and counts, vectors, the cuts' maths."""
