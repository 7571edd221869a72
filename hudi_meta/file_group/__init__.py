"""The read side: the file-system view (file groups and slices), the stateless file-group reader, the merge of a
slice, record keys, and what cleans left."""
