"""The merge of a file slice: the rules (`rules`: which of two versions of a record key wins) and the Arrow merge
of a slice's records by them (`records`)."""
