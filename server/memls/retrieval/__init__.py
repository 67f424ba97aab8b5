"""Query pipeline: hard filters on every source -> BM25 + vector candidates -> fusion ->
type weight, decay, feedback -> cross-encoder re-score of the head -> dedup -> results."""
